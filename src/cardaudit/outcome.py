"""The one-line outcome of an audit for stderr: counts by severity and why it exits as it does."""

from __future__ import annotations

from cardaudit.model import Report
from cardaudit.policy import Policy


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def outcome_line(report: Report, policy: Policy) -> str:
    """``2 errors, 1 warning, 0 info (1 suppressed): exit 1, findings at or above --fail-on
    error`` — what a reader of a CI log needs when the reports went to files."""
    summary = report.summary
    parts = [_plural(summary.error, "error"), _plural(summary.warning, "warning")]
    parts.append(f"{summary.info} info")
    not_checked = getattr(summary, "not_checked", 0)
    if not_checked:
        parts.append(f"{not_checked} not checked")
    counts = ", ".join(parts)
    if summary.suppressed:
        counts += f" ({summary.suppressed} suppressed)"
    if policy.fails(report):
        return f"{counts}: exit 1, findings at or above --fail-on {policy.fail_on}"
    if policy.fail_on == "never":
        return f"{counts}: exit 0, --fail-on never"
    return f"{counts}: exit 0, nothing at or above --fail-on {policy.fail_on}"
