"""Markdown summary for a pull-request comment, a Hub discussion or a CI job summary."""

from __future__ import annotations

from cardaudit.model import Finding, Report
from cardaudit.reporters.common import (
    NONE_FOUND,
    check_counts,
    claim_rows,
    extra_rows,
    licence_rows,
    lineage_rows,
    not_checked_rows,
    not_read,
    parameter_rows,
    plural,
    promise_rows,
    rule_title,
    verdict,
)

ICONS = {"error": "🔴", "warning": "🟡", "info": "🔵"}
#: GitHub caps a comment at 65,536 characters; keep well under it.
MAX_FINDINGS = 200


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return (
        str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")
    )


def code(text: str) -> str:
    """Inline code that survives backticks inside ``text``."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return [f"_{NONE_FOUND}_", ""]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return [*lines, ""]


def _finding_rows(findings: tuple[Finding, ...], suppressed: bool) -> list[tuple[str, ...]]:
    rows = []
    for f in findings[:MAX_FINDINGS]:
        detail = f.message
        if f.evidence:
            detail += f"<br>evidence: {code(f.evidence)}"
        if suppressed and f.suppressed_by:
            detail += f"<br>suppressed by {f.suppressed_by}"
        elif f.remediation:
            detail += f"<br>fix: {f.remediation}"
        rows.append(
            (
                f"{ICONS[f.severity]} {f.severity}",
                f"`{f.rule_id}` {rule_title(f.rule_id)}",
                code(f.location.display()),
                detail,
            )
        )
    return rows


def render(report: Report, *, show_suppressed: bool = False, **_options: object) -> str:
    summary = report.summary
    outcome = verdict(report)
    target = report.target
    lines = [
        f"## cardaudit: {outcome.message}",
        "",
        f"**{cell(target.id)}** ({target.kind}"
        + (f", revision `{target.revision}`" if target.revision else ", no revision")
        + (", offline from caches" if target.offline is not None else "")
        + ")",
        "",
        f"{plural(summary.error, 'error')} · {plural(summary.warning, 'warning')} · "
        f"{summary.info} info · {summary.suppressed} suppressed",
        "",
    ]
    counts = check_counts(report)
    lines += [
        f"{len(report.checks)} rules ran: {counts['pass']} passed, {counts['fail']} failed, "
        f"{counts['not_applicable']} not applicable, {counts['not_checked']} not checked, "
        f"{counts['error']} could not run.",
        "",
    ]
    unchecked = not_checked_rows(report)
    if unchecked:
        lines += ["### Not checked", ""]
        lines += table(("rule", "why", "fix"), unchecked)
    lines += ["### Findings", ""]
    if report.findings:
        rows = _finding_rows(report.findings, False)
        lines += table(("severity", "rule", "where", "finding"), rows)
        hidden = len(report.findings) - MAX_FINDINGS
        if hidden > 0:
            lines += [f"_… and {hidden} more (see the full report)._", ""]
    else:
        lines += ["No findings.", ""]
    if show_suppressed:
        lines += ["### Suppressed by waivers", ""]
        lines += table(
            ("severity", "rule", "where", "finding"), _finding_rows(report.suppressed, True)
        )
    gaps = not_read(report)
    if gaps:
        lines += [f"<details><summary>Not read ({len(gaps)})</summary>", ""]
        lines += table(("repo", "path", "why"), [(g["repo"], g["path"], g["reason"]) for g in gaps])
        lines += ["</details>", ""]
    lines += ["<details><summary>Facts</summary>", "", "#### Licence", ""]
    lines += table(("where", "licence", "detail"), licence_rows(report))
    lines += ["#### Lineage", ""]
    lines += table(("model", "relation", "source"), lineage_rows(report))
    lines += ["#### Parameters and memory", ""]
    lines += table(("quantity", "value"), parameter_rows(report))
    lines += ["#### Promises", ""]
    lines += table(("first seen", "artifact", "status", "where", "text"), promise_rows(report))
    lines += ["#### Claims", ""]
    lines += table(("kind", "where", "text", "not disclosed"), claim_rows(report))
    extra = extra_rows(report)
    if extra:
        lines += ["#### Other facts", ""]
        lines += table(("fact", "value"), extra)
    lines += ["</details>", ""]
    return "\n".join(lines)
