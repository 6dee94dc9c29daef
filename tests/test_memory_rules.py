"""MEM findings on the fixtures: rule, severity, file, line and the arithmetic shown."""

from __future__ import annotations

import pytest

from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from scenarios import scenario_request


def _findings(name: str, family: str = "MEM"):
    report = audit(scenario_request(name), Policy())
    return report, [f for f in report.findings if f.rule_id.startswith(family)]


def _where(finding) -> tuple[str, str, str | None, int | None]:
    return finding.rule_id, finding.severity, finding.location.path, finding.location.line


def test_clover_is_clean_and_matches_its_base() -> None:
    report, findings = _findings("clover")
    assert findings == []
    params, memory = report.facts.parameters, report.facts.memory
    assert params.source == "safetensors"
    assert params.total == 34_660_610_688
    assert params.by_dtype == {"BF16": 34_660_610_688}
    assert memory.weight_bytes == 69_321_221_376  # about 69.3 GB, as the card says
    assert 3.0e9 < params.active < 3.5e9
    assert len(params.details["header_only_shards"]) == params.details["shards"] == 16
    assert memory.context_length == 262_144
    # 10 full-attention layers × 2 KV heads × 256 × (K and V) × 2 bytes; 30 linear layers.
    assert memory.kv_cache_bytes_per_token == 10 * 2 * 256 * 2 * 2
    assert memory.details["kv_cache"]["layers"] == {"full": 10, "linear": 30}
    assert memory.details["kv_cache"]["constant_state_bytes"] > 0
    # The base ships the full VL checkpoint: same language model plus a vision tower.
    [base] = params.details["base_models"]
    assert (base["source"], base["total"]) == ("safetensors", 35_107_181_936)
    assert base["language_model"] == params.total


def test_gib_written_as_gb() -> None:
    _report, findings = _findings("mem-gib")
    assert [_where(f) for f in findings] == [("MEM003", "warning", "README.md", 15)]
    message = findings[0].message
    assert "card says 329GB" in message
    assert "352.5 GB = 328.3 GiB" in message
    assert "the card's GB are GiB" in message


def test_wrong_counts_gpu_and_context_claims() -> None:
    report, findings = _findings("mem-claims")
    assert report.facts.parameters.source == "config"
    assert [_where(f) for f in findings] == [
        ("MEM001", "warning", "README.md", 9),
        ("MEM002", "warning", "README.md", 10),
        ("MEM004", "warning", "README.md", 12),
        ("MEM005", "warning", "README.md", 12),
    ]
    by_rule = {f.rule_id: f.message for f in findings}
    assert "46,702,792,704" in by_rule["MEM001"]
    assert "12.88B with embeddings" in by_rule["MEM002"]
    assert "RTX 4090" in by_rule["MEM004"] and "93.4 GB" in by_rule["MEM004"]
    assert "they would fit in INT4" in by_rule["MEM004"]
    assert "131,072" in by_rule["MEM005"] and "32,768" in by_rule["MEM005"]


def test_missing_truncated_shards_and_dtype() -> None:
    report, findings = _findings("mem-shards")
    assert sorted(_where(f) for f in findings) == [
        ("MEM006", "warning", "README.md", 12),
        ("MEM006", "warning", "config.json", 12),
        ("MEM008", "error", "model.safetensors.index.json", 38),
        ("MEM009", "warning", "model-00002-of-00003.safetensors", None),
    ]
    params = report.facts.parameters
    # Headers are incomplete, so the count comes from the index, in the dtype it implies.
    assert params.source == "index"
    assert params.by_dtype == {"F32": 53_536}
    assert params.details["shards_without_headers"] == ["model-00003-of-00003.safetensors"]


def test_stale_index() -> None:
    _report, findings = _findings("mem-index-stale")
    assert sorted(_where(f) for f in findings) == [
        ("MEM007", "warning", "model.safetensors.index.json", 3),
        ("MEM007", "warning", "model.safetensors.index.json", 45),
    ]
    messages = " ".join(f.message for f in findings)
    assert "-4,096 bytes" in messages
    assert "rotary_emb.inv_freq" in messages


@pytest.mark.parametrize("name", ["apache-link-only", "licence-typo", "other-without-link"])
def test_card_only_fixtures_have_no_mem_findings(name: str) -> None:
    _report, findings = _findings(name)
    assert findings == []


def _bin_repo(tmp_path, third_shard: int | None, total_size_delta: int = 0):
    """fixtures/mem-bin-shards copied, with the absent third shard written (``third_shard``
    bytes) and the index's total_size moved by ``total_size_delta``."""
    import json
    import shutil

    from cardaudit.sources import AuditRequest
    from scenarios import FIXTURES

    model = tmp_path / "model"
    shutil.copytree(FIXTURES / "mem-bin-shards" / "model", model)
    if third_shard is not None:
        (model / "pytorch_model-00003-of-00003.bin").write_bytes(bytes(third_shard))
    index_path = model / "pytorch_model.bin.index.json"
    index = json.loads(index_path.read_text())
    index["metadata"]["total_size"] += total_size_delta
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    report = audit(AuditRequest(target=str(model), code_discovery=False), Policy())
    return report, [f for f in report.findings if f.rule_id.startswith("MEM")]


#: The third shard's tensors (model.norm and lm_head, F16) and its pickle / zip overhead.
THIRD_SHARD = (32 + 256 * 32) * 2 + 1024 + 2 * 320


def test_bin_index_missing_shard() -> None:
    """fixtures/mem-bin-shards: the .bin index lists three shards, the repo has two."""
    report, findings = _findings("mem-bin-shards")
    assert [_where(f) for f in findings] == [("MEM008", "error", "pytorch_model.bin.index.json", 6)]
    assert findings[0].message == (
        "shard pytorch_model-00003-of-00003.bin is listed in pytorch_model.bin.index.json "
        "(2 tensors) but is not in the repo: the model cannot be loaded"
    )
    notes = {run.rule_id: run.note for run in report.checks}
    assert notes["MEM007"] == "some shards are missing (MEM008)"
    params = report.facts.parameters
    assert (params.source, params.total, params.by_dtype) == ("index", 53_536, {"F16": 53_536})
    assert report.facts.memory.weight_bytes == 107_072  # total_size, to the byte


def test_bin_index_complete_is_clean(tmp_path) -> None:
    report, findings = _bin_repo(tmp_path, THIRD_SHARD)
    assert findings == []
    outcomes = {run.rule_id: run.outcome for run in report.checks}
    assert outcomes["MEM007"] == outcomes["MEM008"] == "pass"


def test_bin_index_total_size_beyond_the_shards(tmp_path) -> None:
    # the index claims 40,000 bytes more than the three shards can hold
    _report, findings = _bin_repo(tmp_path, THIRD_SHARD, total_size_delta=40_000)
    assert [_where(f) for f in findings] == [
        ("MEM007", "warning", "pytorch_model.bin.index.json", 3)
    ]
    stored = 60_608 + 43_904 + THIRD_SHARD
    assert findings[0].message == (
        "pytorch_model.bin.index.json says total_size 147,072 bytes (0.147 MB); the 3 .bin "
        f"shard(s) it lists are {stored:,} bytes in all, {147_072 - stored:,} bytes fewer "
        "than the tensors alone (a stale index or truncated shards)"
    )


def test_bin_index_shards_far_larger_than_the_index(tmp_path) -> None:
    # the shards hold 507,072 bytes more than the index's tensors: more than the pickles and
    # zip records of 39 tensors in 3 shards can take (on a real model, where tensors are
    # gigabytes, an F32 re-save under an F16 index is far beyond that bound)
    _report, findings = _bin_repo(tmp_path, THIRD_SHARD + 107_072 + 400_000)
    assert [_where(f) for f in findings] == [
        ("MEM007", "warning", "pytorch_model.bin.index.json", 3)
    ]
    assert "beyond what the pickles and zip records of 39 tensors take (at most 356,352)" in (
        findings[0].message
    )
