"""`cardaudit serve` as a real process: it serves the tracked fixtures, and a kill -9 in the
middle of a refresh loses nothing that was recorded (each audit is its own transaction)."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

from cardaudit.serve.targets import slug
from cardaudit.store import Store, key_for_argument
from scenarios import FIXTURES

FIXTURE_NAMES = (
    "clean-card",
    "clean-apache",
    "licence-typo",
    "promises-kept",
    "waived",
    "mem-gib",
    "drv-shapes",
    "clover",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(db: Path, port: int) -> subprocess.Popen:
    code = "from cardaudit.cli import main; main()"
    arguments = ["serve", "--db", str(db), "--port", str(port), "--jobs", "1"]
    return subprocess.Popen(
        [sys.executable, "-c", code, *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "CARDAUDIT_NOW": "2026-06-15"},
    )


def audits(db: Path) -> list[tuple[int, str, int, int]]:
    """(id, target, active findings, errors+warnings+infos) of every stored audit."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(
            "SELECT a.id, a.target_key, "
            "(SELECT count(*) FROM findings f WHERE f.audit_id = a.id AND f.suppressed_by IS NULL),"
            " a.errors + a.warnings + a.infos FROM audits a ORDER BY a.id"
        ).fetchall()


def wait(condition, process: subprocess.Popen, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_serve_process_survives_kill_9_mid_refresh(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    with Store.open(str(db)) as store:
        for name in FIXTURE_NAMES:
            model, code = FIXTURES / name / "model", FIXTURES / name / "code"
            store.track(
                key_for_argument(str(model)),
                str(model),
                str(code) if code.is_dir() else None,
                None,
            )
    port = free_port()
    server = start(db, port)
    try:
        wait(lambda: len(audits(db)) >= 2, server)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    seen = audits(db)
    assert 2 <= len(seen) < len(FIXTURE_NAMES), "the kill was meant to land mid-refresh"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    for _id, _target, findings, counted in seen:
        assert findings == counted  # every recorded audit is whole

    server = start(db, port)
    try:
        wait(lambda: len({row[1] for row in audits(db)}) == len(FIXTURE_NAMES), server)
        after = audits(db)
        assert set(seen) <= set(after)  # nothing recorded before the kill is lost
        base = f"http://127.0.0.1:{port}"
        wait(lambda: _answers(f"{base}/healthz"), server, timeout=30)
        dashboard = urllib.request.urlopen(f"{base}/").read().decode()
        for name in FIXTURE_NAMES:
            assert f"fixtures/{name}/model" in dashboard
        clover = slug(key_for_argument(str(FIXTURES / "clover" / "model")))
        svg = urllib.request.urlopen(f"{base}/badge/{clover}.svg").read()
        assert ET.fromstring(svg).attrib["aria-label"].startswith("model audit: ")
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0 or server.returncode < 0


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2).read()
        return True
    except OSError:
        return False
