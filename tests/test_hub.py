"""Auditing straight from the Hub: the real huggingface_hub client against tests/hub_server.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.extract.config_count import count_from_config
from cardaudit.sources import AuditRequest, acquire, local_evidence
from cardaudit.sources.hub import HubRef, parse_hub_target
from hub_repos import (
    card,
    compressed_tensors_moe,
    fp8_moe,
    moe_config,
    moe_tensors,
    nvfp4_moe,
    packed_int_moe,
    per_expert_tensors,
    publish_model,
    sharded_files,
)
from hub_server import FakeHub

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def audit_json(*args: str) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["audit", *args, "-f", "json", "--fail-on", "never"])
    data = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, data, result.stderr


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("org/name", HubRef("org/name")),
        ("hf://org/name", HubRef("org/name")),
        ("hf://org/name@v1.0", HubRef("org/name", "v1.0")),
        ("https://huggingface.co/org/name", HubRef("org/name")),
        ("https://huggingface.co/org/name/tree/dev", HubRef("org/name", "dev")),
        ("https://huggingface.co/org/Name.v2/blob/main/README.md", HubRef("org/Name.v2", "main")),
        ("https://github.com/org/name", None),
        ("a/b/c", None),
        ("just-a-name", None),
    ],
)
def test_target_parsing(text: str, expected: HubRef | None) -> None:
    assert parse_hub_target(text) == expected


def test_an_existing_local_path_wins(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    publish_model(hub, "org/model", tmp_path / "shards")
    local = tmp_path / "org" / "model"
    local.mkdir(parents=True)
    (local / "README.md").write_text(card())
    monkeypatch.chdir(tmp_path)
    evidence = acquire(AuditRequest(target="org/model"))
    assert evidence.target.kind == "local"
    assert hub.log == []


# --------------------------------------------------------------------------- evidence


def test_hub_evidence_matches_local_evidence(hub: FakeHub, tmp_path: Path) -> None:
    sha = publish_model(hub, "org/model", tmp_path / "shards")
    evidence = acquire(AuditRequest(target="hf://org/model", code_discovery=False))

    assert evidence.target.to_json() == {
        "kind": "hub",
        "id": "org/model",
        "path": None,
        "revision": sha,
    }
    assert evidence.repo.kind == "hub" and evidence.repo.revision == sha
    sizes = {entry.path: (entry.size, entry.lfs) for entry in evidence.repo.files}
    assert sizes["pytorch_model.bin"][1] is True
    assert sizes["pytorch_model.bin"][0] > 2**30
    assert sizes["README.md"] == (len(card()), False)
    # Only the small files the checks need were downloaded.
    assert set(evidence.repo.texts) == {
        "README.md",
        "LICENSE",
        "config.json",
        "generation_config.json",
        "tokenizer_config.json",
        "model.safetensors.index.json",
    }
    assert evidence.card is not None and evidence.card.metadata["license"] == "apache-2.0"
    assert evidence.config == {"model_type": "qwen3_moe", "num_hidden_layers": 2}
    # The same SafetensorsHeader evidence as LocalSource reading the same files.
    local = tmp_path / "local"
    local.mkdir()
    for path, item in hub.repos["org/model"].commits[sha].files.items():
        target = local / path
        if item.disk is not None:  # a header and a hole: copy it sparse
            with open(item.disk, "rb") as source, open(target, "wb") as copy:
                copy.write(source.read(1 << 20))
                copy.truncate(item.size)
        else:
            target.write_bytes(item.data or b"")
    expected = [h for h in local_evidence(str(local)).safetensors if h.path.startswith("model-")]
    assert list(evidence.safetensors) == expected
    assert sum(len(h.tensors) for h in evidence.safetensors) == len(
        moe_tensors(layers=2, hidden=64, experts=4, expert_dim=32, vocab=128)
    )
    # Files land in the huggingface_hub cache named by HF_HUB_CACHE.
    cached = Path(evidence.repo.path or "")
    assert cached.is_relative_to(tmp_path / "hf-cache" / "models--org--model" / "snapshots" / sha)


def test_no_weight_bytes_beyond_headers(hub: FakeHub, tmp_path: Path) -> None:
    tensors = moe_tensors(layers=8, hidden=2048, experts=64, expert_dim=768, vocab=32000)
    files = sharded_files(tmp_path / "big", tensors, 4)
    hub.commit("org/big", {"README.md": card(), **files})
    evidence = acquire(AuditRequest(target="org/big", code_discovery=False))
    assert not [h for h in evidence.safetensors if h.error]

    header_bytes = {}
    for name, path in files.items():
        if isinstance(path, Path):
            with open(path, "rb") as stream:
                header_bytes[name] = 8 + int.from_bytes(stream.read(8), "little")
    weights = [e for e in hub.log if e.method == "GET" and e.path.endswith(".safetensors")]
    assert weights and all(e.range for e in weights)
    served = {}
    for entry in weights:
        if entry.host == "cdn":
            name = entry.path.rsplit("/", 1)[-1]
            served[name] = served.get(name, 0) + entry.body_bytes
    assert set(served) == set(header_bytes)
    # Exactly the headers: not one byte of tensor data.
    assert served == header_bytes
    assert not hub.requests("GET", "pytorch_model.bin")
    assert not [e for e in hub.log if e.status == 403]
    assert hub.body_bytes() < 2_000_000


def test_corrupt_header_is_a_finding_not_a_crash(hub: FakeHub, tmp_path: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes((10**12).to_bytes(8, "little") + b"{}")
    hub.commit("org/bad", {"README.md": card(), "model.safetensors": bad})
    code, data, _ = audit_json("org/bad", "--no-code-discovery")
    assert code == 0
    hits = [f for f in data["findings"] if f["rule_id"] == "SRC003"]
    assert hits and hits[0]["location"]["path"] == "model.safetensors"
    assert "header length" in hits[0]["message"]


def test_revision_is_resolved_once_and_used_everywhere(hub: FakeHub, tmp_path: Path) -> None:
    first = publish_model(hub, "org/model", tmp_path / "a", readme=card(body="First.\n"))
    hub.tag("org/model", "v1.0", first)
    latest = hub.commit("org/model", {"README.md": card(body="Second.\n")})
    code, data, _ = audit_json("org/model", "--revision", "v1.0", "--no-code-discovery")
    assert code == 0
    assert data["target"]["revision"] == first != latest
    later = hub.log[1:]
    assert later and all(first in e.path for e in later if e.host == "hub")
    assert "v1.0" in hub.log[0].path


def test_url_with_tree_revision(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/model", tmp_path / "a")
    dev = hub.commit("org/model", {"NOTICE": "Made by org.\n"}, branch="dev")
    url = f"{hub.endpoint}/org/model/tree/dev"
    evidence = acquire(AuditRequest(target=url, code_discovery=False))
    assert evidence.target.revision == dev
    assert "NOTICE" in evidence.repo.texts


def test_card_history_from_the_last_commits(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    from datetime import UTC, datetime

    from cardaudit.sources import hub_history

    dates = [datetime(2026, month, 1, tzinfo=UTC) for month in (1, 2, 3, 4)]
    publish_model(hub, "org/model", tmp_path / "a", readme=card(body="v0\n"), date=dates[0])
    hub.commit("org/model", {"README.md": card(body="Code coming soon.\n")}, date=dates[1])
    hub.commit("org/model", {"config.json": "{}"}, date=dates[2])
    head = hub.commit("org/model", {"README.md": card(body="Code released.\n")}, date=dates[3])

    evidence = acquire(AuditRequest(target="org/model", code_discovery=False))
    versions = evidence.repo.history["README.md"]
    assert [v.text.splitlines()[-1] for v in versions] == [
        "v0",
        "Code coming soon.",
        "Code released.",
    ]
    assert [v.date for v in versions] == [dates[0], dates[1], dates[3]]
    assert versions[-1].sha == head

    monkeypatch.setattr(hub_history, "MAX_VERSIONS", 2)
    bounded = acquire(AuditRequest(target="org/model", code_discovery=False))
    assert len(bounded.repo.history["README.md"]) == 2
    assert "history cut at the newest 2 versions" in bounded.repo.skipped["README.md (history)"]


# --------------------------------------------------------------------------- base models


def test_base_models_followed_to_depth(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/root", tmp_path / "r", readme=card())
    publish_model(hub, "org/mid", tmp_path / "m", readme=card(base="org/root"))
    publish_model(hub, "org/model", tmp_path / "t", readme=card(base="org/mid"))

    deep = acquire(AuditRequest(target="org/model", code_discovery=False))
    assert [b.target.id for b in deep.base] == ["org/mid"]
    assert [b.target.id for b in deep.base[0].base] == ["org/root"]
    assert deep.base[0].target.revision == hub.repos["org/mid"].branches["main"]
    assert not deep.problems

    shallow = acquire(AuditRequest(target="org/model", code_discovery=False, base_depth=1))
    assert [b.target.id for b in shallow.base] == ["org/mid"]
    assert shallow.base[0].base == ()


def test_merge_parents_and_shared_ancestor_fetched_once(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/root", tmp_path / "r")
    publish_model(hub, "org/a", tmp_path / "a", readme=card(base="org/root"))
    publish_model(hub, "org/b", tmp_path / "b", readme=card(base="org/root"))
    publish_model(hub, "org/merge", tmp_path / "m", readme=card(base=["org/a", "org/b"]))
    evidence = acquire(AuditRequest(target="org/merge", code_discovery=False))
    assert [b.target.id for b in evidence.base] == ["org/a", "org/b"]
    assert [b.base[0].target.id for b in evidence.base] == ["org/root", "org/root"]
    info = [e for e in hub.log if e.path.split("?")[0] == "/api/models/org/root"]
    assert len(info) == 1


def test_cycle_and_missing_base_are_findings(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/model", tmp_path / "m", readme=card(base=["org/model", "org/gone"]))
    code, data, _ = audit_json("org/model", "--no-code-discovery")
    assert code == 0
    by_rule = {f["rule_id"]: f for f in data["findings"]}
    assert by_rule["SRC012"]["message"] == "base model lineage loops: org/model → org/model"
    assert by_rule["SRC012"]["location"] == {"path": "README.md", "line": 4, "key": "base_model"}
    assert by_rule["SRC010"]["severity"] == "warning"
    assert "org/gone could not be fetched" in by_rule["SRC010"]["message"]
    assert by_rule["SRC010"]["location"]["line"] == 5


def test_base_override_by_id(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/model", tmp_path / "m", readme=card(base="org/wrong"))
    publish_model(hub, "org/right", tmp_path / "r")
    evidence = acquire(AuditRequest(target="org/model", base="org/right", code_discovery=False))
    assert [b.target.id for b in evidence.base] == ["org/right"]
    assert not hub.requests(contains="org/wrong")


def test_local_target_fetches_card_base_from_hub_when_asked(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/base", tmp_path / "b")
    local = tmp_path / "local"
    local.mkdir()
    (local / "README.md").write_text(card(base="org/base"))
    assert acquire(AuditRequest(target=str(local))).base == ()
    assert hub.log == []
    evidence = acquire(AuditRequest(target=str(local), base_depth=1))
    assert [b.target.id for b in evidence.base] == ["org/base"]


def test_hf_home_cache_is_used_without_hf_hub_cache(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    publish_model(hub, "org/model", tmp_path / "m")
    evidence = acquire(AuditRequest(target="org/model", code_discovery=False))
    assert Path(evidence.repo.path or "").is_relative_to(tmp_path / "home" / "hub")
    # A second audit of the same commit is served from the caches: nothing is fetched again
    # (safetensors headers are kept in the cardaudit cache, keyed by commit).
    hub.log.clear()
    again = acquire(AuditRequest(target="org/model", code_discovery=False))
    assert not hub.requests("GET", "/resolve/") and not hub.requests(None, "/cdn/")
    assert again.safetensors == evidence.safetensors


def _gguf_file(path: Path, data_bytes: int) -> int:
    """A real GGUF header (with an 80k-token vocabulary) over a sparse data section."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(1)
    writer.add_context_length(4096)
    writer.add_token_list([f"token-{i:05d}" for i in range(80_000)])
    writer.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    writer.add_tensor("blk.0.ffn_up.weight", np.zeros((96, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = path.stat().st_size - (64 * 32 * 2 + 96 * 32 * 4)
    os.truncate(path, header + data_bytes)  # the same header, a huge sparse data section
    return header


def test_gguf_headers_read_by_range(hub: FakeHub, tmp_path: Path) -> None:
    path = tmp_path / "model-Q8_0.gguf"
    header = _gguf_file(path, 20 * 1024**3)
    assert header > 1024 * 1024  # the vocabulary pushes the header past the first read
    hub.commit("org/gguf", {"README.md": card(licence="mit"), "model-Q8_0.gguf": path})
    evidence = acquire(AuditRequest(target="org/gguf", code_discovery=False))
    [parsed] = evidence.gguf
    assert parsed.error is None
    assert [(t.name, t.dtype, t.shape) for t in parsed.tensors] == [
        ("token_embd.weight", "F16", (64, 32)),
        ("blk.0.ffn_up.weight", "F32", (96, 32)),
    ]
    from cardaudit.extract import build_facts

    parameters = build_facts(evidence).parameters
    assert (parameters.source, parameters.total) == ("gguf", 64 * 32 + 96 * 32)
    sent = sum(e.body_bytes for e in hub.log if e.host == "cdn")
    assert header <= sent <= 4 * 1024 * 1024  # 1 MiB, then up to 4 MiB: never the 20 GB
    assert all(e.range for e in hub.log if e.path.endswith(".gguf") and e.method == "GET")
    assert not [e for e in hub.log if e.status == 403]


def test_only_the_counted_gguf_model_is_read(hub: FakeHub, tmp_path: Path) -> None:
    """A GGUF repo ships one model in many quantizations (and a vision projector): only the
    header of the model that is counted is read — its split parts — and a warm re-audit
    reads nothing; the other files are named from the listing, never fetched."""
    files: dict[str, bytes | str | Path] = {"README.md": card(licence="mit")}
    for name in (
        "mmproj-model-F16.gguf",
        "model-Q4_K_M.gguf",
        "model-Q8_0-00001-of-00002.gguf",
        "model-Q8_0-00002-of-00002.gguf",
        "model-Q5_K_M.gguf",
    ):
        _gguf_file(tmp_path / name, 4 * 1024**3)
        files[name] = tmp_path / name
    hub.commit("org/gguf", files)
    evidence = acquire(AuditRequest(target="org/gguf", code_discovery=False))
    assert [h.path for h in evidence.gguf] == ["model-Q4_K_M.gguf"]
    read = {e.path.rsplit("/", 1)[-1] for e in hub.log if e.path.endswith(".gguf")}
    assert read == {"model-Q4_K_M.gguf"}
    note = evidence.repo.skipped["*.gguf (headers)"]
    assert "4 other .gguf files" in note and "model-Q4_K_M.gguf" in note
    from cardaudit.extract import build_facts

    parameters = build_facts(evidence).parameters
    assert parameters.details["file"] == "model-Q4_K_M.gguf"
    assert parameters.details["other_gguf_files"] == [
        "mmproj-model-F16.gguf",
        "model-Q5_K_M.gguf",
        "model-Q8_0-00001-of-00002.gguf",
        "model-Q8_0-00002-of-00002.gguf",
    ]
    assert sum(e.body_bytes for e in hub.log if e.host == "cdn") <= 4 * 1024 * 1024
    hub.log.clear()
    again = acquire(AuditRequest(target="org/gguf", code_discovery=False))
    assert not [e for e in hub.log if e.path.endswith(".gguf")]  # kept by commit
    assert again.gguf == evidence.gguf


def test_corrupt_gguf_is_a_finding(hub: FakeHub, tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 4096)
    hub.commit("org/gguf", {"README.md": card(licence="mit"), "bad.gguf": bad})
    evidence = acquire(AuditRequest(target="org/gguf", code_discovery=False))
    assert [p.rule_id for p in evidence.problems] == ["SRC003"]
    assert evidence.problems[0].location.path == "bad.gguf"


# --------------------------------------------------------------------------- transfer budget

#: Both layouts of one MoE: ~110 header entries (fused experts) or ~6,200 (one per expert,
#: 770 KB of headers and a 560 KB index, both over cardaudit's budgets).
SHAPE = {"layers": 16, "hidden": 256, "experts": 128, "expert_dim": 64, "vocab": 4096}


def _publish_layout(hub: FakeHub, tmp_path: Path, layout: str, **extra) -> tuple[str, int]:
    tensors = (per_expert_tensors if layout == "per-expert" else moe_tensors)(**SHAPE)
    files = sharded_files(tmp_path / layout, tensors, 4)
    files |= {"README.md": card(), "config.json": moe_config(**SHAPE), **extra}
    sha = hub.commit(f"org/{layout}", files)
    total = 0
    for _, shape in tensors.values():
        count = 1
        for dim in shape:
            count *= dim
        total += count
    return sha, total


def _shard_gets(hub: FakeHub) -> dict[str, list[tuple[str | None, int]]]:
    gets: dict[str, list[tuple[str | None, int]]] = {}
    for entry in hub.log:
        if entry.host == "cdn" and entry.path.endswith(".safetensors"):
            gets.setdefault(entry.path.rsplit("/", 1)[-1], []).append(
                (entry.range, entry.body_bytes)
            )
    return gets


@pytest.mark.parametrize("layout", ["fused", "per-expert"])
def test_transfer_budget_and_exact_counts_for_both_layouts(
    hub: FakeHub, tmp_path: Path, layout: str
) -> None:
    sha, total = _publish_layout(hub, tmp_path, layout)
    code, data, _ = audit_json(f"org/{layout}", "--no-code-discovery")
    assert code == 0
    assert data["target"]["revision"] == sha
    params = data["facts"]["parameters"]
    assert params["total"] == total and params["by_dtype"] == {"BF16": total}
    assert all(e.range for e in hub.log if e.path.endswith(".safetensors"))
    assert not [e for e in hub.log if e.status == 403]
    gets = _shard_gets(hub)
    assert len(gets) == 4
    if layout == "fused":
        assert params["source"] == "safetensors"
        assert params["active"] is not None and "active_source" not in params["details"]
        assert hub.requests("GET", "model.safetensors.index.json")
        assert hub.body_bytes() < 100_000
    else:
        # Headers over budget: only their 8-byte lengths are read; the Hub's totals, bound
        # to this commit by the shard sizes, stand in; active comes from config.json.
        assert params["source"] == "hub"
        assert params["details"]["headers_read"] == 0
        assert params["details"]["shards"] == 4
        assert params["details"]["header_bytes"] > 512 * 1024
        assert params["details"]["stored_bytes"] == 2 * total
        assert params["details"]["active_source"] == "config"
        expected = count_from_config(json.loads(moe_config(**SHAPE)))
        assert expected is not None and params["active"] == expected.active
        assert all(reads == [("bytes=0-7", 8)] for reads in gets.values())
        assert hub.weight_bytes() == 4 * 8
        assert not hub.requests("GET", "model.safetensors.index.json")
        assert hub.body_bytes() < 100_000
    assert data["facts"]["memory"]["weight_bytes"] == 2 * total
    jsonschema.validate(data, json.loads((ROOT / "docs" / "report.schema.json").read_text()))
    if layout == "per-expert":  # the evidence says what was left out, and why
        skipped = acquire(AuditRequest(target=f"org/{layout}", code_discovery=False)).repo.skipped
        assert "index budget: not fetched" in skipped["model.safetensors.index.json"]


def test_over_budget_headers_are_read_in_full_without_usable_hub_totals(
    hub: FakeHub, tmp_path: Path
) -> None:
    sha, total = _publish_layout(hub, tmp_path, "per-expert")
    hub.without_safetensors_totals.add(sha)
    evidence = acquire(AuditRequest(target="org/per-expert", code_discovery=False))
    assert evidence.safetensors_totals is None
    assert sum(len(h.tensors) for h in evidence.safetensors) == len(per_expert_tensors(**SHAPE))
    assert evidence.safetensors_index is not None  # the headers were read: the index too
    from cardaudit.extract import build_facts

    params = build_facts(evidence).parameters
    assert (params.source, params.total) == ("safetensors", total)
    assert hub.weight_bytes() > 512 * 1024  # exact counts first: over budget, and said so


def test_hub_totals_not_bound_to_the_commit_are_not_used(hub: FakeHub, tmp_path: Path) -> None:
    """A shard shorter than its header says: the Hub's totals (from the headers) disagree
    with the listed sizes, so every header is read and MEM009 reports the shard."""
    _publish_layout(hub, tmp_path, "per-expert")
    shard = sorted(tmp_path.glob("per-expert/*.safetensors"))[1]
    os.truncate(shard, shard.stat().st_size - 4096)
    code, data, _ = audit_json("org/per-expert", "--no-code-discovery")
    assert code == 0
    assert data["facts"]["parameters"]["source"] == "safetensors"
    hits = [f for f in data["findings"] if f["rule_id"] == "MEM009"]
    assert [h["location"]["path"] for h in hits] == [shard.name]


def test_quantized_repo_whose_totals_cannot_verify_the_config_reads_every_header(
    hub: FakeHub, tmp_path: Path
) -> None:
    """An FP8 config over BF16 shards: the Hub's totals have no F8_E4M3, so they prove
    nothing and every header is read."""
    config = json.loads(moe_config(**SHAPE))
    config["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    _publish_layout(hub, tmp_path, "per-expert", **{"config.json": json.dumps(config)})
    evidence = acquire(AuditRequest(target="org/per-expert", code_discovery=False))
    assert evidence.safetensors_totals is None
    assert sum(len(h.tensors) for h in evidence.safetensors) == len(per_expert_tensors(**SHAPE))


def test_warm_re_audit_of_an_over_budget_repo_fetches_no_shard_bytes(
    hub: FakeHub, tmp_path: Path
) -> None:
    _publish_layout(hub, tmp_path, "per-expert")
    first = acquire(AuditRequest(target="org/per-expert", code_discovery=False))
    hub.log.clear()
    again = acquire(AuditRequest(target="org/per-expert", code_discovery=False))
    assert not hub.requests(None, "/cdn/") and not hub.requests("GET", "/resolve/")
    assert again.safetensors_totals == first.safetensors_totals is not None


# --------------------------------------------------------------------------- quantized repos

#: An FP8 block-scaled MoE, one tensor per expert: ~9,700 header entries (~1 MB of headers).
FP8_SHAPE = {
    "layers": 12,
    "hidden": 320,
    "heads": 4,
    "kv_heads": 2,
    "experts": 128,
    "expert_dim": 96,
    "vocab": 4096,
}


def _publish_fp8(
    hub: FakeHub, tmp_path: Path, config_change: dict | None = None, change_tensors=None
) -> tuple[str, dict, dict]:
    config, tensors = fp8_moe(**FP8_SHAPE)
    config["quantization_config"] |= config_change or {}
    if change_tensors is not None:
        change_tensors(tensors)
    files = sharded_files(tmp_path / "fp8", tensors, 4)
    files |= {"README.md": card(), "config.json": json.dumps(config)}
    return hub.commit("org/fp8-moe", files), tensors, config


def _read_from_every_header(hub: FakeHub, sha: str, repo: str = "org/fp8-moe"):
    """The parameter facts of ``repo`` when the Hub offers no totals: every header read."""
    from cardaudit.extract import build_facts

    hub.without_safetensors_totals.add(sha)
    evidence = acquire(AuditRequest(target=repo, code_discovery=False))
    hub.without_safetensors_totals.discard(sha)
    params = build_facts(evidence).parameters
    assert params.source == "safetensors" and evidence.safetensors_totals is None
    return params


def _count_read_from_every_header(hub: FakeHub, sha: str) -> tuple[int, dict]:
    params = _read_from_every_header(hub, sha)
    return params.total, dict(params.by_dtype)


def test_fp8_per_expert_repo_is_counted_exactly_well_under_the_budget(
    hub: FakeHub, tmp_path: Path
) -> None:
    sha, tensors, config = _publish_fp8(hub, tmp_path)
    code, data, _ = audit_json("org/fp8-moe", "--no-code-discovery")
    assert code == 0 and data["target"]["revision"] == sha
    params = data["facts"]["parameters"]
    details = params["details"]
    assert params["source"] == "hub"
    assert details["method"] == "config count verified against Hub dtype totals"
    assert details["headers_read"] == 0 and details["header_bytes"] > 512 * 1024
    # Only the 8-byte header lengths of the shards, and no index, crossed the wire.
    assert all(reads == [("bytes=0-7", 8)] for reads in _shard_gets(hub).values())
    assert hub.weight_bytes() == 4 * 8
    assert not hub.requests("GET", "model.safetensors.index.json")
    assert hub.body_bytes() < 100_000
    # Exact: the same figures as reading every header (scales excluded, F8 kept as stored).
    scales = sum(n for name, n in _elements(tensors).items() if name.endswith("_scale_inv"))
    assert details["scale_elements"] == scales
    assert params["total"] == sum(_elements(tensors).values()) - scales
    expected = count_from_config(config)
    assert expected is not None and params["total"] == expected.total
    assert params["active"] == expected.active and details["active_source"] == "config"
    assert (params["total"], params["by_dtype"]) == _count_read_from_every_header(hub, sha)
    assert data["facts"]["memory"]["weight_bytes"] == details["stored_bytes"]
    jsonschema.validate(data, json.loads((ROOT / "docs" / "report.schema.json").read_text()))


def _o_proj_bias(tensors: dict) -> None:
    """A bias the config does not declare."""
    tensors["model.layers.0.self_attn.o_proj.bias"] = ("BF16", [FP8_SHAPE["hidden"]])


def _q_proj_left_in_bf16(tensors: dict) -> None:
    name = "model.layers.0.self_attn.q_proj"
    del tensors[f"{name}.weight_scale_inv"]
    tensors[f"{name}.weight"] = ("BF16", tensors[f"{name}.weight"][1])


@pytest.mark.parametrize(
    ("config_change", "change_tensors"),
    [
        ({"weight_block_size": [64, 64]}, None),  # the scale equation fails
        ({}, _o_proj_bias),  # F8 holds, but a tensor the config does not know breaks the rest
        # One module kept in BF16: no family-wide combination fits.
        ({"modules_to_not_convert": ["model.layers.0.self_attn.q_proj"]}, _q_proj_left_in_bf16),
    ],
)
def test_fp8_totals_that_fail_an_equation_fall_back_to_every_header(
    hub: FakeHub, tmp_path: Path, config_change: dict, change_tensors
) -> None:
    _, tensors, _ = _publish_fp8(hub, tmp_path, config_change, change_tensors)
    evidence = acquire(AuditRequest(target="org/fp8-moe", code_discovery=False))
    assert evidence.safetensors_totals is None
    assert sum(len(h.tensors) for h in evidence.safetensors) == len(tensors)
    from cardaudit.extract import build_facts

    params = build_facts(evidence).parameters
    scales = sum(n for name, n in _elements(tensors).items() if name.endswith("_scale_inv"))
    total = sum(_elements(tensors).values()) - scales
    assert (params.source, params.total) == ("safetensors", total)
    assert hub.weight_bytes() > 512 * 1024


def _elements(tensors: dict[str, tuple[str, list[int]]]) -> dict[str, int]:
    counts = {}
    for name, (_, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        counts[name] = count
    return counts


#: A GPTQ / AWQ int4 MoE, one tensor per expert: ~12,500 header entries (~1.3 MB of headers).
PACKED_SHAPE = {
    "layers": 8,
    "hidden": 256,
    "heads": 4,
    "kv_heads": 2,
    "experts": 128,
    "expert_dim": 128,
    "vocab": 4096,
}


def _publish_packed(
    hub: FakeHub,
    tmp_path: Path,
    method: str,
    config_change: dict | None = None,
    change_tensors=None,
    **options,
) -> tuple[str, dict, dict]:
    """Publish an int4 / FP8 MoE: ``method`` is gptq, awq or a compressed-tensors format."""
    build = {"gptq": packed_int_moe, "awq": packed_int_moe, "modelopt": nvfp4_moe}.get(
        method, nvfp4_moe if method.startswith("nvfp4") else compressed_tensors_moe
    )
    config, tensors = build(method, **PACKED_SHAPE, **options)
    config["quantization_config"] |= config_change or {}
    if change_tensors is not None:
        change_tensors(tensors)
    files = sharded_files(tmp_path / "int4", tensors, 4)
    files |= {"README.md": card(), "config.json": json.dumps(config)}
    return hub.commit("org/int4-moe", files), tensors, config


@pytest.mark.parametrize(
    ("method", "options", "families", "dtypes"),
    [
        ("gptq", {}, ["attention", "experts"], {"F16", "INT4"}),
        ("awq", {}, ["attention", "experts"], {"F16", "INT4"}),
        ("gptq", {"quantize_attention": False}, ["experts"], {"F16", "INT4"}),
        ("awq", {"quantize_attention": False}, ["experts"], {"F16", "INT4"}),
        ("gptq", {"zero_biases": True}, ["attention", "experts"], {"F16", "INT4"}),
        ("pack-quantized", {}, ["attention", "experts"], {"BF16", "INT4"}),
        ("pack-quantized", {"quantize_attention": False}, ["experts"], {"BF16", "INT4"}),
        ("float-quantized", {}, ["attention", "experts"], {"BF16", "F8_E4M3"}),
        ("nvfp4-pack-quantized", {}, ["attention", "experts"], {"BF16", "NVFP4"}),
        ("modelopt", {"quantize_attention": False}, ["experts"], {"BF16", "NVFP4"}),
    ],
)
def test_quantized_per_expert_repos_are_counted_exactly_well_under_the_budget(
    hub: FakeHub, tmp_path: Path, method: str, options: dict, families: list, dtypes: set
) -> None:
    sha, tensors, config = _publish_packed(hub, tmp_path, method, **options)
    code, data, _ = audit_json("org/int4-moe", "--no-code-discovery")
    assert code == 0 and data["target"]["revision"] == sha
    params = data["facts"]["parameters"]
    details = params["details"]
    assert params["source"] == "hub"
    assert details["method"] == "config count verified against Hub dtype totals"
    assert method in details["scheme"]
    assert details["quantized_families"] == families
    assert details["headers_read"] == 0 and details["header_bytes"] > 512 * 1024
    # Only the 8-byte header lengths of the shards, and no index, crossed the wire.
    assert all(reads == [("bytes=0-7", 8)] for reads in _shard_gets(hub).values())
    assert hub.weight_bytes() == 4 * 8
    assert not hub.requests("GET", "model.safetensors.index.json")
    assert hub.body_bytes() < 100_000
    # Exact: the config count (plus any zero biases), and the very figures that reading
    # every header gives: int4 unpacked, scales / zero points / g_idx as storage.
    expected = count_from_config(config)
    assert expected is not None
    biases = sum(_elements({k: v for k, v in tensors.items() if k.endswith(".bias")}).values())
    assert details["stored_buffers"] == biases
    assert params["total"] == expected.total + biases
    assert params["active"] == expected.active and details["active_source"] == "config"
    headers = _read_from_every_header(hub, sha, "org/int4-moe")
    assert (params["total"], params["by_dtype"]) == (headers.total, dict(headers.by_dtype))
    assert set(params["by_dtype"]) == dtypes
    assert details["aux_bytes"] == headers.details["aux_bytes"]
    assert data["facts"]["memory"]["weight_bytes"] == details["stored_bytes"]
    # The report says what was left out, and why.
    [index] = [gap for gap in data["not_read"] if gap["path"] == "model.safetensors.index.json"]
    assert index["repo"] == "model" and "verified against the config count" in index["reason"]
    jsonschema.validate(data, json.loads((ROOT / "docs" / "report.schema.json").read_text()))


def _one_projection_left_in_f16(tensors: dict) -> None:
    name = "model.layers.0.self_attn.q_proj"
    for suffix in ("qweight", "qzeros", "scales", "g_idx"):
        tensors.pop(f"{name}.{suffix}", None)
    tensors[f"{name}.weight"] = ("F16", [PACKED_SHAPE["hidden"], PACKED_SHAPE["hidden"]])


@pytest.mark.parametrize(
    ("method", "config_change", "change_tensors"),
    [
        ("gptq", {"group_size": 128}, None),  # the zero-point and scale counts differ
        ("awq", {"bits": 8}, None),  # AWQ is 4-bit only: not enumerated
        ("gptq", {"checkpoint_format": "marlin"}, None),  # another layout
        ("awq", {"version": "gemv"}, None),
        ("gptq", {}, _one_projection_left_in_f16),  # no family-wide combination fits
        ("awq", {}, lambda t: t.update({"model.extra.weight": ("F16", [7])})),
        ("pack-quantized", {"format": "marlin-24"}, None),  # not enumerated
        ("pack-quantized", {"kv_cache_scheme": {"num_bits": 8}}, None),  # k/v scales too
        ("float-quantized", {}, lambda t: t.update({"model.extra.input_scale": ("BF16", [1])})),
        ("modelopt", {"kv_cache_quant_algo": "FP8"}, None),  # k/v scales: not enumerated
        ("nvfp4-pack-quantized", {}, lambda t: t.update({"x.weight_scale_2": ("F32", [])})),
    ],
)
def test_packed_int_totals_that_fail_an_equation_fall_back_to_every_header(
    hub: FakeHub, tmp_path: Path, method: str, config_change: dict, change_tensors
) -> None:
    _, tensors, _ = _publish_packed(hub, tmp_path, method, config_change, change_tensors)
    evidence = acquire(AuditRequest(target="org/int4-moe", code_discovery=False))
    assert evidence.safetensors_totals is None
    assert sum(len(h.tensors) for h in evidence.safetensors) == len(tensors)
    assert hub.weight_bytes() > 512 * 1024
