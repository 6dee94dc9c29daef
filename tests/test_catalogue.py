"""The rule catalogue is complete: every rule has its YAML, its code and a triggering fixture."""

from __future__ import annotations

import json

from cardaudit.checks.registry import registered_checks
from cardaudit.rules import load_rules
from scenarios import golden_path, scenario_names


def test_every_rule_has_a_check() -> None:
    missing = sorted(set(load_rules()) - set(registered_checks()))
    assert not missing, f"rules without code: {missing}"


def test_every_check_has_a_rule() -> None:
    missing = sorted(set(registered_checks()) - set(load_rules()))
    assert not missing, f"checks without rules/<id>.yaml: {missing}"


def test_every_rule_is_triggered_by_a_fixture() -> None:
    triggered = set()
    for name in scenario_names():
        data = json.loads(golden_path(name).read_text())
        triggered |= {finding["rule_id"] for finding in data["findings"]}
    missing = sorted(set(load_rules()) - triggered)
    assert not missing, f"rules no fixture triggers: {missing}"


def test_rule_texts_are_substantive() -> None:
    for rule in load_rules().values():
        assert len(rule.why) > 40, rule.id
        assert rule.fix and rule.checks and rule.title, rule.id
