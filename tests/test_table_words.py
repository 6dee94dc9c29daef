"""Word lists in rules/tables are words: YAML reads a bare no / on / yes / off in a list as a
boolean, which then matches nothing (it hid 'No commercial use.' and the stop word 'on')."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

TABLES = sorted((Path(__file__).parents[1] / "rules" / "tables").glob("*.yaml"))


def _booleans_in_lists(node: Any, path: str = "") -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _booleans_in_lists(value, f"{path}/{key}")
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, bool):
                found.append(f"{path}: {item}")
            found += _booleans_in_lists(item, path)
    return found


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.stem)
def test_no_word_list_holds_a_yaml_boolean(table: Path) -> None:
    assert _booleans_in_lists(yaml.safe_load(table.read_text(encoding="utf-8"))) == []
