"""Riders read from the structure of the sentence: what it governs (code or weights), whose
it is (this model, the base, an earlier version), whether it still holds (lifted), and the
restrictions beside commercial use (field of use, redistribution)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.licence_reading import restrictions_in
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.rules import load_table
from cardaudit.sources import AuditRequest


def audit_json(folder: Path) -> dict:
    from cardaudit.reporters.json_report import report_to_json

    report = audit(AuditRequest(target=str(folder)), Policy())
    return json.loads(json.dumps(report_to_json(report)))


def repo(root: Path, card: str, files: dict[str, str] | None = None, name: str = "m") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(card, encoding="utf-8")
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def lic_rows(report: dict) -> set[tuple]:
    return {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in report["findings"]
        if f["rule_id"].startswith("LIC")
    }


def test_every_word_of_the_statement_table_is_a_string() -> None:
    """YAML reads a bare `no` as False: a marker that silently became "False" never matched."""

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                assert isinstance(item, str), item
                walk(item)

    walk(load_table("licence_statements"))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("No commercial use.", ["non_commercial"]),
        ("There is no restriction on commercial use.", []),
        ("本モデルは研究目的でのみ利用可能です", ["research_only"]),
        ("非営利目的に限り利用できます", ["non_commercial"]),
        ("商用利用不可", ["non_commercial"]),
        ("商用利用には別途許諾が必要です。", ["commercial_permission"]),
    ],
)
def test_restriction_modality_beyond_english_and_chinese(sentence: str, expected: list) -> None:
    assert restrictions_in(sentence) == expected
