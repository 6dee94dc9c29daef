"""Test isolation: no real caches, tokens, colours or terminal widths leak into tests."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
GOLDEN = Path(__file__).parent / "golden"

_HOME = tempfile.mkdtemp(prefix="cardaudit-tests-")
# Set before anything imports huggingface_hub: it reads these once, at import.
os.environ.update(
    {
        "HF_HOME": _HOME,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "HF_HUB_DISABLE_XET": "1",
        "NO_COLOR": "1",
        "COLUMNS": "120",
        # Upstream packages (transformers) are looked up only where a test puts them.
        "CARDAUDIT_UPSTREAM_PATH": _HOME,
    }
)
for _var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
    os.environ.pop(_var, None)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every cache and data path at a per-test temp dir."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path / "cardaudit-cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
