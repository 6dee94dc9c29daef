"""The audit clock: "now" for ages of promises, injectable for deterministic runs.

``CARDAUDIT_NOW`` (an ISO date or date-time, UTC when no zone is given) fixes the clock; tests
and reproducible CI runs set it. Otherwise the clock is the machine's UTC time.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

ENV_VAR = "CARDAUDIT_NOW"


def parse_instant(value: str) -> datetime:
    """An ISO date or date-time as an aware UTC datetime; raises ValueError when invalid."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def audit_now() -> datetime:
    """The audit clock: ``CARDAUDIT_NOW`` when set, else the current UTC time."""
    from cardaudit.errors import UsageError

    fixed = os.environ.get(ENV_VAR)
    if fixed:
        try:
            return parse_instant(fixed)
        except ValueError as exc:
            raise UsageError(f"{ENV_VAR}={fixed!r} is not an ISO date or date-time") from exc
    return datetime.now(UTC)
