"""Every way fetching from the Hub can fail is one clear line and exit 2; tokens never leak."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources import hub_client
from hub_repos import publish_model
from hub_server import FakeHub

runner = CliRunner()
TOKEN = "hf_TestSecretToken0123456789abcdefXYZ"


@pytest.fixture
def hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    monkeypatch.setattr(hub_client, "BACKOFF_SECONDS", 0.0)
    return hub


def run(*args: str, quiet: bool = True):
    options = ["--no-code-discovery", "--fail-on", "never", *(["--quiet"] if quiet else [])]
    return runner.invoke(app, ["audit", *args, *options])


def one_line_error(result, *phrases: str) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cardaudit: error: ")
    assert "Traceback" not in result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def test_repo_not_found(hub: FakeHub) -> None:
    line = one_line_error(run("org/missing"), "model repo org/missing not found on the Hub")
    assert "hf auth login" in line
    assert line.startswith("cardaudit: error: path not found: org/missing; as a Hub repo: ")
    hf_url = one_line_error(run("hf://org/missing"))
    assert hf_url.startswith("cardaudit: error: model repo org/missing not found on the Hub")


def test_revision_not_found(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/model", tmp_path)
    one_line_error(
        run("org/model", "--revision", "no-such-branch"),
        "revision 'no-such-branch' not found in model repo org/model",
    )


def test_private_repo_without_token(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/private", tmp_path)
    hub.repos["org/private"].private = True
    one_line_error(run("org/private"), "private and no token was sent", "HF_TOKEN")


def test_private_repo_with_a_token_that_cannot_read_it(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_model(hub, "org/private", tmp_path)
    hub.repos["org/private"].private = True
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    line = one_line_error(run("org/private"), "private and your token cannot read it")
    assert TOKEN not in line


def test_gated_without_access_says_how_to_request_it(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/gated", tmp_path)
    hub.repos["org/gated"].gated = True
    one_line_error(
        run("org/gated"),
        "model org/gated is gated",
        f"request access at {hub.endpoint}/org/gated",
    )


def test_gated_with_a_token_without_access(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_model(hub, "org/gated", tmp_path)
    hub.repos["org/gated"].gated = True
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = run("org/gated")
    one_line_error(result, "has not been granted access")
    assert TOKEN not in result.output


def test_gated_with_access_uses_the_token_and_never_prints_it(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = publish_model(hub, "org/gated", tmp_path)
    hub.repos["org/gated"].gated = True
    hub.repos["org/gated"].allowed_tokens.add(TOKEN)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    for args in (["-f", "json"], ["-f", "text"]):
        result = run("org/gated", *args)
        assert result.exit_code == 0, result.output
        assert TOKEN not in result.stdout and TOKEN not in result.stderr
    data = json.loads(run("org/gated", "-f", "json").stdout)
    assert data["target"]["revision"] == sha
    hub_requests = [e for e in hub.log if e.host == "hub"]
    assert hub_requests and all(e.authorization == f"Bearer {TOKEN}" for e in hub_requests)
    # The token is not forwarded to the CDN on the LFS redirect.
    assert all(e.authorization is None for e in hub.log if e.host == "cdn")


def test_invalid_token(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hub.fault(
        r"^/api/models/", 401, body=b'{"error": "Invalid credentials in Authorization header"}'
    )
    result = run("org/model")
    one_line_error(result, "the Hub rejected your token (HTTP 401)")
    assert TOKEN not in result.output


def test_token_from_hf_login_file(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(token_file))
    publish_model(hub, "org/private", tmp_path / "m")
    hub.repos["org/private"].private = True
    hub.repos["org/private"].allowed_tokens.add(TOKEN)
    result = run("org/private", "-f", "json")
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output


def test_retries_5xx_honouring_retry_after(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(hub_client, "_sleep", waits.append)
    publish_model(hub, "org/model", tmp_path)
    hub.fault(r"^/api/models/org/model", 503, headers={"Retry-After": "2"}, times=2)
    # Header reads by Range are ours to retry (the library retries its own downloads).
    hub.fault(r"00001-of-00002\.safetensors$", 429, headers={"Retry-After": "1"}, times=1)
    result = run("org/model", "-f", "json")
    assert result.exit_code == 0, result.output
    assert waits == [2.0, 2.0, 1.0]
    statuses = [e.status for e in hub.log if e.path.split("?")[0] == "/api/models/org/model"]
    assert statuses == [503, 503, 200]


def test_backoff_doubles_without_retry_after(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(hub_client, "_sleep", waits.append)
    monkeypatch.setattr(hub_client, "BACKOFF_SECONDS", 0.5)
    hub.fault(r"^/api/models/", 502)
    one_line_error(run("org/model"), "the Hub answered HTTP 502 after 4 attempts")
    assert waits == [0.5, 1.0, 2.0]
    assert len(hub.log) == 4


def test_download_failing_after_the_librarys_own_retries(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # huggingface_hub's backoff
    publish_model(hub, "org/model", tmp_path)
    hub.fault(r"/resolve/[0-9a-f]+/README\.md$", 503)
    one_line_error(run("org/model"), "the Hub answered HTTP 503 while trying to download README.md")
    assert 2 <= len(hub.requests("HEAD", "README.md")) <= 10


def test_rate_limit_longer_than_we_wait(hub: FakeHub) -> None:
    hub.fault(r"^/api/models/", 429, headers={"Retry-After": "3600"})
    one_line_error(run("org/model"), "rate-limiting", "3600 s")
    assert len(hub.log) == 1


def test_timeout(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDAUDIT_TIMEOUT", "0.2")
    monkeypatch.setattr(hub_client, "ATTEMPTS", 2)
    hub.fault(r"^/api/models/", 200, delay=0.6)
    one_line_error(run("org/model"), "did not answer within 0.2 s (2 attempts)")


def test_network_down(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setattr(hub_client, "BACKOFF_SECONDS", 0.0)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    one_line_error(run("org/model"), f"cannot reach the Hub at http://127.0.0.1:{port}")


@pytest.mark.parametrize(
    ("pattern", "body"),
    [
        (r"^/api/models/org/model", b"{not json"),
        (r"^/api/models/org/model", b"[1, 2]"),
        (r"^/api/models/org/model", b'{"id": "org/model"}'),
        (r"/tree/", b'{"oops": true}'),
    ],
)
def test_malformed_responses(hub: FakeHub, tmp_path: Path, pattern: str, body: bytes) -> None:
    publish_model(hub, "org/model", tmp_path)
    hub.fault(pattern, 200, body=body, headers={"Content-Type": "application/json"})
    one_line_error(run("org/model"), "malformed response from")


def test_offline_mode_is_explained(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    # Nothing cached (tests/test_hub_offline.py audits from what an online audit cached).
    one_line_error(
        run("hf://org/model"),
        "HF_HUB_OFFLINE is set and revision 'main' of org/model is not in the cache: "
        "run the audit once online (without HF_HUB_OFFLINE) to cache it",
    )
    assert hub.log == []


# --------------------------------------------------------------------------- progress


def test_progress_on_stderr_unless_quiet_or_json(hub: FakeHub, tmp_path: Path) -> None:
    publish_model(hub, "org/model", tmp_path)
    text = run("org/model", quiet=False)
    assert text.exit_code == 0
    assert "Resolving org/model@main" in text.stderr
    assert "Reading safetensors headers of org/model (2/2)" in text.stderr
    assert run("org/model", "--quiet", quiet=False).stderr == ""
    assert run("org/model", "-f", "json", quiet=False).stderr == ""
    to_file = run("org/model", "-f", "json", "-o", str(tmp_path / "r.json"), quiet=False)
    assert "Resolving" in to_file.stderr


def test_revision_on_a_local_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n")
    one_line_error(run(str(tmp_path), "--revision", "main"), "--revision applies to Hub targets")


def test_the_retry_loop_is_tenacitys_and_honours_retry_after_dates() -> None:
    import email.utils
    import time

    import tenacity

    class Answer(Exception):
        def __init__(self, status: int, headers: dict[str, str]) -> None:
            self.response = type("R", (), {"status_code": status, "headers": headers})()

    policy = hub_client.retry_policy(3)
    assert isinstance(policy, tenacity.Retrying)
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    calls: list[int] = []
    waits: list[float] = []
    policy.sleep = waits.append

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise Answer(503, {"retry-after": when})
        if len(calls) == 2:
            raise Answer(502, {})
        return "ok"

    assert policy(flaky) == "ok" and len(calls) == 3
    assert 25 <= waits[0] <= 30 and waits[1] == hub_client.BACKOFF_SECONDS * 2
    with pytest.raises(Answer):  # not transient: no retry, the error itself comes back
        hub_client.retry_policy(3)(lambda: (_ for _ in ()).throw(Answer(404, {})))


def test_a_request_from_an_earlier_test_is_not_logged_in_the_next(hub: FakeHub) -> None:
    """A delayed fault still sleeping when its test ends must not appear in the next test's
    log (under pytest -n the next test starts right away)."""
    import threading
    import urllib.request

    hub.fault(r"^/api/models/", 200, delay=0.3)
    request = threading.Thread(
        target=lambda: urllib.request.urlopen(f"{hub.endpoint}/api/models/org/m", timeout=5).read()
    )
    request.start()
    time.sleep(0.1)
    hub.reset()  # what the autouse fixture does before the next test
    request.join()
    assert hub.log == []
