"""docs/rules.md is generated from the catalogue and committed up to date."""

from __future__ import annotations

from cardaudit.docs import TARGET, render
from cardaudit.rules import load_rules


def test_rules_doc_is_up_to_date() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(load_rules()), (
        "docs/rules.md is stale: run `python -m cardaudit.docs`"
    )


def test_rules_doc_lists_every_rule() -> None:
    text = render(load_rules())
    for rule_id in load_rules():
        assert f"### {rule_id}" in text
