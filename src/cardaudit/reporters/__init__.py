"""Reporters: each module has ``render(report, **options) -> str``; chosen by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from cardaudit.errors import UsageError
from cardaudit.model import Report

#: Format name → module under ``cardaudit.reporters`` (imported only when used).
REPORTERS: dict[str, str] = {
    "text": "text",
    "json": "json_report",
}


def get_reporter(name: str) -> Callable[..., str]:
    if name not in REPORTERS:
        raise UsageError(f"unknown format {name!r}; choose from {', '.join(REPORTERS)}")
    module = importlib.import_module(f"cardaudit.reporters.{REPORTERS[name]}")
    return module.render


def render(report: Report, name: str, **options: object) -> str:
    return get_reporter(name)(report, **options)
