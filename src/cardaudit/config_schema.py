"""The configuration's shape as pydantic models: validation and the JSON Schema for editors.

``[tool.cardaudit]`` / ``.cardaudit.toml`` is validated by :class:`ConfigTable`; the first
error becomes one line naming the setting (:func:`first_error`), and
``docs/config.schema.json`` is generated from the same models (:func:`json_schema`), so an
editor (Even Better TOML / taplo, VS Code) can complete and check the file.

``python -m cardaudit.config_schema`` rewrites docs/config.schema.json.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

WaiverReason = Literal[
    "false-positive", "accepted-risk", "legal-approved", "fixed-upstream", "not-applicable"
]
SeverityName = Literal["error", "warning", "info"]
FailOnName = Literal["error", "warning", "info", "never"]
RuleId = Annotated[str, Field(pattern=r"^[A-Za-z]{3}\d{3}$", description="A rule id: LIC001")]
Patterns = Annotated[
    list[str] | str,
    Field(description="Rule ids or prefixes (LIC, ATT001); a string may be comma-separated."),
]


class WaiverTable(BaseModel):
    """One ``[[waivers]]`` entry: permission to suppress one rule's findings."""

    model_config = ConfigDict(extra="forbid", title="waiver")

    rule: RuleId
    reason: WaiverReason
    expires: date = Field(description="Last day the waiver applies (a TOML date: 2026-12-31).")
    path: str | None = Field(None, description="Only findings in files matching this glob.")
    comment: str | None = Field(None, description="Why, and who agreed (a ticket).")


class ConfigTable(BaseModel):
    """cardaudit settings: ``.cardaudit.toml`` or ``[tool.cardaudit]`` in pyproject.toml."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, title="cardaudit")

    select: Patterns = []
    ignore: Patterns = []
    severity: dict[str, SeverityName] = Field(
        default_factory=dict, description="Severity overrides: LIC003 = 'warning'."
    )
    fail_on: FailOnName | None = Field(
        None, alias="fail-on", description="Exit 1 on findings at or above this severity."
    )
    waivers: list[WaiverTable] = []


def _waiver_label(table: Any, index: int) -> str:
    items = table.get("waivers") if isinstance(table, dict) else None
    item = items[index] if isinstance(items, list) and index < len(items) else None
    rule = item.get("rule") if isinstance(item, dict) else None
    if isinstance(rule, str) and rule:
        return f"waiver {rule.upper()}"
    return f"waiver #{index + 1}"


def first_error(exc: ValidationError, table: Any) -> str:
    """The first validation error as the one line the CLI prints."""
    error = exc.errors(include_url=False)[0]
    loc, kind = error["loc"], error["type"]
    if not loc:
        return "[tool.cardaudit] must be a table"
    key = loc[0]
    if kind == "extra_forbidden" and len(loc) == 1:
        return f"unknown setting {key!r}"
    if key in ("select", "ignore"):
        return f"`{key}` must be a list of rule ids or prefixes"
    if key == "severity":
        if len(loc) > 1:
            return f"severity of {loc[1]!r}: must be one of error, warning, info"
        return "`severity` must be a table of rule id = severity"
    if key in ("fail-on", "fail_on"):
        return "`fail-on` must be one of error, warning, info, never"
    if key == "waivers":
        if len(loc) == 1:
            return "`waivers` must be an array of tables ([[waivers]])"
        index = int(loc[1])
        if len(loc) == 2:
            return f"waiver #{index + 1} must be a table"
        field = loc[2]
        if kind == "extra_forbidden":
            return f"waiver #{index + 1}: unknown key {field!r}"
        if field == "rule":
            return f"waiver #{index + 1}: `rule` must be a rule id like LIC001"
        label = _waiver_label(table, index)
        if field == "reason":
            reasons = ", ".join(WaiverReason.__args__)  # type: ignore[attr-defined]
            return f"{label}: `reason` must be one of {reasons}"
        if field == "expires":
            if kind == "missing":
                return f"{label}: `expires` is required (a date like 2026-12-31)"
            return f"{label}: `expires` must be a date like 2026-12-31"
        return f"{label}: `{field}` must be a string"
    return f"invalid setting {key!r}: {error['msg']}"


def validate_table(table: Any) -> ConfigTable:
    """Validate; raises ValueError with :func:`first_error`'s line."""
    try:
        return ConfigTable.model_validate(table)
    except ValidationError as exc:
        raise ValueError(first_error(exc, table)) from None


def json_schema() -> dict[str, Any]:
    schema = ConfigTable.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://cardaudit.invalid/config.schema.json",
        **schema,
    }


SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "config.schema.json"


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
