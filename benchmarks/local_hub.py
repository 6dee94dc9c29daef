"""The local test Hub for benchmarks: tests/hub_server.py, with every cache in a temp dir."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]


@contextmanager
def local_hub() -> Iterator[tuple[object, Path]]:
    """A running FakeHub and a work folder; the environment points huggingface_hub and
    cardaudit at them (set before huggingface_hub is imported: it reads these once)."""
    from hub_server import FakeHub

    hub = FakeHub()
    work = Path(tempfile.mkdtemp(prefix="cardaudit-bench-"))
    os.environ.update(
        {
            "HF_ENDPOINT": hub.endpoint,
            "HF_HOME": str(work / "hf-home"),
            "HF_HUB_CACHE": str(work / "hf-cache"),
            "CARDAUDIT_CACHE": str(work / "cardaudit-cache"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
            "CARDAUDIT_HUB_STORAGE_HOSTS": "127.0.0.2",  # the FakeHub's CDN
        }
    )
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        os.environ.pop(name, None)
    try:
        yield hub, work
    finally:
        hub.close()
        shutil.rmtree(work, ignore_errors=True)
