"""Registry of checks: each rule id maps to one pure function of evidence and facts."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from cardaudit.model import Evidence, Facts, Hit
from cardaudit.rules import Rule

CheckFn = Callable[[Evidence, Facts, Rule], Iterable[Hit]]

#: Modules under ``cardaudit.checks`` that register checks; one per rule family.
CHECK_MODULES: tuple[str, ...] = (
    "sources",
    "licence",
    "derivative_licence",
    "licence_statements",
    "base_licence",
    "licence_modified",
    "attribution",
    "base_attribution",
    "derivation",
    "code_attribution",
    "waivers",
    "memory",
    "memory_files",
    "tracking",
    "promises",
    "claims",
    "acquisition",
)

_REGISTRY: dict[str, CheckFn] = {}


class NotApplicable(Exception):
    """Raised by a check when its rule does not apply to this repo (e.g. no base model)."""


class NotChecked(Exception):
    """Raised by a check whose rule concerns this repo but an input is missing (a named base
    model not supplied, a file not captured): the outcome ``not_checked``, never a pass."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fix = fix


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the check for ``rule_id``."""

    def register(fn: CheckFn) -> CheckFn:
        if rule_id in _REGISTRY and _REGISTRY[rule_id] is not fn:
            raise ValueError(f"two checks registered for {rule_id}")
        _REGISTRY[rule_id] = fn
        return fn

    return register


def registered_checks() -> dict[str, CheckFn]:
    """Every registered check by rule id (importing the check modules once)."""
    for module in CHECK_MODULES:
        importlib.import_module(f"cardaudit.checks.{module}")
    return dict(sorted(_REGISTRY.items()))
