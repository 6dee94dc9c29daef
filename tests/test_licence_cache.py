"""Licence identifications are remembered by text hash in the user cache: a warm run asks
no engine, and a damaged or foreign entry is only a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract import licence_id
from cardaudit.extract.licence_id import identify_text

ROOT = Path(__file__).resolve().parents[1]
APACHE = (ROOT / "fixtures" / "notice-dropped" / "model" / "LICENSE").read_text()
MIT = (ROOT / "fixtures" / "clean-llama" / "code" / "LICENSE").read_text()
NOTICES = APACHE.split("END OF TERMS AND CONDITIONS")[0] + "END OF TERMS AND CONDITIONS\n"
COMBINED = NOTICES + "\n" + "=" * 60 + "\nTHIRD-PARTY NOTICES\n\n" + MIT


def engines_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(_text: str) -> None:
        raise AssertionError("an engine ran although the answer was cached")

    monkeypatch.setattr(licence_id, "_askalono", forbidden)
    monkeypatch.setattr(licence_id, "_model_store", forbidden)


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("licence-id-*/*.json"))


@pytest.fixture(autouse=True)
def fresh_memo() -> None:
    identify_text.cache_clear()  # the in-process memo would hide the disk cache


def test_a_warm_identification_runs_no_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path))
    cold = identify_text(COMBINED)
    assert (cold.licence, cold.also) == ("Apache-2.0", ("MIT",))
    assert len(entries(tmp_path)) == 3  # the whole text and its two parts
    identify_text.cache_clear()
    engines_forbidden(monkeypatch)
    assert identify_text(COMBINED) == cold


def test_unrecognised_texts_are_remembered_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path))
    prose = "This model card describes a small sentiment classifier.\n" * 3
    cold = identify_text(prose)
    identify_text.cache_clear()
    engines_forbidden(monkeypatch)
    assert identify_text(prose) == cold


@pytest.mark.parametrize(
    "damage",
    [
        "not json",
        json.dumps({"answer": {"licence": "MIT", "score": "high", "engine": "askalono"}}),
        json.dumps({"answer": {"licence": 1, "score": 1.0, "engine": "x", "complete": True}}),
        json.dumps(["answer"]),
    ],
)
def test_a_damaged_entry_is_a_miss(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damage: str
) -> None:
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path))
    cold = identify_text(APACHE)
    (entry,) = entries(tmp_path)
    entry.write_text(damage)
    identify_text.cache_clear()
    assert identify_text(APACHE) == cold
    assert json.loads(entry.read_text())["answer"]["licence"] == "Apache-2.0"  # rewritten


def test_no_cache_when_turned_off_or_unwritable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path / "off"))
    monkeypatch.setenv("CARDAUDIT_NO_CACHE", "1")
    assert identify_text(MIT).licence == "MIT"
    assert not (tmp_path / "off").exists()
    monkeypatch.delenv("CARDAUDIT_NO_CACHE")
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("CARDAUDIT_CACHE", str(blocker))
    identify_text.cache_clear()
    assert identify_text(MIT).licence == "MIT"  # the audit goes on without a cache
