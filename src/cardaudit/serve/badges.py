"""Badges served for a repo: the verdict of its stored audit, or pending / unknown.

The SVG is drawn by :func:`cardaudit.reporters.badge.badge_svg` and the verdict comes from
:func:`cardaudit.reporters.common.verdict`, as ``cardaudit audit -f badge`` does; ``fail_on``
only decides whether the message says "failing" (findings at or above it) so a badge never
disagrees with the gate the maintainer chose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property

from cardaudit.model import Report
from cardaudit.reporters.badge import LABEL, badge_svg
from cardaudit.reporters.common import BADGE_COLOURS, plural, verdict

FAIL_ON = ("error", "warning", "info", "never")


@dataclass(frozen=True)
class Badge:
    """What a badge says, and how long caches may keep it."""

    message: str
    colour: str
    state: str  # "audited", "pending", "unknown"
    etag: str | None = None
    max_age: int = 0
    note: str | None = None  # why it is pending / unknown (a response header, not the badge)

    @cached_property
    def svg(self) -> str:
        return badge_svg(LABEL, self.message, self.colour)

    @cached_property
    def shields_json(self) -> str:
        """The shields.io endpoint schema (https://shields.io/badges/endpoint-badge)."""
        data = {
            "schemaVersion": 1,
            "label": LABEL,
            "message": self.message,
            "color": self.colour,
            "cacheSeconds": max(300, self.max_age),
        }
        return json.dumps(data) + "\n"


def audited_badge(report: Report, fail_on: str | None, etag: str, max_age: int) -> Badge:
    """The badge of a stored audit under ``fail_on`` (None: the verdict as audited)."""
    outcome = verdict(report)
    message, colour = outcome.message, outcome.colour
    if fail_on is not None:
        from cardaudit.policy import Policy

        fails = Policy(fail_on=fail_on).fails(report)  # type: ignore[arg-type]
        if fails:
            message, colour = "failing", BADGE_COLOURS["error"]
        elif message == "failing":  # errors, but the chosen gate lets them through
            message = plural(report.summary.error, "error")
    return Badge(message, colour, "audited", etag=etag, max_age=max_age)


def pending_badge(note: str) -> Badge:
    return Badge("pending", "lightgrey", "pending", note=note)


def unknown_badge(note: str) -> Badge:
    return Badge("unknown", "lightgrey", "unknown", max_age=300, note=note)
