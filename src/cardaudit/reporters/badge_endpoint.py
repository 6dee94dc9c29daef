"""The shields.io endpoint JSON for the badge (https://shields.io/badges/endpoint-badge)."""

from __future__ import annotations

import json

from cardaudit.model import Report
from cardaudit.reporters.badge import LABEL
from cardaudit.reporters.common import verdict


def render(report: Report, *, fail_on: str = "error", **_options: object) -> str:
    outcome = verdict(report, fail_on)
    data = {"schemaVersion": 1, "label": LABEL, "message": outcome.message, "color": outcome.colour}
    return json.dumps(data, indent=2) + "\n"
