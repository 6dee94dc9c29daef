"""The rule catalogue: one YAML file per rule id under ``rules/``, plus data tables.

Rules are data. Code refers to a rule by id; titles, severities, explanations,
remediation and tunable parameters all live in the YAML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from cardaudit.errors import RulesError
from cardaudit.model import SEVERITIES, Severity, frozen_mapping

RULE_ID = re.compile(r"^(LIC|ATT|DRV|MEM|PRM|CLM|SRC)\d{3}$")
REQUIRED_KEYS = ("id", "title", "severity", "checks", "why", "fix")


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: Severity
    checks: str
    why: str
    fix: str
    lifecycle: str = "stable"
    references: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=frozen_mapping)

    @property
    def family(self) -> str:
        return self.id[:3]

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)


def rules_dir() -> Path:
    """The catalogue folder: packaged copy in a wheel, the repo's ``rules/`` otherwise."""
    packaged = Path(__file__).parent / "_rules"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[2] / "rules"
    if source.is_dir():
        return source
    raise RulesError("rule catalogue not found (expected rules/ beside src/ or cardaudit/_rules)")


def _load_yaml(path: Path) -> Any:
    """A catalogue file, parsed with libyaml's C loader when PyYAML has it (several times
    faster than the pure-Python one, same results). These are the project's own files:
    audited YAML (front matter) is parsed in ``sources/card.py`` under its own bounds."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except OSError as exc:
        raise RulesError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RulesError(f"{path.name}{where}: invalid YAML: {problem}") from exc


def _parser_id() -> str:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return f"pyyaml-{yaml.__version__}-{loader.__name__}"


@cache
def _catalogue() -> Mapping[str, Any]:
    """Every catalogue file's parsed value by relative path, from the user cache when the
    files are unchanged (:mod:`cardaudit.rules_cache`)."""
    from cardaudit.rules_cache import parsed_catalogue

    root = rules_dir()
    files = sorted(root.glob("*.yaml")) + sorted((root / "tables").glob("*.yaml"))
    return parsed_catalogue(files, root, _load_yaml, _parser_id())


def _parsed(path: Path) -> Any:
    """One catalogue file's value: from :func:`_catalogue`, else parsed now (which raises
    its error)."""
    try:
        name = path.relative_to(rules_dir()).as_posix()
    except ValueError:
        return _load_yaml(path)
    found = _catalogue().get(name, _ABSENT)
    return _load_yaml(path) if found is _ABSENT else found


_ABSENT = object()


def _rule_from(data: Any, path: Path) -> Rule:
    if not isinstance(data, dict):
        raise RulesError(f"{path.name}: a rule file must hold a mapping")
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise RulesError(f"{path.name}: missing {', '.join(missing)}")
    if data["id"] != path.stem:
        raise RulesError(f"{path.name}: id {data['id']!r} does not match the file name")
    if data["severity"] not in SEVERITIES:
        raise RulesError(f"{path.name}: severity must be one of {', '.join(SEVERITIES)}")
    return Rule(
        id=data["id"],
        title=str(data["title"]).strip(),
        severity=data["severity"],
        checks=str(data["checks"]).strip(),
        why=str(data["why"]).strip(),
        fix=str(data["fix"]).strip(),
        lifecycle=str(data.get("lifecycle", "stable")),
        references=tuple(str(ref) for ref in data.get("references") or ()),
        params=frozen_mapping(data.get("params") or {}),
    )


@cache
def load_rules() -> Mapping[str, Rule]:
    """Every rule in the catalogue, by id, in id order."""
    rules: dict[str, Rule] = {}
    for path in sorted(rules_dir().glob("*.yaml")):
        if RULE_ID.match(path.stem):
            rules[path.stem] = _rule_from(_parsed(path), path)
    if not rules:
        raise RulesError("the rule catalogue is empty")
    return frozen_mapping(rules)


@cache
def load_table(name: str) -> Any:
    """A data table from ``rules/tables/<name>.yaml`` (licences, GPUs, patterns...)."""
    path = rules_dir() / "tables" / f"{name}.yaml"
    if not path.is_file():
        raise RulesError(f"data table {name!r} not found in {path.parent}")
    return _parsed(path)
