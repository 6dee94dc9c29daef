"""A hostile or broken Hub: drip-fed bodies end at a deadline, redirects off the Hub are
refused, and the token never leaves the Hub's origin (issue 14 §2, the local Hub)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hub_repos import publish_model
from hub_server import FakeHub
from test_hub_errors import TOKEN, one_line_error, run


@pytest.fixture
def hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    from cardaudit.sources import hub_client

    monkeypatch.setattr(hub_client, "BACKOFF_SECONDS", 0.0)
    return hub


def test_drip_fed_api_answer_ends_at_the_audit_timeout(hub: FakeHub, monkeypatch) -> None:
    """A byte every 0.3 s never trips the 2 s read timeout; --timeout 2 ends it anyway."""
    monkeypatch.setenv("CARDAUDIT_TIMEOUT", "2")
    fault = hub.fault(r"^/api/models/", 200, body=b"{" + b" " * 1000 + b"}", drip=0.3)
    started = time.monotonic()
    try:
        line = one_line_error(run("org/model", "--timeout", "2"), "--timeout of 2 s")
    finally:
        fault.stop.set()
    assert time.monotonic() - started < 20
    assert "too slowly" in line


def test_drip_fed_request_ends_at_its_own_deadline(hub: FakeHub, monkeypatch) -> None:
    """Without an audit limit, one request still ends after 6 × the read timeout."""
    monkeypatch.setenv("CARDAUDIT_TIMEOUT", "0.5")
    fault = hub.fault(r"^/api/models/", 200, body=b"{" + b" " * 1000 + b"}", drip=0.1)
    started = time.monotonic()
    try:
        one_line_error(run("org/model", "--timeout", "600"), "took more than 3 s")
    finally:
        fault.stop.set()
    assert time.monotonic() - started < 20


def test_api_redirect_to_another_host_is_refused(hub: FakeHub) -> None:
    hub.fault(r"^/api/models/", 302, headers={"Location": f"{hub.cdn_endpoint}/api/evil"})
    one_line_error(run("org/model"), "redirected an API answer", "127.0.0.2", "not followed")
    assert not [e for e in hub.log if e.host == "cdn"]


def test_file_redirect_outside_the_hubs_storage_is_refused(
    hub: FakeHub, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    publish_model(hub, "org/model", tmp_path)
    hub.fault(r"/resolve/[0-9a-f]+/README\.md$", 302, headers={"Location": "http://localhost:9/x"})
    line = one_line_error(run("org/model"), "localhost")
    assert TOKEN not in line


def test_token_reaches_the_hub_only(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    """Weight headers come from the Hub's file storage (another host) without the token."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    publish_model(hub, "org/model", tmp_path)
    result = run("org/model", "-f", "json")
    assert result.exit_code == 0, result.output
    cdn = [e for e in hub.log if e.host == "cdn"]
    assert cdn and all(e.authorization is None for e in cdn)
    assert all(e.authorization == f"Bearer {TOKEN}" for e in hub.log if e.host == "hub")


def test_storage_hosts_of_the_real_hub() -> None:
    from cardaudit.sources.hub_http import HttpGuard

    guard = HttpGuard("https://huggingface.co", 20.0)
    assert guard.storage_host("cas-bridge.xethub.hf.co")
    assert guard.storage_host("cdn-lfs-us-1.hf.co") and guard.storage_host("huggingface.co")
    assert not guard.storage_host("evil.example") and not guard.storage_host("hf.co.evil.example")


# --------------------------------------------------------------------------- §4: what holds


def test_connection_reset_is_retried_then_one_line(hub: FakeHub) -> None:
    hub.fault(r"^/api/models/", 200, reset=True)
    one_line_error(run("org/model"), "cannot reach the Hub", "4 attempts")


def test_truncated_body_is_one_line(hub: FakeHub) -> None:
    hub.fault(r"^/api/models/", 200, body=b'{"id": "org/mo', headers={"Content-Length": "500"})
    line = one_line_error(run("org/model"))
    assert "Traceback" not in line


def test_range_ignored_reads_only_the_header(hub: FakeHub, tmp_path: Path) -> None:
    """A storage server that ignores Range and sends the whole shard: the client stops
    reading after the header and the audit's counts are the same."""
    import json

    publish_model(hub, "org/model", tmp_path)
    expected = json.loads(run("org/model", "-f", "json").stdout)["facts"]["parameters"]
    hub.reset()
    publish_model(hub, "org/model", tmp_path / "again")
    shard = next(tmp_path.glob("*.safetensors"))
    body = shard.read_bytes()[: 1 << 20]
    hub.fault(r"^/cdn/.*00001-of-00002\.safetensors$", 200, body=body)
    result = run("org/model", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["facts"]["parameters"] == expected
    ignored = [e for e in hub.log if e.host == "cdn" and e.status == 200 and e.range]
    assert ignored, "the fault did not apply"


def test_token_is_in_no_output_cache_or_store(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    publish_model(hub, "org/model", tmp_path / "m")
    store = tmp_path / "store.db"
    result = run("org/model", "-f", "json", "--record", "--db", f"sqlite:///{store}")
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output
    import os

    roots = [store, Path(os.environ["CARDAUDIT_CACHE"]), Path(os.environ["HF_HUB_CACHE"])]
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in files:
            assert TOKEN.encode() not in path.read_bytes(), path


def test_gguf_header_larger_than_the_cap_is_not_fetched(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GGUF whose header never ends within ``GGUF_MAX_HEADER`` bytes: reading stops there
    with an error naming the bound, whatever the file's size (here 20 GB, sparse)."""
    from cardaudit.sources import AuditRequest, acquire
    from cardaudit.sources import hub as hub_source
    from hub_repos import card
    from test_hub import _gguf_file

    monkeypatch.setattr(hub_source, "GGUF_MAX_HEADER", hub_source.GGUF_FIRST_READ)
    path = tmp_path / "model-Q8_0.gguf"
    header = _gguf_file(path, 20 * 1024**3)
    assert header > hub_source.GGUF_FIRST_READ  # the 80k-token vocabulary
    hub.commit("org/gguf", {"README.md": card(licence="mit"), "model-Q8_0.gguf": path})
    [parsed] = acquire(AuditRequest(target="org/gguf", code_discovery=False)).gguf
    cap = hub_source.GGUF_FIRST_READ
    assert parsed.error == f"no complete GGUF header in its first {cap} bytes"
    sent = sum(e.body_bytes for e in hub.log if e.host == "cdn")
    assert sent <= hub_source.GGUF_MAX_HEADER
