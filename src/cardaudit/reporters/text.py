"""Human-readable report with rich: tables and panels on a terminal, plain text otherwise."""

from __future__ import annotations

import io

from cardaudit.model import Report
from cardaudit.reporters.common import not_checked_rows, not_read
from cardaudit.reporters.locate import also_at

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


BINDS = (
    ("user", "If you use it"),
    ("redistributor", "If you pass it on (as it is or as a derivative)"),
)


def _obligations(report: Report) -> str:
    """What adopting this model obliges you to do: the first thing a lawyer reads."""
    items = report.facts.license.obligations
    lines = ["[bold]What adopting this model obliges you to do[/bold]"]
    if not items:
        lines.append("  no obligations known (no declared licence the licence table knows)")
    for binds, title in BINDS:
        group = [item for item in items if item.get("binds") == binds]
        if group:
            lines.append(f"  {title}:")
        for item in group:
            lines.append(f"  - {_escape(item['detail'])} [dim]({_escape(item['source'])})[/dim]")
    return "\n".join(lines) + "\n"


def _facts_table(report: Report):
    from rich.table import Table

    facts = report.facts
    table = Table(title="Facts", show_header=False, box=None, pad_edge=False)
    table.add_column("fact", style="bold")
    table.add_column("value", overflow="fold")
    licence = facts.license
    declared = licence.declared or "—"
    if licence.declared_spdx and licence.declared_spdx != licence.declared:
        declared += f" ({licence.declared_spdx})"
    table.add_row("declared licence", _escape(declared))
    for match in licence.files:
        what = match.identified or (match.note or "not identified")
        where = match.path if match.repo == "model" else f"{match.repo}:{match.path}"
        what = f"{what} ({match.confidence:.2f})"
        if match.modifications:
            restricting = sum(m.restricts for m in match.modifications)
            what += f", modified: {len(match.modifications)} passage(s) differ from the reference"
            what += f", {restricting} restricting use" if restricting else ""
        table.add_row(f"licence file {_escape(where)}", _escape(what))
    if licence.code_repo:
        table.add_row("code repo licence", _escape(str(licence.code_repo.get("identified") or "—")))
    claimed: dict[str, list[str]] = {}
    for ref in facts.base_models:
        claimed.setdefault(ref.id, []).append(
            ref.source if ref.relation is None else f"{ref.relation}, {ref.source}"
        )
    for base_id, sources in claimed.items():
        table.add_row("base model", _escape(f"{base_id} ({'; '.join(dict.fromkeys(sources))})"))
    from cardaudit.reporters.lineage_text import lineage_rows

    for label, value in lineage_rows(facts.extra):
        table.add_row(label, _escape(value))
    if facts.claims:
        table.add_row("claims", f"{len(facts.claims)} benchmark / speed claim(s)")
    for error in facts.extra.get("extract_errors", ()):
        table.add_row("[red]not extracted[/red]", _escape(str(error)))
    return table


def _promises_table(report: Report):
    """One row per promised item: what, where, status and when it first appeared."""
    from rich.table import Table

    table = Table(title="Promises", expand=True)
    table.add_column("promised", overflow="fold", ratio=2)
    table.add_column("where", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("first seen", no_wrap=True)
    for promise in report.facts.promises:
        where = f"{promise.path}:{promise.line}"
        if promise.repo != "model":
            where = f"{promise.repo}:{where}"
        first_seen = (promise.first_seen or "unknown")[:10]
        if promise.age_days is not None:
            first_seen += f" ({promise.age_days} d)"
        if len(promise.locations) > 1:
            where += f" (+{len(promise.locations) - 1})"
        what = f"{promise.item or promise.artifact} [{promise.artifact}]"
        if not promise.charged:
            what += f" — about {promise.about}, not charged"
        elif promise.inherited:
            what += " — inherited from the original card"
        table.add_row(_escape(what), _escape(where), promise.status, first_seen)
    return table


def _sizing_table(report: Report):
    """Parameters and memory: counts, weights in several precisions, KV cache, context."""
    from cardaudit.reporters.sizing import sizing_rows

    rows = sizing_rows(report.facts)
    if not rows:
        return None
    from rich.table import Table

    table = Table(title="Parameters and memory", show_header=False, box=None, pad_edge=False)
    table.add_column("figure", style="bold")
    table.add_column("value", overflow="fold")
    for name, value in rows:
        table.add_row(name, _escape(value))
    return table


def _findings_table(report: Report, findings=None, title: str = "Findings"):
    from rich.table import Table

    table = Table(title=title, show_lines=True, expand=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("where", overflow="fold", ratio=1)
    table.add_column("finding", overflow="fold", ratio=3)
    for finding in report.findings if findings is None else findings:
        detail = _escape(finding.message)
        if finding.also:
            detail += f"\n[dim]also at:[/dim] {_escape(also_at(finding))}"
        if finding.evidence:
            detail += f"\n[dim]evidence:[/dim] {_escape(finding.evidence)}"
        if finding.remediation:
            detail += f"\n[dim]fix:[/dim] {_escape(finding.remediation)}"
        if finding.suppressed_by:
            detail += f"\n[dim]suppressed by:[/dim] {_escape(finding.suppressed_by)}"
        table.add_row(
            f"[{SEVERITY_STYLE[finding.severity]}]{finding.severity}[/]",
            finding.rule_id,
            _escape(finding.location.display()),
            detail,
        )
    return table


def _escape(text: str) -> str:
    """Repo text for the console: markup escaped, control and bidi characters visible."""
    from cardaudit.safe_text import markup

    return markup(text)


def render(
    report: Report,
    *,
    color: bool = False,
    width: int = 100,
    show_suppressed: bool = False,
    **_options: object,
) -> str:
    from rich.panel import Panel

    from cardaudit.reporters.common import text_console

    buffer = io.StringIO()
    console = text_console(buffer, color, width)
    target = report.target
    revision = target.revision or "no revision (not a git checkout)"
    if target.offline is not None:  # HF_HUB_OFFLINE: nothing was fetched
        revision += "\noffline: from the Hub and git caches" + "".join(
            f"\nnot available: {_escape(part)}" for part in target.offline
        )
    console.print(
        Panel(
            f"[bold]{_escape(target.id)}[/bold]  {_escape(target.path or '')}\n"
            f"revision: {revision}",
            title="cardaudit",
            expand=False,
        )
    )
    console.print(_obligations(report))
    console.print(_facts_table(report))
    console.print()
    sizing = _sizing_table(report)
    if sizing is not None:
        console.print(sizing)
        console.print()
    if report.facts.promises:
        console.print(_promises_table(report))
        console.print()
    if report.findings:
        console.print(_findings_table(report))
    else:
        console.print("No findings.")
    if show_suppressed and report.suppressed:
        console.print(_findings_table(report, report.suppressed, "Suppressed by waivers"))
    unchecked = not_checked_rows(report)
    if unchecked:
        console.print(f"\nNot checked ({len(unchecked)}):")
        for rule_id, why, fix in unchecked:
            console.print(f"  {rule_id}: {_escape(why)}")
            if fix:
                console.print(f"    fix: {_escape(fix)}")
    gaps = not_read(report)
    if gaps:
        console.print(f"\nNot read ({len(gaps)}):")
        for gap in gaps:
            where = gap["path"] if gap["repo"] == "model" else f"{gap['repo']}: {gap['path']}"
            console.print(f"  {_escape(where)}: {_escape(gap['reason'])}")
    summary = report.summary
    ran = len(report.checks)
    console.print(
        f"\n{summary.error} error(s), {summary.warning} warning(s), {summary.info} info; "
        f"{summary.suppressed} suppressed; {ran} rule(s) ran, {summary.not_checked} not checked."
    )
    if color:
        return buffer.getvalue()
    from cardaudit.safe_text import visible

    return visible(buffer.getvalue())  # no colour: no escape sequence may remain at all
