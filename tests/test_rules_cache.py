"""The parsed catalogue in the user cache: the same values as parsing, a new entry when a
file changes, and a damaged entry is only a miss."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardaudit import disk_cache, rules
from cardaudit.rules_cache import NAMESPACE, parsed_catalogue


def _catalogue_copy(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = tmp_path / "rules"
    shutil.copytree(rules.rules_dir(), root)
    files = sorted(root.glob("*.yaml")) + sorted((root / "tables").glob("*.yaml"))
    return root, files


def _entries() -> list[Path]:
    return sorted((disk_cache.cache_root() / NAMESPACE).glob("*.json"))


def _counting_parser(calls: list[str]):
    def parse(path: Path):
        calls.append(path.name)
        return rules._load_yaml(path)

    return parse


def test_a_warm_catalogue_equals_the_parsed_one_and_parses_nothing(tmp_path):
    root, files = _catalogue_copy(tmp_path)
    calls: list[str] = []
    cold = parsed_catalogue(files, root, _counting_parser(calls), "test")
    assert len(calls) == len(files) and len(_entries()) == 1
    calls.clear()
    warm = parsed_catalogue(files, root, _counting_parser(calls), "test")
    assert calls == []
    assert warm == cold == {p.relative_to(root).as_posix(): rules._load_yaml(p) for p in files}


def test_editing_a_rules_file_is_a_new_entry(tmp_path):
    root, files = _catalogue_copy(tmp_path)
    parsed_catalogue(files, root, rules._load_yaml, "test")
    table = root / "tables" / "licences.yaml"
    table.write_text(table.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    rule = root / "LIC001.yaml"
    rule.write_text(
        rule.read_text(encoding="utf-8").replace("title:", "title: Edited", 1), encoding="utf-8"
    )
    calls: list[str] = []
    again = parsed_catalogue(files, root, _counting_parser(calls), "test")
    assert len(calls) == len(files)  # a miss: every file parsed again
    assert again["LIC001.yaml"]["title"].startswith("Edited")
    assert len(_entries()) == 2
    assert parsed_catalogue(files, root, rules._load_yaml, "other parser") == again
    assert len(_entries()) == 3  # the parser is part of the key


@pytest.mark.parametrize("damage", ["{not json", '{"files": 3}', "[]", "", '{"files": {}}'])
def test_a_damaged_entry_is_ignored(tmp_path, damage):
    root, files = _catalogue_copy(tmp_path)
    expected = parsed_catalogue(files, root, rules._load_yaml, "test")
    (entry,) = _entries()
    entry.write_text(damage, encoding="utf-8")
    calls: list[str] = []
    assert parsed_catalogue(files, root, _counting_parser(calls), "test") == expected
    assert len(calls) == len(files)
    assert json.loads(entry.read_text(encoding="utf-8"))["files"]  # rewritten whole


def test_values_json_would_change_are_parsed_every_run(tmp_path):
    root = tmp_path / "rules"
    root.mkdir()
    (root / "dates.yaml").write_text("until: 2026-01-01\n1: one\n")
    (root / "plain.yaml").write_text("a: [1, 2.5, true, null]\n")
    files = sorted(root.glob("*.yaml"))
    first = parsed_catalogue(files, root, rules._load_yaml, "test")
    assert first["dates.yaml"] == {"until": datetime.date(2026, 1, 1), 1: "one"}
    warm = parsed_catalogue(files, root, rules._load_yaml, "test")
    assert "dates.yaml" not in warm  # the caller parses it itself
    assert warm["plain.yaml"] == {"a": [1, 2.5, True, None]}


def test_a_broken_file_is_never_cached_and_still_reports_its_error(tmp_path):
    root, files = _catalogue_copy(tmp_path)
    (root / "LIC001.yaml").write_text("id: LIC001\ntitle: [unclosed\n")
    parsed = parsed_catalogue(files, root, rules._load_yaml, "test")
    assert "LIC001.yaml" not in parsed
    assert _entries() == []
    with pytest.raises(rules.RulesError, match=r"LIC001.yaml line \d+: invalid YAML"):
        rules._load_yaml(root / "LIC001.yaml")


def test_the_catalogue_loads_alike_cold_warm_and_without_the_cache(tmp_path):
    """load_rules / load_table in fresh interpreters: cold, warm, damaged and off."""
    code = (
        "import json\n"
        "from cardaudit.rules import load_rules, load_table\n"
        "rules = {k: [r.title, r.severity, dict(r.params)] for k, r in load_rules().items()}\n"
        "print(json.dumps([rules, load_table('licences')], sort_keys=True, default=str))\n"
    )
    cache = tmp_path / "cache"
    env = {"CARDAUDIT_CACHE": str(cache), "PATH": "/usr/bin:/bin"}

    def run(**extra: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        assert result.stderr == ""  # no traceback, no warning
        return result.stdout

    cold = run()
    (entry,) = (cache / NAMESPACE).glob("*.json")
    assert run() == cold
    entry.write_bytes(b"\x00\xff garbage")
    assert run() == cold
    assert run(CARDAUDIT_NO_CACHE="1") == cold
