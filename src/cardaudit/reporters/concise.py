"""One finding per line, ``path:line: RULE severity message``, for grep, editors and logs.

The default format when stdout is not a terminal. Paths are the files as the reader has them
(under the local folder given on the command line); a finding in a Hub repo or a clone the
audit made itself is shown as ``repo-id:path``.
"""

from __future__ import annotations

from cardaudit.model import Finding, Report
from cardaudit.reporters.locate import also_at, local_file, one_line, repo_roots


def _where(finding: Finding, report: Report, roots: dict[str, str | None]) -> str:
    location = finding.location
    path = local_file(finding, roots)
    if path is None:
        label = report.target.id if location.repo == "model" else location.repo
        path = f"{label}:{location.path}" if location.path else label
    return path if location.line is None else f"{path}:{location.line}"


def _also(finding: Finding) -> str:
    """The other places of a repeated promise or claim, with their lines."""
    if not finding.also:
        return ""
    return f" [also at {one_line(also_at(finding))}]"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def render(report: Report, *, show_suppressed: bool = False, **_options: object) -> str:
    roots = repo_roots(report)
    lines = [
        f"{one_line(_where(f, report, roots))}: {f.rule_id} {f.severity} {one_line(f.message)}"
        + _also(f)
        for f in report.findings
    ]
    if show_suppressed:
        lines += [
            f"{one_line(_where(f, report, roots))}: {f.rule_id} suppressed "
            f"{one_line(f.message)} [{one_line(f.suppressed_by or 'waiver')}]"
            for f in report.suppressed
        ]
    for run in report.checks:
        if run.outcome == "not_checked":  # unchecked is not passed: say so on its own line
            why = getattr(run, "reason", None) or run.note or "could not run"
            lines.append(f"{one_line(report.target.id)}: {run.rule_id} not_checked {one_line(why)}")
    summary = report.summary
    counts = (
        f"{_plural(summary.error, 'error')}, {_plural(summary.warning, 'warning')}, "
        f"{summary.info} info"
    )
    if summary.suppressed:
        counts += f", {summary.suppressed} suppressed"
    lines.append(f"Found {counts}." if report.findings else f"No findings ({counts}).")
    return "\n".join(lines) + "\n"
