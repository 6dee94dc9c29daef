"""One self-contained HTML file for legal review: no scripts, fonts or images from outside.

Sections: summary, licence table, lineage chain, parameters and memory, promises timeline,
claims, findings with evidence, and the rules that ran. A print stylesheet keeps tables and
findings unbroken across pages so "Print → Save as PDF" gives a clean document.
"""

from __future__ import annotations

from html import escape

from cardaudit import __version__
from cardaudit.model import Finding, Report
from cardaudit.reporters.common import (
    NONE_FOUND,
    build_time,
    check_counts,
    claim_rows,
    extra_rows,
    licence_rows,
    lineage_rows,
    not_read,
    parameter_rows,
    plural,
    promise_rows,
    rule_title,
    verdict,
)

CSS = """
:root { --error:#b42318; --warning:#b54708; --info:#175cd3; --ok:#067647; --line:#d0d5dd;
  --muted:#475467; --bg:#f9fafb; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color:#101828; margin:0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #101828; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 12.5px; }
.muted { color: var(--muted); }
.verdict { display:inline-block; padding: 4px 12px; border-radius: 4px; color: #fff;
  font-weight: 600; }
.v-none { background: var(--ok); } .v-info { background: var(--info); }
.v-warning { background: var(--warning); } .v-error { background: var(--error); }
.counts { display:flex; gap: 12px; margin: 12px 0; flex-wrap: wrap; }
.count { border:1px solid var(--line); border-radius:6px; padding: 8px 14px; min-width: 110px; }
.count b { display:block; font-size: 20px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 6px 8px; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
th { background: var(--bg); font-weight: 600; }
.none { color: var(--muted); font-style: italic; }
.chain { display:flex; flex-wrap: wrap; align-items: center; gap: 6px; list-style: none;
  padding: 0; }
.chain li { border:1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
.chain li + li::before { content: "\\2190  "; color: var(--muted); }
.chain .rel { display:block; font-size: 12px; color: var(--muted); }
.timeline { list-style: none; padding-left: 0; border-left: 3px solid var(--line);
  margin-left: 8px; }
.timeline li { position: relative; padding: 4px 0 10px 16px; }
.timeline li::before { content: ""; position: absolute; left: -8px; top: 10px; width: 12px;
  height: 12px; border-radius: 50%; background: var(--muted); }
.timeline li.missing::before { background: var(--error); }
.timeline li.delivered::before { background: var(--ok); }
.finding { border:1px solid var(--line); border-left: 6px solid var(--muted);
  border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
.finding.error { border-left-color: var(--error); }
.finding.warning { border-left-color: var(--warning); }
.finding.info { border-left-color: var(--info); }
.finding h3 { font-size: 15px; margin: 0 0 4px; }
.sev { text-transform: uppercase; font-size: 11px; font-weight: 700; letter-spacing: .04em; }
.sev.error { color: var(--error); } .sev.warning { color: var(--warning); }
.sev.info { color: var(--info); }
blockquote { margin: 6px 0; padding: 6px 10px; background: var(--bg);
  border-left: 3px solid var(--line); white-space: pre-wrap; }
footer { margin-top: 32px; font-size: 12px; color: var(--muted); }
@page { size: A4; margin: 16mm 14mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-after: avoid; }
  .finding, tr, .chain li, .timeline li { break-inside: avoid; }
  thead { display: table-header-group; }
  a { color: inherit; text-decoration: none; }
  .verdict, .finding, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _e(value: object) -> str:
    """HTML-escaped, with control and bidi characters shown as escapes (a U+202E would
    display a finding's text in another order)."""
    from cardaudit.safe_text import visible

    return escape(visible(str(value)), quote=True)


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    if not rows:
        return f'<p class="none">{NONE_FOUND}</p>'
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _lineage(report: Report) -> str:
    rows = lineage_rows(report)
    if len(rows) == 1:
        return (
            f'<ul class="chain"><li><b>{_e(rows[0][0])}</b><span class="rel">audited model</span>'
            f'</li></ul><p class="none">base models: {NONE_FOUND}</p>'
        )
    items = "".join(
        f'<li><b>{_e(model)}</b><span class="rel">{_e(relation)} · {_e(source)}</span></li>'
        for model, relation, source in rows
    )
    return f'<ul class="chain">{items}</ul>'


def _timeline(report: Report) -> str:
    rows = promise_rows(report)
    if not rows:
        return f'<p class="none">{NONE_FOUND}</p>'
    items = []
    for first_seen, artifact, status, where, text in rows:
        state = status.split(" ", 1)[0]
        items.append(
            f'<li class="{_e(state)}"><b>{_e(first_seen)}</b> — {_e(artifact)} '
            f'<span class="sev">{_e(status)}</span><br><span class="mono">{_e(where)}</span>'
            f"<blockquote>{_e(text)}</blockquote></li>"
        )
    return f'<ol class="timeline">{"".join(items)}</ol>'


def _finding(finding: Finding) -> str:
    parts = [
        f'<div class="finding {finding.severity}">',
        f'<h3><span class="sev {finding.severity}">{finding.severity}</span> '
        f"<code>{_e(finding.rule_id)}</code> {_e(rule_title(finding.rule_id))}</h3>",
        f'<div class="mono">{_e(finding.location.display())}</div>',
        f"<p>{_e(finding.message)}</p>",
    ]
    if finding.evidence:
        parts.append(f"<blockquote>{_e(finding.evidence)}</blockquote>")
    if finding.remediation:
        parts.append(f"<p><b>Fix:</b> {_e(finding.remediation)}</p>")
    if finding.suppressed_by:
        parts.append(f'<p class="muted"><b>Suppressed by</b> {_e(finding.suppressed_by)}</p>')
    parts.append("</div>")
    return "".join(parts)


def _findings(findings: tuple[Finding, ...], empty: str) -> str:
    if not findings:
        return f'<p class="none">{_e(empty)}</p>'
    return "".join(_finding(f) for f in findings)


def render(report: Report, *, show_suppressed: bool = False, **_options: object) -> str:
    summary, outcome, target = report.summary, verdict(report), report.target
    counts = check_counts(report)
    revision = target.revision or "no revision (not a git checkout)"
    cells = [
        ("errors", summary.error),
        ("warnings", summary.warning),
        ("info", summary.info),
        ("suppressed", summary.suppressed),
        ("rules run", len(report.checks)),
    ]
    count_html = "".join(f'<div class="count"><b>{n}</b>{_e(label)}</div>' for label, n in cells)
    checks = _table(
        ("rule", "title", "outcome", "note"),
        [(r.rule_id, rule_title(r.rule_id), r.outcome, r.note or "") for r in report.checks],
    )
    suppressed = ""
    if show_suppressed:
        suppressed = "<h2>Suppressed by waivers</h2>" + _findings(report.suppressed, NONE_FOUND)
    elif report.suppressed:
        suppressed = (
            f'<p class="muted">{plural(summary.suppressed, "finding")} suppressed by waivers '
            "(run with --show-suppressed to list them).</p>"
        )
    extra = extra_rows(report)
    extra_html = f"<h2>Other facts</h2>{_table(('fact', 'value'), extra)}" if extra else ""
    gaps = [(g["repo"], g["path"], g["reason"]) for g in not_read(report)]
    gaps_html = f"<h2>Not read</h2>{_table(('repo', 'path', 'why'), gaps)}" if gaps else ""
    worst = outcome.worst or "none"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cardaudit report — {_e(target.id)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>Model audit: {_e(target.id)}</h1>
<div class="muted mono">{_e(target.kind)} · {_e(target.path or target.id)} · {_e(revision)}</div>
<p><span class="verdict v-{worst}">{_e(outcome.message)}</span></p>
<div class="counts">{count_html}</div>
<p class="muted">{counts["pass"]} rules passed, {counts["fail"]} failed,
{counts["not_applicable"]} not applicable, {counts["error"]} could not run.</p>
</header>
<main>
<h2>Findings</h2>
{_findings(report.findings, "No findings.")}
{suppressed}
<h2>Licence</h2>
{_table(("where", "licence", "detail"), licence_rows(report))}
<h2>Lineage</h2>
{_lineage(report)}
<h2>Parameters and memory</h2>
{_table(("quantity", "value"), parameter_rows(report))}
<h2>Promises</h2>
{_timeline(report)}
<h2>Claims</h2>
{_table(("kind", "where", "text", "not disclosed"), claim_rows(report))}
{extra_html}{gaps_html}
<h2>Rules run</h2>
{checks}
</main>
<footer>Generated by cardaudit {_e(__version__)} on {build_time().isoformat()}.
Findings cite the file and line they rest on; verify them before relying on them.</footer>
</body>
</html>
"""
