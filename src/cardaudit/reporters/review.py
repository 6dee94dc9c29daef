"""What the review reports (HTML for legal review, Markdown for PR comments) say, in order.

One reading order for both: the verdict; the licence and what adopting the model obliges you
to do; findings grouped by family with duplicates folded into one item with several
locations; checks that could not run; then the facts, each as a readable row (never a
key/value dump). The templates only lay these rows out and escape them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import quote

from cardaudit.model import Finding, Location, Report
from cardaudit.reporters.common import not_read, plural, rule_title, verdict
from cardaudit.reporters.lineage_text import lineage_rows as lineage_detail_rows
from cardaudit.reporters.review_licence import additional_terms, licence_rows, obligations
from cardaudit.reporters.sizing import sizing_rows

FAMILIES = {
    "LIC": "Licence",
    "ATT": "Attribution",
    "DRV": "Derivation and lineage",
    "MEM": "Parameters and memory",
    "PRM": "Promises",
    "CLM": "Claims",
    "SRC": "Evidence that could not be gathered",
}
PROMISE_STATUS = {
    "missing": "not delivered",
    "delivered": "delivered",
    "unknown": "cannot tell whether delivered",
}


@dataclass(frozen=True)
class Place:
    """Where something is: display text, and a link only into the audited Hub repo itself."""

    text: str
    url: str | None = None


@dataclass(frozen=True)
class FoldedFinding:
    """One finding, with every place it was reported (duplicates folded)."""

    rule_id: str
    title: str
    severity: str
    message: str
    places: tuple[Place, ...]
    evidence: str | None
    remediation: str | None
    suppressed_by: str | None = None


@dataclass(frozen=True)
class FindingGroup:
    family: str
    name: str
    findings: tuple[FoldedFinding, ...]
    counts: str


@dataclass(frozen=True)
class Review:
    target_id: str
    target_kind: str
    revision: str
    offline: bool
    verdict: str
    worst: str
    gate: str
    counts: tuple[tuple[str, int], ...]
    checks_line: str
    obligations: tuple[Mapping[str, str], ...]
    licence_rows: tuple[tuple[str, str, str], ...]
    additional_terms: tuple[tuple[str, str, str], ...]
    groups: tuple[FindingGroup, ...]
    suppressed: tuple[FoldedFinding, ...]
    not_checked: tuple[tuple[str, str, str, str], ...]
    lineage: tuple[tuple[str, str], ...]
    sizing: tuple[tuple[str, str], ...]
    promises: tuple[Mapping[str, Any], ...]
    claims: tuple[tuple[str, Place, str, str], ...]
    not_read: tuple[tuple[str, str, str], ...]
    checks: tuple[tuple[str, str, str, str], ...]
    other_facts: tuple[str, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------- places


def _file_url(report: Report, location: Location) -> str | None:
    """A link to the file in the audited Hub repo at the audited commit; None otherwise (a
    local folder, another repo): a report never links anywhere a card chose."""
    target = report.target
    if target.kind != "hub" or location.repo != "model" or not location.path:
        return None
    if not target.revision:
        return None
    url = f"https://huggingface.co/{quote(target.id)}/blob/{quote(target.revision)}/"
    url += quote(location.path)
    return url + (f"#L{location.line}" if location.line else "")


def place(report: Report, location: Location) -> Place:
    return Place(location.display(), _file_url(report, location))


def _place_of(report: Report, repo: str, path: str, line: int | None) -> Place:
    return place(report, Location(path=path, line=line, repo=repo))


# --------------------------------------------------------------------------- findings


def fold(report: Report, findings: tuple[Finding, ...]) -> list[FoldedFinding]:
    """Findings with the same rule, severity and message become one, in first-seen order; its
    places are theirs and the further places of a repeated promise or claim (``also``)."""
    folded: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        folded.setdefault((finding.rule_id, finding.severity, finding.message), []).append(finding)
    items = []
    for (rule_id, severity, message), same in folded.items():
        places = tuple(
            dict.fromkeys(
                place(report, location) for f in same for location in (f.location, *f.also)
            )
        )
        first = same[0]
        items.append(
            FoldedFinding(
                rule_id=rule_id,
                title=rule_title(rule_id),
                severity=severity,
                message=message,
                places=places,
                evidence=first.evidence,
                remediation=first.remediation,
                suppressed_by=first.suppressed_by,
            )
        )
    return items


def _groups(report: Report) -> tuple[FindingGroup, ...]:
    by_family: dict[str, list[FoldedFinding]] = {}
    for item in fold(report, report.findings):
        by_family.setdefault(item.rule_id[:3], []).append(item)
    order = [*FAMILIES, *sorted(set(by_family) - set(FAMILIES))]
    groups = []
    for family in order:
        items = by_family.get(family)
        if not items:
            continue
        severities = [item.severity for item in items]
        counts = ", ".join(
            plural(severities.count(level), level if level != "info" else "note")
            for level in ("error", "warning", "info")
            if level in severities
        )
        groups.append(FindingGroup(family, FAMILIES.get(family, family), tuple(items), counts))
    return tuple(groups)


# --------------------------------------------------------------------------- facts


def in_words(iso: str | None) -> str:
    """``2026-03-12`` → ``12 March 2026``; unknown dates say so."""
    if not iso:
        return "date unknown (no history of the file)"
    try:
        day = date.fromisoformat(iso[:10])
    except ValueError:
        return iso
    return f"{day.day} {day:%B %Y}"


def _promise_rows(report: Report) -> tuple[Mapping[str, Any], ...]:
    promises = sorted(
        report.facts.promises,
        key=lambda p: (p.first_seen is None, p.first_seen or "", p.repo, p.path, p.line),
    )
    rows = []
    for p in promises:
        since = "first promised " + in_words(p.first_seen) if p.first_seen else in_words(None)
        if p.age_days is not None:
            since += f", {plural(p.age_days, 'day')} before this audit"
        rows.append(
            {
                "item": p.item or p.artifact.replace("_", " "),
                "kind": p.artifact.replace("_", " "),
                "status": PROMISE_STATUS.get(p.status, p.status),
                "state": p.status,
                "reason": p.reason or "",
                "since": since,
                "place": _place_of(report, p.repo, p.path, p.line),
                "text": p.text,
            }
        )
    return tuple(rows)


def _claim_rows(report: Report) -> tuple[tuple[str, Place, str, str], ...]:
    return tuple(
        (
            c.kind.replace("_", " "),
            _place_of(report, c.repo, c.path, c.line),
            c.text,
            ", ".join(c.missing) or "nothing missing",
        )
        for c in report.facts.claims
    )


def _lineage(report: Report) -> tuple[tuple[str, str], ...]:
    rows: list[tuple[str, str]] = []
    for ref in report.facts.base_models:
        relation = ref.relation or "relation not stated"
        rows.append((f"base model {ref.id}", f"{relation}, from {ref.source}"))
    rows += list(lineage_detail_rows(report.facts.extra))
    return tuple(rows)


def _not_checked(report: Report) -> tuple[tuple[str, str, str, str], ...]:
    """Checks that could not run (``not_checked``, or an error): unchecked is not passed."""
    rows = []
    for run in report.checks:
        if run.outcome in ("not_checked", "error"):
            reason = getattr(run, "reason", None) or run.note or "could not run"
            fix = getattr(run, "fix", None) or ""
            rows.append((run.rule_id, rule_title(run.rule_id), str(reason), str(fix)))
    return tuple(rows)


OUTCOME_WORDS = {
    "pass": "passed",
    "fail": "failed",
    "not_applicable": "not applicable",
    "not_checked": "not checked",
    "error": "could not run",
}


def build_review(report: Report, fail_on: str = "error") -> Review:
    summary = report.summary
    outcome = verdict(report, fail_on)
    outcomes = [run.outcome for run in report.checks]
    checks_line = f"{plural(len(outcomes), 'rule')} ran: " + ", ".join(
        f"{outcomes.count(key)} {words}"
        for key, words in OUTCOME_WORDS.items()
        if key in outcomes or key in ("pass", "fail")
    )
    not_checked = getattr(summary, "not_checked", None)
    if not_checked is None:
        not_checked = outcomes.count("not_checked")
    counts = [
        ("error" if summary.error == 1 else "errors", summary.error),
        ("warning" if summary.warning == 1 else "warnings", summary.warning),
        ("info", summary.info),
        ("not checked", not_checked),
        ("suppressed", summary.suppressed),
    ]
    gaps = tuple((g["repo"], g["path"], g["reason"]) for g in not_read(report))
    gaps += tuple(
        ("facts", "", f"not extracted: {error}")
        for error in report.facts.extra.get("extract_errors", ())
    )
    known = {"lineage", "derivation", "code_derivation", "obligations", "extract_errors"}
    return Review(
        target_id=report.target.id,
        target_kind=report.target.kind,
        revision=report.target.revision or "no revision (not a git checkout)",
        offline=report.target.offline is not None,
        verdict=outcome.message,
        worst=outcome.worst or "none",
        gate=f"--fail-on {fail_on}",
        counts=tuple(counts),
        checks_line=checks_line,
        obligations=obligations(report),
        licence_rows=licence_rows(report),
        additional_terms=additional_terms(report),
        groups=_groups(report),
        suppressed=tuple(fold(report, report.suppressed)),
        not_checked=_not_checked(report),
        lineage=_lineage(report),
        sizing=tuple(
            (label, value.removesuffix(" ()")) for label, value in sizing_rows(report.facts)
        ),
        promises=_promise_rows(report),
        claims=_claim_rows(report),
        not_read=gaps,
        checks=tuple(
            (
                r.rule_id,
                rule_title(r.rule_id),
                OUTCOME_WORDS.get(r.outcome, r.outcome),
                r.note or "",
            )
            for r in report.checks
        ),
        other_facts=tuple(sorted(str(key) for key in report.facts.extra if key not in known)),
    )
