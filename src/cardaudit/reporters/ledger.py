"""The promise ledger as JSON, CSV, Markdown and rich text (``cardaudit history --format``).

Card text is hostile: Markdown cells are escaped (no raw HTML, links, pipes or line breaks
survive), CSV cells that a spreadsheet would run as formulas are prefixed with a quote, and
rich markup is escaped in the text table.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import Any

from cardaudit.ledger import LedgerEntry
from cardaudit.reporters.markdown_escape import escape_text
from cardaudit.timeline import History

COLUMNS = ("item", "artifact", "first promised", "delivered on", "days open", "where")
CSV_COLUMNS = (
    "item",
    "artifact",
    "state",
    "status",
    "first_promised",
    "delivered_on",
    "dropped_on",
    "days_open",
    "repo",
    "path",
    "line",
    "text",
    "reason",
)


def _date(value: Any) -> str | None:
    return value.date().isoformat() if value is not None else None


def entry_to_json(entry: LedgerEntry) -> dict[str, Any]:
    return {
        "item": entry.item,
        "artifact": entry.artifact,
        "text": entry.text,
        "state": entry.state,
        "status": entry.status,
        "first_promised": entry.first_promised.isoformat(),
        "delivered_on": entry.delivered_on.isoformat() if entry.delivered_on else None,
        "dropped_on": entry.dropped_on.isoformat() if entry.dropped_on else None,
        "days_open": entry.days_open,
        "first_audit_id": entry.first_audit_id,
        "last_audit_id": entry.last_audit_id,
        "reason": entry.reason,
        "location": {"path": entry.path, "line": entry.line, "repo": entry.repo},
    }


def ledger_to_json(entries: Sequence[LedgerEntry]) -> list[dict[str, Any]]:
    return [entry_to_json(entry) for entry in entries]


def delivered_words(entry: LedgerEntry) -> str:
    """The "delivered on" cell: the date, ``open`` or ``dropped on DATE``."""
    if entry.delivered_on is not None:
        return _date(entry.delivered_on) or ""
    if entry.dropped_on is not None:
        return f"dropped {_date(entry.dropped_on)}"
    return "open"


def row(entry: LedgerEntry) -> tuple[str, str, str, str, str, str]:
    """One ledger row as words, in :data:`COLUMNS` order."""
    return (
        entry.name,
        entry.artifact,
        _date(entry.first_promised) or "",
        delivered_words(entry),
        str(entry.days_open),
        entry.where(),
    )


_FORMULA = re.compile(r"^[=+\-@\t\r]")


def _csv_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if _FORMULA.match(text) else text


def render_csv(entries: Sequence[LedgerEntry]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for entry in entries:
        data = entry_to_json(entry)
        location = data.pop("location")
        data.update(location)
        data["first_promised"] = _date(entry.first_promised)
        data["delivered_on"] = _date(entry.delivered_on)
        data["dropped_on"] = _date(entry.dropped_on)
        writer.writerow([_csv_cell(data.get(column)) for column in CSV_COLUMNS])
    return buffer.getvalue()


def render_markdown(target: str, entries: Sequence[LedgerEntry]) -> str:
    lines = [f"### Promise ledger: {escape_text(target)}", ""]
    if not entries:
        return "\n".join([*lines, "No promises found in the stored audits.", ""])
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for entry in entries:
        lines.append("| " + " | ".join(escape_text(cell) for cell in row(entry)) + " |")
    return "\n".join([*lines, ""])


def ledger_table(entries: Sequence[LedgerEntry]):  # type: ignore[no-untyped-def]
    """A rich table of the ledger (its cells escaped)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Promise ledger", title_justify="left", expand=True)
    for column in COLUMNS:
        table.add_column(column, overflow="fold", ratio=3 if column == "item" else None)
    for entry in entries:
        cells = [escape(cell) for cell in row(entry)]
        if entry.state == "open":
            cells[3] = f"[yellow]{cells[3]}[/]"
        elif entry.state == "dropped":
            cells[3] = f"[magenta]{cells[3]}[/]"
        else:
            cells[3] = f"[green]{cells[3]}[/]"
        table.add_row(*cells)
    return table


def render_history_markdown(history: History, entries: Sequence[LedgerEntry]) -> str:
    """``history --format markdown``: the ledger, then the timeline (PR comments, issues)."""
    lines = [render_markdown(history.target, entries), "### Timeline", ""]
    lines.append("| when | audit | event | where | what |")
    lines.append("|---|---|---|---|---|")
    for event in history.events:
        cells = (
            f"{event.at:%Y-%m-%d}",
            f"#{event.audit_id} {(event.revision or '-')[:8]}",
            event.kind.replace("_", " "),
            event.where or "-",
            event.message,
        )
        lines.append("| " + " | ".join(escape_text(cell) for cell in cells) + " |")
    return "\n".join([*lines, ""])
