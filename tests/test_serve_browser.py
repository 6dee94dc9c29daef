"""The pages in a real browser: headless Chromium loads the dashboard and the model page of a
hostile card from a live server, and the DOM it built has no script, no event handler and
no `javascript:` link (skipped where Chromium is not installed: `apt-get install chromium`)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cardaudit.serve.app import create_app
from cardaudit.serve.service import ServeSettings, Service
from test_serve import HOSTILE_CARD, TOKEN, auth, drain

CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser") if shutil.which(name)), None
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


class DomScan(HTMLParser):
    """What a parsed DOM holds that could run: script elements, on* attributes, js: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.handlers: list[str] = []
        self.js_urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag}.{name}")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.js_urls.append(value or "")


def dump_dom(url: str) -> str:
    with tempfile.TemporaryDirectory(prefix="cardaudit-chromium-") as profile:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    return done.stdout


@pytest.fixture
def live(hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import uvicorn

    from cardaudit.sources import hub_client

    monkeypatch.setattr(hub_client, "_sleep", lambda seconds: None)
    service = Service(ServeSettings(db=str(tmp_path / "browser.db"), token=TOKEN))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield service, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        service.close()


def test_hostile_card_in_chromium(hub, live) -> None:
    import httpx

    service, base = live
    hub.commit("evil/card", {"README.md": HOSTILE_CARD})
    added = httpx.post(f"{base}/api/tracked", json={"target": "evil/card"}, headers=auth())
    assert added.status_code == 201
    drain(service)
    for path in ("/", "/models/evil/card", "/models/evil/card/report"):
        dom = dump_dom(base + path)
        assert "evil/card" in dom, path
        scan = DomScan()
        scan.feed(dom)
        assert (scan.scripts, scan.handlers, scan.js_urls) == (0, [], []), path
        assert "\u202e" not in dom, path
    assert "&lt;script&gt;alert('lic')&lt;/script&gt;" in dump_dom(base + "/")
