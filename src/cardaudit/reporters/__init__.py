"""Reporters: each module has ``render(report, **options) -> str``; chosen by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from cardaudit.errors import UsageError
from cardaudit.model import Report

#: Format name → module under ``cardaudit.reporters`` (imported only when used).
REPORTERS: dict[str, str] = {
    "text": "text",
    "concise": "concise",
    "github": "github",
    "json": "json_report",
    "sarif": "sarif",
    "markdown": "markdown",
    "html": "html",
    "spdx": "spdx",
    "cyclonedx": "cyclonedx",
    "badge": "badge",
    "shields": "badge_endpoint",
}

#: File name per format when writing several at once (``--output-dir``).
OUTPUT_NAMES: dict[str, str] = {
    "text": "cardaudit.txt",
    "concise": "cardaudit.concise.txt",
    "github": "cardaudit.github.txt",
    "json": "cardaudit.json",
    "sarif": "cardaudit.sarif",
    "markdown": "cardaudit.md",
    "html": "cardaudit.html",
    "spdx": "cardaudit.spdx.json",
    "cyclonedx": "cardaudit.cdx.json",
    "badge": "cardaudit-badge.svg",
    "shields": "cardaudit-badge.json",
}


def output_name(name: str) -> str:
    return OUTPUT_NAMES.get(name, f"cardaudit.{name}")


def get_reporter(name: str) -> Callable[..., str]:
    if name not in REPORTERS:
        raise UsageError(f"unknown format {name!r}; choose from {', '.join(REPORTERS)}")
    module = importlib.import_module(f"cardaudit.reporters.{REPORTERS[name]}")
    return module.render


def render(report: Report, name: str, **options: object) -> str:
    return get_reporter(name)(report, **options)
