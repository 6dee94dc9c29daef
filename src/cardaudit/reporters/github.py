"""GitHub Actions workflow commands (``::error file=…,line=…,title=…::message``): findings
annotate the pull request's files without code scanning.

Escaping follows the Actions toolkit (``@actions/core`` ``escapeData`` / ``escapeProperty``):
``%``, CR and LF in the message; also ``:`` and ``,`` in properties. A card cannot end the
command early or start a new one (``::add-mask::``, ``::stop-commands::``) because no line
break survives, and ``::`` inside the message is broken up as well.
"""

from __future__ import annotations

from cardaudit.model import Finding, Report
from cardaudit.reporters.common import rule_title
from cardaudit.reporters.locate import also_at, local_file, repo_roots

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    while "::" in text:
        text = text.replace("::", ": :")
    return text


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(finding: Finding, roots: dict[str, str | None], report: Report) -> str:
    properties = []
    path = local_file(finding, roots)
    if path is not None:
        properties.append(f"file={escape_property(path)}")
        if finding.location.line is not None:
            properties.append(f"line={finding.location.line}")
    title = f"{finding.rule_id} {rule_title(finding.rule_id)}"
    properties.append(f"title={escape_property(title)}")
    message = finding.message
    if path is None and finding.location.path:
        where = report.target.id if finding.location.repo == "model" else finding.location.repo
        message = f"{where}:{finding.location.display()}: {message}"
    if finding.also:
        message += f"\nalso at: {also_at(finding)}"
    if finding.evidence:
        message += f"\nevidence: {finding.evidence}"
    if finding.remediation:
        message += f"\nfix: {finding.remediation}"
    return f"::{LEVELS[finding.severity]} {','.join(properties)}::{escape_data(message)}"


def render(report: Report, **_options: object) -> str:
    roots = repo_roots(report)
    lines = [_command(finding, roots, report) for finding in report.findings]
    for run in report.checks:
        if run.outcome == "not_checked":
            why = getattr(run, "reason", None) or run.note or "could not run"
            lines.append(
                f"::warning title={escape_property(f'{run.rule_id} not checked')}::"
                f"{escape_data(why)}"
            )
    return "".join(line + "\n" for line in lines)
