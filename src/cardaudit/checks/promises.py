"""PRM rules: promised artifacts that are missing, undecidable, or delivered but still promised.

One finding per promising line (a sentence can promise several items); a promise stated in
several places is one finding at its first place, the others in ``also``. Only promises about
the audited model or the page are charged (``Promise.charged``); those of an original card a
converted repo carries are info at most, "inherited from the original card". The promise
facts themselves (one per item, every subject) are in ``facts.promises``.
"""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.checks.repeats import also_stated
from cardaudit.extract.promises import promise_table
from cardaudit.model import Evidence, Facts, Hit, Location, Promise, Severity
from cardaudit.rules import Rule


def _by_line(promises: list[Promise]) -> dict[tuple[str, str, int], list[Promise]]:
    grouped: dict[tuple[str, str, int], list[Promise]] = {}
    for promise in promises:
        if promise.charged:
            grouped.setdefault((promise.repo, promise.path, promise.line), []).append(promise)
    return grouped


def _also(group: list[Promise]) -> tuple[Location, ...]:
    """The other places the promises of a line are stated."""
    first = Location(group[0].path, group[0].line, repo=group[0].repo)
    places = dict.fromkeys(place for promise in group for place in promise.locations)
    places.pop(first, None)
    return tuple(places)


def _inherited(group: list[Promise], severity: Severity) -> tuple[Severity, str]:
    if all(p.inherited for p in group):
        return "info", "; inherited from the original card"
    return severity, ""


def _hit(message: str, group: list[Promise], severity: Severity | None) -> Hit:
    also = _also(group)
    if severity is not None or all(p.inherited for p in group):
        severity, note = _inherited(group, severity or "info")
    else:
        note = ""
    first = Location(group[0].path, group[0].line, repo=group[0].repo)
    return Hit(
        f"{message}{note}{also_stated(first, also)}",
        first,
        group[0].text,
        severity,
        also,
    )


def _items(promises: list[Promise]) -> str:
    table = promise_table()
    parts = []
    for promise in promises:
        label = table.label(promise.artifact)
        item = promise.item or label
        parts.append(item if item.lower() == label.lower() else f"{item} ({label})")
    return "; ".join(parts)


def _age(promises: list[Promise]) -> tuple[int | None, str | None]:
    """Age in days and first-seen date of the oldest item of a line."""
    dated = [p for p in promises if p.age_days is not None]
    if not dated:
        return None, None
    oldest = max(dated, key=lambda p: p.age_days or 0)
    return oldest.age_days, oldest.first_seen


def escalated(age: int | None, rule: Rule) -> Severity:
    """Severity of a missing promise by its age, with thresholds from the rule's params."""
    if age is None:
        return rule.param("unknown_age_severity", "warning")
    if age >= int(rule.param("error_after_days", 90)):
        return "error"
    if age >= int(rule.param("warning_after_days", 30)):
        return "warning"
    return "info"


def _needs_promises(facts: Facts) -> None:
    if not any(p.charged for p in facts.promises):
        others = len(facts.promises)
        about = f" about this model ({others} about other models)" if others else ""
        raise NotApplicable(f"no promises{about} in the card or the code README")


@check("PRM001")
def promised_artifact_missing(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_promises(facts)
    missing = [p for p in facts.promises if p.status == "missing"]
    for _where, group in _by_line(missing).items():
        age, seen = _age(group)
        # No day count in the message: it would change every day, and the message is part
        # of a finding's identity (store diffs, SARIF fingerprints). The severity carries the age.
        since = f"promised since {seen}" if seen else "first appearance unknown"
        reasons = "; ".join(dict.fromkeys(p.reason for p in group if p.reason))
        yield _hit(
            f"promised but not delivered: {_items(group)} — {since}; {reasons}",
            group,
            escalated(age, rule),
        )


@check("PRM002")
def promise_status_unknown(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_promises(facts)
    unknown = [p for p in facts.promises if p.status == "unknown"]
    for _where, group in _by_line(unknown).items():
        _age_days, seen = _age(group)
        since = f"; promised since {seen}" if seen else ""
        reasons = "; ".join(dict.fromkeys(p.reason for p in group if p.reason))
        yield _hit(
            f"cannot tell whether this was delivered: {_items(group)} — {reasons}{since}",
            group,
            None,
        )


@check("PRM003")
def delivered_but_still_promised(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_promises(facts)
    delivered = [p for p in facts.promises if p.status == "delivered"]
    for _where, group in _by_line(delivered).items():
        reasons = "; ".join(dict.fromkeys(p.reason for p in group if p.reason))
        yield _hit(
            f"still announced as coming, but delivered: {_items(group)} — {reasons}",
            group,
            None,
        )
