"""Markdown report for a pull-request comment, a Hub discussion or a CI job summary.

Same reading order as the HTML report (reporters/review.py). Rendered by Jinja2 whose
``finalize`` escapes every value for GitHub Markdown (markdown_escape.py): a card cannot
inject images, links, mentions or ``<details>`` blocks. The only links are the report's own,
to files of the audited Hub repo at the audited commit.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from cardaudit.model import Report
from cardaudit.reporters.markdown_escape import escape_text
from cardaudit.reporters.review import FoldedFinding, Place, build_review

ICONS = {"error": "🔴", "warning": "🟡", "info": "🔵"}
#: GitHub caps a comment at 65,536 characters; keep well under it.
MAX_FINDINGS = 200


def _finalize(value: Any) -> Any:
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    return escape_text("" if value is None else value)


def _code(value: object) -> Any:
    """Inline code for our own identifiers (rule ids): never card text."""
    from markupsafe import Markup

    return Markup(f"`{value}`")


def _link(where: Place) -> Any:
    from markupsafe import Markup

    text = escape_text(where.text)
    return Markup(f"[{text}]({where.url})" if where.url else text)


def _finding(f: FoldedFinding) -> Any:
    from markupsafe import Markup

    lines = [
        f"- {ICONS.get(f.severity, '')} **{f.severity}** `{f.rule_id}` {escape_text(f.title)}: "
        f"{escape_text(f.message)}"
    ]
    places = ", ".join(str(_link(p)) for p in f.places)
    label = "where" if len(f.places) == 1 else f"found in {len(f.places)} places"
    lines.append(f"  - {label}: {places}")
    if f.evidence:
        lines.append(f"  - evidence: “{escape_text(f.evidence)}”")
    if f.suppressed_by:
        lines.append(f"  - suppressed by {escape_text(f.suppressed_by)}")
    elif f.remediation:
        lines.append(f"  - fix: {escape_text(f.remediation)}")
    return Markup("\n".join(lines))


@cache
def environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from cardaudit.reporters.html import TEMPLATES

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=False,
        finalize=_finalize,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(finding=_finding, link=_link, code=_code)
    return env


def render(
    report: Report, *, show_suppressed: bool = False, fail_on: str = "error", **_options: object
) -> str:
    from markupsafe import Markup

    review = build_review(report, fail_on)
    shown, hidden = [], max(0, sum(len(g.findings) for g in review.groups) - MAX_FINDINGS)
    budget = MAX_FINDINGS
    for group in review.groups:
        kept = group.findings[:budget]
        budget -= len(kept)
        if kept:
            shown.append(dataclasses.replace(group, findings=kept))
    review = dataclasses.replace(review, groups=tuple(shown))
    counts = " · ".join(f"{n} {label}" for label, n in review.counts)
    revision = report.target.revision
    return (
        environment()
        .get_template("report.md.j2")
        .render(
            r=review,
            revision=Markup(f"revision `{revision}`") if revision else "no revision",
            gate=Markup(f"`{review.gate}`"),
            counts=counts,
            hidden=hidden,
            show_suppressed=show_suppressed,
        )
    )
