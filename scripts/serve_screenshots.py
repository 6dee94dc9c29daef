#!/usr/bin/env python3
"""Look at ``cardaudit serve`` in headless Chromium: the dashboard and a model page as PNGs.

    python scripts/serve_screenshots.py [--db STORE] [--out DIR]

Without ``--db`` a demo store is built first (scripts/serve_demo.py). The server runs as
``cardaudit serve`` in a subprocess on a free 127.0.0.1 port and is stopped afterwards.
Needs ``chromium`` (Debian: ``apt-get install -y chromium``). Prints the files written.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from html_screenshot import CHROMIUM_FLAGS, chromium  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"cardaudit serve exited with {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout:.0f} s")


def shoot(url: str, png: Path, height: int) -> None:
    with tempfile.TemporaryDirectory(prefix="cardaudit-chromium-") as profile:
        subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size=1280,{height}",
                f"--screenshot={png}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "cardaudit-serve")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = args.db
    if db is None:
        db = str(args.out / "demo.db")
        Path(db).unlink(missing_ok=True)
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "serve_demo.py"),
                "--db",
                db,
                "--work",
                str(args.out / "work"),
            ],
            check=True,
        )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    arguments = ["serve", "--db", db, "--port", str(port), "--refresh", "24h"]
    executable = Path(sys.executable).with_name("cardaudit")
    if executable.exists():
        command = [str(executable), *arguments]
    else:
        command = [sys.executable, "-c", "from cardaudit.cli import main; main()", *arguments]
    server = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"{base}/healthz", server)
        dashboard = urllib.request.urlopen(f"{base}/?sort=open&order=desc").read().decode()
        links = re.findall(r'href="/models/([^"]+)">([^<]*)</a>', dashboard)
        if not links:
            raise SystemExit("the dashboard lists no model")
        clover = next((slug for slug, name in links if "clover-model" in name), links[0][0])
        shots = [
            (f"{base}/?sort=open&order=desc", args.out / "dashboard.png", 1000),
            (f"{base}/models/{clover}", args.out / "model.png", 2600),
        ]
        for url, png, height in shots:
            shoot(url, png, height)
            print(f"{png}  {png.stat().st_size:,} bytes  ({url})")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
