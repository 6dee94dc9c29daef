"""History and diff views of stored audits: rich text for people, JSON for tools."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cardaudit.store.records import AuditRecord, FindingRecord, PromiseRecord, display_key
from cardaudit.timeline import AuditDiff, Event, FindingChange, History

if TYPE_CHECKING:
    from cardaudit.ledger import LedgerEntry

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
KIND_STYLE = {
    "licence_changed": "bold red",
    "promise_appeared": "yellow",
    "promise_delivered": "green",
    "promise_dropped": "magenta",
    "promise_status_changed": "yellow",
    "finding_added": "red",
    "finding_resolved": "green",
    "finding_escalated": "red",
    "finding_deescalated": "green",
    "first_audit": "bold",
}


# --------------------------------------------------------------------------- JSON


def audit_to_json(audit: AuditRecord) -> dict[str, Any]:
    return {
        "id": audit.id,
        "revision": audit.revision,
        "audited_at": audit.audited_at.isoformat(),
        "tool_version": audit.tool_version,
        "licence": {"declared": audit.licence_declared, "declared_spdx": audit.licence_spdx},
        "summary": {"error": audit.errors, "warning": audit.warnings, "info": audit.infos},
    }


def finding_to_json(finding: FindingRecord) -> dict[str, Any]:
    return {
        "rule_id": finding.rule_id,
        "severity": finding.severity,
        "message": finding.message,
        "location": {"path": finding.path, "line": finding.line, "repo": finding.repo},
        "evidence": finding.evidence,
    }


def promise_to_json(promise: PromiseRecord) -> dict[str, Any]:
    return {
        **promise.detail(),
        "location": {"path": promise.path, "line": promise.line, "repo": promise.repo},
    }


def event_to_json(event: Event) -> dict[str, Any]:
    return {
        "at": event.at.isoformat(),
        "audit_id": event.audit_id,
        "revision": event.revision,
        "kind": event.kind,
        "message": event.message,
        "severity": event.severity,
        "rule_id": event.rule_id,
        "where": event.where,
        "detail": event.detail,
    }


def history_to_json(history: History, ledger: Sequence[LedgerEntry] = ()) -> dict[str, Any]:
    from cardaudit.reporters.ledger import ledger_to_json

    return {
        "target": history.target,
        "target_key": history.target_key,
        "audits": [audit_to_json(audit) for audit in history.audits],
        "events": [event_to_json(event) for event in history.events],
        "findings": [finding_to_json(e.finding) for e in history.events if e.finding],
        "ledger": ledger_to_json(ledger),
    }


def diff_to_json(diff: AuditDiff) -> dict[str, Any]:
    change = diff.licence_change
    return {
        "target": display_key(diff.new.target_key),
        "target_key": diff.new.target_key,
        "from": audit_to_json(diff.old),
        "to": audit_to_json(diff.new),
        "licence": {
            "before": diff.old.licence,
            "after": diff.new.licence,
            "changed": change is not None,
        },
        "promises": {
            "appeared": [promise_to_json(p) for p in diff.promises_appeared],
            "delivered": [
                {**promise_to_json(c.after), "still_stated": not c.removed}
                for c in diff.promises_delivered
            ],
            "dropped": [promise_to_json(p) for p in diff.promises_dropped],
            "status_changed": [
                {**promise_to_json(c.after), "previous_status": c.before.status}
                for c in diff.promises_changed
            ],
        },
        "findings_added": [finding_to_json(f) for f in diff.findings_added],
        "findings_resolved": [finding_to_json(f) for f in diff.findings_resolved],
        "findings_unchanged": diff.findings_unchanged,
        "findings": [finding_to_json(f) for f in diff.findings],
        "findings_escalated": [_severity_change(c) for c in diff.findings_escalated],
        "findings_deescalated": [_severity_change(c) for c in diff.findings_deescalated],
    }


def _severity_change(change: FindingChange) -> dict[str, Any]:
    return {**finding_to_json(change.after), "previous_severity": change.before.severity}


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- text


def _console(buffer: io.StringIO, color: bool, width: int):  # type: ignore[no-untyped-def]
    from cardaudit.reporters.common import text_console

    return text_console(buffer, color, width)


def _escape(text: str | None) -> str:
    from cardaudit.safe_text import markup

    return markup(text or "")


def _audit_label(audit: AuditRecord) -> str:
    return f"#{audit.id} {audit.short_revision} ({audit.audited_at:%Y-%m-%d %H:%M} UTC)"


def render_history(
    history: History,
    *,
    color: bool = False,
    width: int = 100,
    ledger: Sequence[LedgerEntry] | None = None,
) -> str:
    """The timeline as a table, then (when given) the promise ledger."""
    from rich.panel import Panel
    from rich.table import Table

    buffer = io.StringIO()
    console = _console(buffer, color, width)
    audits = history.audits
    console.print(
        Panel(
            f"[bold]{_escape(history.target)}[/bold]\n{len(audits)} audit(s): "
            f"{_escape(_audit_label(audits[0]))} … {_escape(_audit_label(audits[-1]))}",
            title="cardaudit history",
            expand=False,
        )
    )
    table = Table(show_lines=False, expand=True)
    table.add_column("when", no_wrap=True)
    table.add_column("audit", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("where", overflow="fold", ratio=1)
    table.add_column("what", overflow="fold", ratio=3)
    for event in history.events:
        style = KIND_STYLE.get(event.kind, "")
        kind = event.kind.replace("_", " ")
        if event.severity == "error" and event.kind == "licence_changed":
            kind = f"{kind} (ERROR {event.rule_id})"
        table.add_row(
            f"{event.at:%Y-%m-%d}",
            f"#{event.audit_id} {(event.revision or '-')[:8]}",
            f"[{style}]{_escape(kind)}[/]" if style else _escape(kind),
            _escape(event.where or "-"),
            _escape(event.message),
        )
    console.print(table)
    changes = [e for e in history.events if e.kind == "licence_changed"]
    if changes:
        console.print(
            f"\n[bold red]{len(changes)} licence change(s): legal review must see "
            f"{'it' if len(changes) == 1 else 'them'}.[/]"
        )
    if ledger:
        from cardaudit.ledger import LedgerSummary
        from cardaudit.reporters.ledger import ledger_table

        console.print()
        console.print(ledger_table(ledger))
        summary = LedgerSummary.of(ledger)
        oldest = (
            f", the oldest open for {summary.oldest_open_days} days"
            if summary.oldest_open_days is not None
            else ""
        )
        console.print(
            f"{summary.open} open{oldest}; {summary.delivered} delivered, "
            f"{summary.dropped} dropped."
        )
    return buffer.getvalue()


def _section(console, title: str, rows: list[tuple[str, str, str]]) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title, title_justify="left", expand=True, show_header=False)
    table.add_column("tag", no_wrap=True)
    table.add_column("where", overflow="fold", ratio=1)
    table.add_column("what", overflow="fold", ratio=3)
    for tag, where, what in rows:
        table.add_row(tag, _escape(where), _escape(what))
    console.print(table)


def render_diff(diff: AuditDiff, *, color: bool = False, width: int = 100) -> str:
    from rich.panel import Panel

    buffer = io.StringIO()
    console = _console(buffer, color, width)
    console.print(
        Panel(
            f"[bold]{_escape(display_key(diff.new.target_key))}[/bold]\n"
            f"from {_escape(_audit_label(diff.old))}\n"
            f"to   {_escape(_audit_label(diff.new))}",
            title="cardaudit diff",
            expand=False,
        )
    )
    change = diff.licence_change
    if change is not None:
        console.print(
            f"[bold red]ERROR {change.finding.rule_id}[/] {_escape(change.finding.message)}"
        )
    else:
        console.print(f"licence unchanged: {_escape(diff.new.licence or 'not declared')}")
    _section(
        console,
        "Promises",
        [
            ("[yellow]+ appeared[/]", p.where(), f"{p.artifact}: {p.text}")
            for p in diff.promises_appeared
        ]
        + [
            (
                "[green]✓ delivered[/]",
                c.after.where(),
                f"{c.after.artifact}: {c.after.text}"
                + (f" (removed from the text; {c.after.reason})" if c.removed else ""),
            )
            for c in diff.promises_delivered
        ]
        + [
            (f"[yellow]{c.before.status} → {c.after.status}[/]", c.after.where(), c.after.text)
            for c in diff.promises_changed
        ]
        + [
            ("[magenta]- dropped[/]", p.where(), f"{p.artifact}: {p.text}")
            for p in diff.promises_dropped
        ],
    )
    _section(
        console,
        "Findings",
        [
            (f"[red]+ {f.severity}[/]", f.where(), f"{f.rule_id} {f.message}")
            for f in diff.findings_added
        ]
        + [
            ("[green]- resolved[/]", f.where(), f"{f.rule_id} {f.message}")
            for f in diff.findings_resolved
        ]
        + [
            (
                f"[red]↑ {c.before.severity} → {c.after.severity}[/]",
                c.after.where(),
                f"{c.after.rule_id} {c.after.message}",
            )
            for c in diff.findings_escalated
        ]
        + [
            (
                f"[green]↓ {c.before.severity} → {c.after.severity}[/]",
                c.after.where(),
                f"{c.after.rule_id} {c.after.message}",
            )
            for c in diff.findings_deescalated
        ],
    )
    if diff.empty:
        console.print("No changes.")
    console.print(
        f"\n{len(diff.findings_added)} finding(s) added, {len(diff.findings_resolved)} resolved, "
        f"{len(diff.findings_escalated)} escalated, {len(diff.findings_deescalated)} "
        f"de-escalated, {diff.findings_unchanged} unchanged; "
        f"{len(diff.promises_appeared)} promise(s) appeared, "
        f"{len(diff.promises_delivered)} delivered, {len(diff.promises_dropped)} dropped."
    )
    return buffer.getvalue()
