"""Human-readable report with rich: tables and panels on a terminal, plain text otherwise."""

from __future__ import annotations

import io

from cardaudit.model import Report

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


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
    table.add_row("declared licence", declared)
    for match in licence.files:
        what = match.identified or (match.note or "not identified")
        table.add_row(f"licence file {match.path}", f"{what} ({match.confidence:.2f})")
    if licence.code_repo:
        table.add_row("code repo licence", str(licence.code_repo.get("identified") or "—"))
    params = facts.parameters
    if params.total is not None:
        text = f"{params.total:,} total"
        if params.active is not None:
            text += f", {params.active:,} active"
        table.add_row("parameters", f"{text} (from {params.source})")
    if facts.memory.weight_bytes is not None:
        gb = facts.memory.weight_bytes / 1e9
        gib = facts.memory.weight_bytes / 2**30
        table.add_row("weight memory", f"{gb:.1f} GB = {gib:.1f} GiB")
    for ref in facts.base_models:
        table.add_row(
            "base model", f"{ref.id} ({ref.relation or 'relation unknown'}, {ref.source})"
        )
    from cardaudit.reporters.lineage_text import lineage_rows

    for label, value in lineage_rows(facts.extra):
        table.add_row(label, _escape(value))
    if facts.promises:
        table.add_row("promises", f"{len(facts.promises)} found")
    if facts.claims:
        table.add_row("claims", f"{len(facts.claims)} found")
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
    from rich.markup import escape

    return escape(text)


def render(
    report: Report,
    *,
    color: bool = False,
    width: int = 100,
    show_suppressed: bool = False,
    **_options: object,
) -> str:
    from rich.console import Console
    from rich.panel import Panel

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        width=width,
        highlight=False,
        emoji=False,
    )
    target = report.target
    revision = target.revision or "no revision (not a git checkout)"
    console.print(
        Panel(
            f"[bold]{_escape(target.id)}[/bold]  {_escape(target.path or '')}\n"
            f"revision: {revision}",
            title="cardaudit",
            expand=False,
        )
    )
    console.print(_facts_table(report))
    console.print()
    sizing = _sizing_table(report)
    if sizing is not None:
        console.print(sizing)
        console.print()
    if report.findings:
        console.print(_findings_table(report))
    else:
        console.print("No findings.")
    if show_suppressed and report.suppressed:
        console.print(_findings_table(report, report.suppressed, "Suppressed by waivers"))
    summary = report.summary
    ran = len(report.checks)
    console.print(
        f"\n{summary.error} error(s), {summary.warning} warning(s), {summary.info} info; "
        f"{summary.suppressed} suppressed; {ran} rule(s) ran."
    )
    return buffer.getvalue()
