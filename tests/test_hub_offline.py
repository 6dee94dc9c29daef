"""HF_HUB_OFFLINE=1: a Hub audit runs from the caches an online audit filled, and fetches
nothing (the fake Hub's request log stays empty; the code repo's bare repo is moved away)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources.hub import header_cache_path
from hub_repos import card, per_expert_tensors, publish_model, sharded_files
from hub_server import FakeHub
from test_git_source import LINKS, code_repo
from test_hub import SHAPE, _gguf_file, _publish_layout

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
TOKEN = "hf_OfflineSecretToken0123456789abcdefXYZ"


@pytest.fixture
def hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    monkeypatch.setenv("CARDAUDIT_NOW", "2026-06-01")  # promise ages: the same in both runs
    return hub


@pytest.fixture
def go_offline(monkeypatch: pytest.MonkeyPatch):
    """Switch HF_HUB_OFFLINE on (or off again) as a user would: the variable, and the
    library's constant (huggingface_hub reads the variable once, at import)."""
    from huggingface_hub import constants

    def switch(on: bool = True) -> None:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1" if on else "0")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", on)

    return switch


def audit(*args: str, fmt: str = "json"):
    return runner.invoke(app, ["audit", *args, "-f", fmt, "--fail-on", "never", "-q"])


def report(*args: str) -> dict:
    result = audit(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def without_provenance(data: dict) -> dict:
    """The report minus ``target.offline``: the only field an offline run adds."""
    copy = json.loads(json.dumps(data))
    copy["target"].pop("offline", None)
    return copy


def one_line_error(result, *phrases: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------------------- the same report


def test_offline_report_equals_the_online_one_and_fetches_nothing(
    hub: FakeHub, github: Path, tmp_path: Path, go_offline
) -> None:
    bare, shas = code_repo(github)
    publish_model(hub, "example-org/root", tmp_path / "r", readme=card(licence="mit"))
    publish_model(hub, "example-org/base", tmp_path / "b", readme=card(base="example-org/root"))
    hub.commit("example-org/clover", {"README.md": card(body="Code coming soon.\n")})
    sha = publish_model(
        hub,
        "example-org/clover",
        tmp_path / "m",
        readme=card(base=["example-org/base", "example-org/gone"], body=LINKS),
    )
    online = report("example-org/clover")
    assert online["target"]["revision"] == sha and "offline" not in online["target"]
    # The online audit used everything: two generations of bases, the code repo, history.
    assert online["facts"]["code_repo_choice"]["chosen"].endswith("example-org/clover-code")
    assert online["facts"]["license"]["code_repo"] is not None
    gone = [f for f in online["findings"] if f["rule_id"] == "SRC010"]
    assert [f["message"] for f in gone] == [
        "base model example-org/gone could not be fetched: model repo example-org/gone not "
        "found on the Hub (or it is private and no token was sent: set HF_TOKEN or run "
        "`hf auth login`)"
    ]

    go_offline()
    hub.log.clear()
    bare.rename(bare.with_name("moved-away"))  # git can reach nothing either
    offline = report("example-org/clover")
    assert hub.log == []
    assert offline["target"]["offline"] == {"from_cache": True, "unavailable": []}
    assert without_provenance(offline) == online
    jsonschema.validate(offline, SCHEMA)
    assert "offline: from the Hub and git caches" in audit("example-org/clover", fmt="text").stdout
    assert hub.log == []
    clone = next((tmp_path / "cardaudit-cache" / "git").iterdir())
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True)
    assert head.stdout.decode().strip() == shas["second"]


def test_a_real_offline_process(hub: FakeHub, tmp_path: Path) -> None:
    """``HF_HUB_OFFLINE=1 cardaudit audit`` in a fresh interpreter (the library reads the
    variable at import), against the caches the in-process online audit filled."""
    sha = publish_model(hub, "org/model", tmp_path / "m")
    online = report("org/model", "--no-code-discovery")
    hub.log.clear()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "cardaudit.cli", "audit", "hf://org/model", "-f", "json"]
    done = subprocess.run(
        [*command, "--no-code-discovery", "--fail-on", "never"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    offline = json.loads(done.stdout)
    assert offline["target"]["revision"] == sha
    assert without_provenance(offline) == online
    assert hub.log == []


@pytest.mark.parametrize(
    ("form", "extra"),
    [
        ("org/model", ["--revision", "v1.0"]),  # a tag
        ("hf://org/model@dev", []),  # a branch
        ("{endpoint}/org/model/tree/dev", []),  # a URL
        ("org/model", ["--revision", "{first}"]),  # a sha
        ("org/model", []),  # main
    ],
)
def test_every_revision_form_resolves_offline_as_it_did_online(
    hub: FakeHub, tmp_path: Path, go_offline, form: str, extra: list[str]
) -> None:
    first = publish_model(hub, "org/model", tmp_path / "m", readme=card(body="First.\n"))
    hub.tag("org/model", "v1.0", first)
    hub.commit("org/model", {"NOTICE": "Dev notice.\n"}, branch="dev")
    hub.commit("org/model", {"README.md": card(body="Second.\n")})
    args = [a.format(endpoint=hub.endpoint, first=first) for a in [form, *extra]]
    args.append("--no-code-discovery")
    online = report(*args)
    go_offline()
    hub.log.clear()
    offline = report(*args)
    assert hub.log == []
    assert without_provenance(offline) == online
    # The name is kept where huggingface_hub keeps it (refs/<name> → sha).
    refs = tmp_path / "hf-cache" / "models--org--model" / "refs"
    name = "v1.0" if "v1.0" in args else "dev" if "dev" in form else None
    if name is not None:
        assert (refs / name).read_text() == online["target"]["revision"]


def test_a_sha_or_its_prefix_resolves_offline_after_an_audit_by_branch(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    sha = publish_model(hub, "org/model", tmp_path / "m")
    online = report("org/model", "--no-code-discovery")
    go_offline()
    hub.log.clear()
    for revision in (sha, sha[:10]):
        offline = report("org/model", "--revision", revision, "--no-code-discovery")
        assert without_provenance(offline) == online
    one_line_error(
        audit("org/model", "--revision", "dev", "--no-code-discovery"),
        "cardaudit: error: HF_HUB_OFFLINE is set and revision 'dev' of org/model is not in the "
        "cache: run the audit once online (without HF_HUB_OFFLINE) to cache it",
    )
    assert hub.log == []


def test_per_expert_repo_over_budget_offline_uses_the_kept_hub_totals(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    sha, total = _publish_layout(hub, tmp_path, "per-expert")
    online = report("org/per-expert", "--no-code-discovery")
    assert online["facts"]["parameters"]["source"] == "hub"
    go_offline()
    hub.log.clear()
    offline = report("org/per-expert", "--no-code-discovery")
    assert hub.log == []
    assert without_provenance(offline) == online
    params = offline["facts"]["parameters"]
    assert (params["source"], params["total"], params["details"]["headers_read"]) == (
        "hub",
        total,
        0,
    )
    assert len(per_expert_tensors(**SHAPE)) > 6000  # over the header budget indeed
    assert offline["target"]["revision"] == sha


def test_unreadable_headers_and_gguf_replay_offline(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes((10**12).to_bytes(8, "little") + b"{}")
    gguf = tmp_path / "model-Q8_0.gguf"
    _gguf_file(gguf, 3 * 1024**3)
    worse = tmp_path / "worse.safetensors"
    worse.write_bytes((16).to_bytes(8, "little") + b"[1, 2, 3]       " + b"\0" * 64)
    files = {"README.md": card(), "bad.safetensors": bad, "worse.safetensors": worse}
    hub.commit("org/odd", {**files, "model-Q8_0.gguf": gguf})
    online = report("org/odd", "--no-code-discovery")
    errors = sorted(f["message"] for f in online["findings"] if f["rule_id"] == "SRC003")
    assert len(errors) == 2 and "header length" in errors[0] and "JSON object" in errors[1]
    assert online["facts"]["parameters"]["source"] in ("gguf", "safetensors")
    go_offline()
    hub.log.clear()
    assert without_provenance(report("org/odd", "--no-code-discovery")) == online
    assert hub.log == []
    for kept in (tmp_path / "cardaudit-cache").rglob("gguf-*/*"):
        kept.unlink()
    one_line_error(
        audit("org/odd", "--no-code-discovery"),
        "HF_HUB_OFFLINE is set and the header of model-Q8_0.gguf of org/odd at ",
    )


# --------------------------------------------------------------------------- missing parts


def test_nothing_cached(hub: FakeHub, go_offline) -> None:
    go_offline()
    one_line_error(
        audit("hf://org/model", "--no-code-discovery"),
        "cardaudit: error: HF_HUB_OFFLINE is set and revision 'main' of org/model is not in "
        "the cache: run the audit once online (without HF_HUB_OFFLINE) to cache it",
    )
    assert hub.log == []


def test_missing_base_model_names_it_and_the_way_around(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    publish_model(hub, "org/base", tmp_path / "b")
    publish_model(hub, "org/model", tmp_path / "m", readme=card(base="org/base"))
    online = report("org/model", "--no-code-discovery", "--base-depth", "0")
    go_offline()
    one_line_error(
        audit("org/model", "--no-code-discovery"),
        "revision 'main' of org/base (a base model) is not in the cache",
        "or audit without base models: --base-depth 0",
    )
    offline = report("org/model", "--no-code-discovery", "--base-depth", "0")
    assert without_provenance(offline) == online


def test_missing_code_repo_names_it_and_the_way_around(
    hub: FakeHub, github: Path, tmp_path: Path, go_offline
) -> None:
    code_repo(github)
    publish_model(hub, "example-org/clover", tmp_path / "m", readme=card(body=LINKS))
    online = report("example-org/clover", "--no-code-discovery")
    go_offline()
    one_line_error(
        audit("example-org/clover"),
        "a clone of the code repo https://github.com/example-org/clover-code is not in the cache",
        "--no-code-discovery",
    )
    assert without_provenance(report("example-org/clover", "--no-code-discovery")) == online
    # A damaged clone counts as a missing one.
    go_offline(False)
    report("example-org/clover")
    clone = next((tmp_path / "cardaudit-cache" / "git").iterdir())
    shutil.rmtree(clone / ".git" / "objects")
    (clone / ".git" / "objects").mkdir()
    go_offline()
    one_line_error(
        audit("example-org/clover"),
        "a usable clone of the code repo https://github.com/example-org/clover-code is not in",
        "--no-code-discovery",
    )


def test_card_history_not_cached_is_said_not_hidden(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    """A base model's history is not read when it is fetched as a base; audited on its own
    offline, the rest of its audit is complete and the report says what was not available."""
    publish_model(hub, "org/base", tmp_path / "b")
    publish_model(hub, "org/model", tmp_path / "m", readme=card(base="org/base"))
    report("org/model", "--no-code-discovery")
    go_offline()
    offline = report("org/base", "--no-code-discovery")
    [missing] = offline["target"]["offline"]["unavailable"]
    sha = offline["target"]["revision"]
    assert missing == (
        "card and licence history (not read offline: "
        f"the commit list of org/base at {sha} is not in the cache)"
    )
    jsonschema.validate(offline, SCHEMA)
    text = audit("org/base", "--no-code-discovery", fmt="text").stdout
    assert "not available: card and licence history (not read offline" in text
    go_offline(False)
    online = report("org/base", "--no-code-discovery")
    assert without_provenance(offline) == online  # one commit: nothing lost here


def test_missing_card_file_and_header(hub: FakeHub, tmp_path: Path, go_offline) -> None:
    sha = publish_model(hub, "org/model", tmp_path / "m")
    report("org/model", "--no-code-discovery")
    go_offline()
    licence = tmp_path / "hf-cache" / "models--org--model" / "snapshots" / sha / "LICENSE"
    licence.unlink()
    one_line_error(
        audit("org/model", "--no-code-discovery"),
        f"HF_HUB_OFFLINE is set and LICENSE of org/model at {sha} is not in the cache",
    )
    go_offline(False)
    report("org/model", "--no-code-discovery")
    go_offline()
    header = header_cache_path("org/model", sha, "model-00001-of-00002.safetensors")
    assert header.is_file()
    header.unlink()
    one_line_error(
        audit("org/model", "--no-code-discovery"),
        "HF_HUB_OFFLINE is set and the header of model-00001-of-00002.safetensors of "
        f"org/model at {sha} is not in the cache",
    )


# --------------------------------------------------------------------------- corrupt entries


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ("info.json", "the model info of org/model"),
        ("files.json", "the file listing of org/model"),
        ("commits.json", None),  # optional: said in target.offline.unavailable
        ("header", "the header of model-00001-of-00002.safetensors of org/model at "),
    ],
)
@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"sha": 1}', b"[[1, 2]]"])
def test_a_corrupt_cache_entry_counts_as_missing(
    hub: FakeHub, tmp_path: Path, go_offline, entry: str, named: str | None, damage: bytes
) -> None:
    sha = publish_model(hub, "org/model", tmp_path / "m")
    online = report("org/model", "--no-code-discovery")
    if entry == "header":
        path = header_cache_path("org/model", sha, "model-00001-of-00002.safetensors")
    else:
        path = tmp_path / "cardaudit-cache" / "hub" / "models--org--model" / sha / entry
    assert path.is_file()
    path.write_bytes(damage)
    go_offline()
    result = audit("org/model", "--no-code-discovery")
    if named is None:
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["target"]["offline"]["unavailable"]
        return
    one_line_error(result, f"HF_HUB_OFFLINE is set and {named}", "is not in the cache")
    go_offline(False)  # online, the same damage is simply refetched
    assert without_provenance(report("org/model", "--no-code-discovery")) == online


def test_no_cache_file_holds_the_token(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, go_offline
) -> None:
    publish_model(hub, "org/gated", tmp_path / "m")
    hub.repos["org/gated"].gated = True
    hub.repos["org/gated"].allowed_tokens.add(TOKEN)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    online = report("org/gated", "--no-code-discovery")
    written = [p for p in (tmp_path / "cardaudit-cache").rglob("*") if p.is_file()]
    written += [p for p in (tmp_path / "hf-cache").rglob("*") if p.is_file()]
    assert written and not [p for p in written if TOKEN.encode() in p.read_bytes()]
    monkeypatch.delenv("HF_TOKEN")
    go_offline()
    assert without_provenance(report("org/gated", "--no-code-discovery")) == online


def test_shard_files_listing_is_kept_by_commit(hub: FakeHub, tmp_path: Path) -> None:
    """The listing kept online is the one the Hub sent (sizes and LFS flags included)."""
    files = sharded_files(tmp_path / "s", per_expert_tensors(2, 64, 4, 32, 128), 2)
    sha = hub.commit("org/list", {"README.md": card(), **files})
    report("org/list", "--no-code-discovery")
    kept = tmp_path / "cardaudit-cache" / "hub" / "models--org--list" / sha / "files.json"
    rows = json.loads(kept.read_text())
    assert ["README.md", len(card()), False] in rows
    shard = next(r for r in rows if r[0].endswith(".safetensors"))
    assert shard[2] is True and shard[1] == files[shard[0]].stat().st_size


def test_card_and_licence_history_of_a_busy_repo_offline(
    hub: FakeHub, tmp_path: Path, go_offline
) -> None:
    """The history walk's answers (paths-info at each commit) are kept by commit, so the
    date a promise first appeared is the same offline, with nothing sent."""
    from test_hub_history import busy_repo

    busy_repo(hub, tmp_path / "weights")
    online = report("org/busy", "--no-code-discovery")
    assert [p["first_seen"] for p in online["facts"]["promises"]] == ["2025-06-11"]
    go_offline()
    hub.log.clear()
    offline = report("org/busy", "--no-code-discovery")
    assert offline["target"]["offline"] == {"from_cache": True, "unavailable": []}
    assert without_provenance(offline) == online
    assert hub.log == []
    for kept in (tmp_path / "cardaudit-cache").rglob("paths-info/*"):
        kept.write_text("{not json")  # a damaged answer counts as missing: history not read
    damaged = report("org/busy", "--no-code-discovery")
    [missing] = damaged["target"]["offline"]["unavailable"]
    assert missing.startswith("card and licence history (not read offline: the history of")


@pytest.mark.parametrize("damage", [b"", b"GGUF\x03\x00\x00\x00", b"not a gguf header"])
def test_a_corrupt_gguf_header_counts_as_missing(
    hub: FakeHub, tmp_path: Path, go_offline, damage: bytes
) -> None:
    gguf = tmp_path / "model-Q8_0.gguf"
    _gguf_file(gguf, 3 * 1024**3)
    sha = hub.commit("org/gguf", {"README.md": card(), "model-Q8_0.gguf": gguf})
    online = report("org/gguf", "--no-code-discovery")
    [kept] = (tmp_path / "cardaudit-cache").rglob("gguf-headers/*")
    kept.write_bytes(damage)
    go_offline()
    one_line_error(
        audit("org/gguf", "--no-code-discovery"),
        f"HF_HUB_OFFLINE is set and the header of model-Q8_0.gguf of org/gguf at {sha}",
    )
    go_offline(False)  # online, the damaged header is read again
    hub.log.clear()
    assert without_provenance(report("org/gguf", "--no-code-discovery")) == online
    assert [e for e in hub.log if e.path.endswith(".gguf")]
