"""History and diff of stored audits: pure functions over :class:`AuditRecord` values.

A diff compares two audits of one model: the licence (a change is a LIC050 error finding),
promises that appeared, were delivered, were dropped or changed status, and findings added,
resolved, escalated or de-escalated. A history is the first audit followed by the diff of
each consecutive pair.

A promise is the same across audits when its repo, artifact kind, item and wording agree (its
file and line may change), and — what is left paired by
:func:`cardaudit.extract.promise_identity.same_promise` — when it was reworded: same repo,
same artifact, the words naming its item equal or mostly shared. A promise that disappears
from the text is judged on the newer audit's stored delivery evidence (checked roadmap
boxes, delivery statements, delivering files in the code or model repo): delivered and
removed, or dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import pairwise
from typing import Any

from cardaudit.model import SEVERITIES, Severity
from cardaudit.store.records import AuditRecord, FindingRecord, PromiseRecord, display_key

LICENCE_RULE = "LIC050"


@dataclass(frozen=True)
class LicenceChange:
    before: str | None
    after: str | None
    finding: FindingRecord


@dataclass(frozen=True)
class PromiseChange:
    """A promise seen in both audits — or, when ``removed``, one the newer audit no longer
    states but shows delivered (``after`` is then the old record marked delivered)."""

    before: PromiseRecord
    after: PromiseRecord
    removed: bool = False


@dataclass(frozen=True)
class FindingChange:
    """The same finding in both audits with another severity."""

    before: FindingRecord
    after: FindingRecord


@dataclass(frozen=True)
class AuditDiff:
    """What changed between two audits of the same model."""

    old: AuditRecord
    new: AuditRecord
    licence_change: LicenceChange | None = None
    promises_appeared: tuple[PromiseRecord, ...] = ()
    promises_delivered: tuple[PromiseChange, ...] = ()
    promises_dropped: tuple[PromiseRecord, ...] = ()
    promises_changed: tuple[PromiseChange, ...] = ()
    findings_added: tuple[FindingRecord, ...] = ()
    findings_resolved: tuple[FindingRecord, ...] = ()
    findings_unchanged: int = 0
    findings_escalated: tuple[FindingChange, ...] = ()
    findings_deescalated: tuple[FindingChange, ...] = ()

    @property
    def findings(self) -> tuple[FindingRecord, ...]:
        """Findings the diff itself raises (a licence change is an error)."""
        return (self.licence_change.finding,) if self.licence_change else ()

    @property
    def empty(self) -> bool:
        return not (
            self.licence_change
            or self.promises_appeared
            or self.promises_delivered
            or self.promises_dropped
            or self.promises_changed
            or self.findings_added
            or self.findings_resolved
            or self.findings_escalated
            or self.findings_deescalated
        )


@dataclass(frozen=True)
class Event:
    """One line of a timeline."""

    at: datetime
    audit_id: int
    revision: str | None
    kind: str
    message: str
    severity: Severity | None = None
    rule_id: str | None = None
    where: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    finding: FindingRecord | None = None  # the finding this event raises (LIC050)


@dataclass(frozen=True)
class History:
    target_key: str
    audits: tuple[AuditRecord, ...]
    events: tuple[Event, ...]

    @property
    def target(self) -> str:
        return display_key(self.target_key)


def _licence_finding(old: AuditRecord, new: AuditRecord) -> FindingRecord:
    """The LIC050 finding for a licence change: the one stored with ``new`` when it was
    recorded against ``old``, else one built from the two audits."""
    for finding in new.findings:
        if finding.rule_id == LICENCE_RULE:
            return finding
    from cardaudit.checks.tracking import describe

    return FindingRecord(
        rule_id=LICENCE_RULE,
        severity=_rule_severity(),
        message=(
            f"licence changed from {describe(old.licence_declared or old.licence_spdx)} "
            f"(audit #{old.id} of {old.short_revision}, {old.audited_at:%Y-%m-%d}) to "
            f"{describe(new.licence_declared or new.licence_spdx)}: legal review must see this"
        ),
        repo="model",
        path=None,
        line=None,
    )


def _rule_severity() -> Severity:
    from cardaudit.rules import load_rules

    return load_rules()[LICENCE_RULE].severity


def _licence_changed(old: AuditRecord, new: AuditRecord) -> bool:
    from cardaudit.checks.tracking import licence_changed
    from cardaudit.rules import load_rules

    return licence_changed(
        (old.licence_spdx, old.licence_declared),
        (new.licence_spdx, new.licence_declared),
        load_rules()[LICENCE_RULE],
    )


def _pair(
    old: Iterable[PromiseRecord],
    new: Iterable[PromiseRecord],
    key: Callable[[PromiseRecord], Hashable],
) -> tuple[list[tuple[PromiseRecord, PromiseRecord]], list[PromiseRecord], list[PromiseRecord]]:
    """(pairs, unpaired old, unpaired new): records with equal keys paired in order, so a
    promise stated twice is two promises, not one."""
    waiting: dict[Hashable, list[PromiseRecord]] = {}
    for record in old:
        waiting.setdefault(key(record), []).append(record)
    pairs, fresh = [], []
    for record in new:
        queue = waiting.get(key(record))
        if queue:
            pairs.append((queue.pop(0), record))
        else:
            fresh.append(record)
    gone = [record for queue in waiting.values() for record in queue]
    return pairs, gone, fresh


def match_promises(
    old: Iterable[PromiseRecord], new: Iterable[PromiseRecord]
) -> tuple[list[tuple[PromiseRecord, PromiseRecord]], list[PromiseRecord], list[PromiseRecord]]:
    """Pair the promises of two audits by identity; then pair what is left by the identity
    without the item where one side has none (stored before items were)."""
    old_list, new_list = list(old), list(new)
    pairs, gone, fresh = _pair(old_list, new_list, lambda p: p.identity)
    legacy_gone = [p for p in gone if p.item is None]
    legacy_fresh = [p for p in fresh if p.item is None]
    if legacy_gone or legacy_fresh:
        late, _, _ = _pair(
            legacy_gone + [p for p in gone if p.item is not None and legacy_fresh],
            [p for p in fresh if p.item is not None and legacy_gone] + legacy_fresh,
            lambda p: p.loose_identity,
        )
        late = [(a, b) for a, b in late if a.item is None or b.item is None]
        paired_old = {id(a) for a, _ in late}
        paired_new = {id(b) for _, b in late}
        pairs += late
        gone = [p for p in gone if id(p) not in paired_old]
        fresh = [p for p in fresh if id(p) not in paired_new]
    reworded = _pair_reworded(gone, fresh)
    if reworded:
        paired_old = {id(a) for a, _ in reworded}
        paired_new = {id(b) for _, b in reworded}
        pairs += reworded
        gone = [p for p in gone if id(p) not in paired_old]
        fresh = [p for p in fresh if id(p) not in paired_new]
    order_old = {id(p): i for i, p in enumerate(old_list)}
    order_new = {id(p): i for i, p in enumerate(new_list)}
    pairs.sort(key=lambda pair: order_new[id(pair[1])])
    gone.sort(key=lambda p: order_old[id(p)])
    fresh.sort(key=lambda p: order_new[id(p)])
    return pairs, gone, fresh


def _pair_reworded(
    gone: list[PromiseRecord], fresh: list[PromiseRecord]
) -> list[tuple[PromiseRecord, PromiseRecord]]:
    """Pair promises that are the same promise reworded (same repo and artifact, item words
    mostly shared), each old one with the first new one that matches."""
    from cardaudit.extract.promise_identity import same_promise
    from cardaudit.extract.promises import promise_table

    table = promise_table()
    pairs = []
    waiting = list(fresh)
    for old in gone:
        for new in waiting:
            if old.repo == new.repo and same_promise(
                (old.artifact, old.item, old.text), (new.artifact, new.item, new.text), table
            ):
                pairs.append((old, new))
                waiting.remove(new)
                break
    return pairs


def _removed_after_delivery(promise: PromiseRecord, new: AuditRecord) -> PromiseChange | None:
    """A promise the newer audit no longer states, shown delivered by its evidence."""
    if promise.status == "delivered" or new.deliveries is None:
        return None
    from cardaudit.extract.promise_delivery import delivered_by

    reason = delivered_by(promise.artifact, promise.item, promise.text, new.deliveries)
    if reason is None:
        return None
    return PromiseChange(promise, replace(promise, status="delivered", reason=reason), True)


def _rank(severity: str) -> int:
    """info < warning < error (SEVERITIES lists the worst first)."""
    order = list(reversed(SEVERITIES))
    return order.index(severity) if severity in order else -1


def diff_audits(old: AuditRecord, new: AuditRecord) -> AuditDiff:
    """What changed from ``old`` to ``new`` (two audits of one model)."""
    licence = None
    if _licence_changed(old, new):
        licence = LicenceChange(old.licence, new.licence, _licence_finding(old, new))

    pairs, gone, fresh = match_promises(old.promises, new.promises)
    delivered, changed, dropped = [], [], []
    for was, now in pairs:
        if was.status == now.status:
            continue
        change = PromiseChange(was, now)
        (delivered if now.status == "delivered" else changed).append(change)
    for was in gone:
        removed = _removed_after_delivery(was, new)
        if removed is not None:
            delivered.append(removed)
        else:
            dropped.append(was)

    # A finding of the diff's own rule is the change itself, not a finding that "appeared".
    old_findings = {f.identity: f for f in old.active_findings() if f.rule_id != LICENCE_RULE}
    new_findings = {f.identity: f for f in new.active_findings() if f.rule_id != LICENCE_RULE}
    both = [(old_findings[i], f) for i, f in new_findings.items() if i in old_findings]
    escalated = [FindingChange(a, b) for a, b in both if _rank(b.severity) > _rank(a.severity)]
    eased = [FindingChange(a, b) for a, b in both if _rank(b.severity) < _rank(a.severity)]
    return AuditDiff(
        old=old,
        new=new,
        licence_change=licence,
        promises_appeared=tuple(fresh),
        promises_delivered=tuple(delivered),
        promises_dropped=tuple(dropped),
        promises_changed=tuple(changed),
        findings_added=tuple(f for i, f in new_findings.items() if i not in old_findings),
        findings_resolved=tuple(f for i, f in old_findings.items() if i not in new_findings),
        findings_unchanged=len(both) - len(escalated) - len(eased),
        findings_escalated=tuple(escalated),
        findings_deescalated=tuple(eased),
    )


def _when(promise: PromiseRecord, audit: AuditRecord) -> datetime:
    """When a promise first appeared: its git ``first_seen`` date when known."""
    if promise.first_seen:
        try:
            moment = datetime.fromisoformat(promise.first_seen.replace("Z", "+00:00"))
        except ValueError:
            return audit.audited_at
        return moment if moment.tzinfo else moment.replace(tzinfo=audit.audited_at.tzinfo)
    return audit.audited_at


def promised_since(promise: PromiseRecord, audit: AuditRecord) -> datetime:
    """When ``promise``, seen by ``audit``, was first promised (the ledger's "first
    promised"): its git ``first_seen`` date when known, else the audit's time."""
    return _when(promise, audit)


def _event(audit: AuditRecord, kind: str, message: str, **extra: Any) -> Event:
    at = extra.pop("at", audit.audited_at)
    return Event(at, audit.id, audit.revision, kind, message, **extra)


def _finding_detail(finding: FindingRecord) -> dict[str, Any]:
    return {"message": finding.message, "evidence": finding.evidence}


def diff_events(diff: AuditDiff) -> list[Event]:
    """The timeline events of one diff, stamped with the newer audit."""
    new = diff.new
    events: list[Event] = []
    if diff.licence_change:
        change = diff.licence_change
        events.append(
            _event(
                new,
                "licence_changed",
                change.finding.message,
                severity=change.finding.severity,  # type: ignore[arg-type]
                rule_id=LICENCE_RULE,
                where=change.finding.where(),
                detail={"before": change.before, "after": change.after},
                finding=change.finding,
            )
        )
    for promise in diff.promises_appeared:
        events.append(
            _event(
                new,
                "promise_appeared",
                f"promise appeared ({promise.artifact}, {promise.status}): {promise.text}",
                at=_when(promise, new),
                where=promise.where(),
                detail=promise.detail(),
            )
        )
    for change in diff.promises_delivered:
        how = "delivered and removed from the text" if change.removed else "delivered"
        events.append(
            _event(
                new,
                "promise_delivered",
                f"promise {how} ({change.after.artifact}): {change.after.text}"
                + (f" — {change.after.reason}" if change.after.reason else ""),
                where=change.after.where(),
                detail={
                    **change.after.detail(),
                    "previous_status": change.before.status,
                    "still_stated": not change.removed,
                },
            )
        )
    for change in diff.promises_changed:
        events.append(
            _event(
                new,
                "promise_status_changed",
                f"promise {change.before.status} → {change.after.status} "
                f"({change.after.artifact}): {change.after.text}",
                where=change.after.where(),
                detail={**change.after.detail(), "previous_status": change.before.status},
            )
        )
    for promise in diff.promises_dropped:
        note = "never delivered" if promise.status != "delivered" else "after delivery"
        events.append(
            _event(
                new,
                "promise_dropped",
                f"promise dropped from the text ({promise.artifact}, {note}): {promise.text}",
                where=promise.where(),
                detail=promise.detail(),
            )
        )
    for finding in diff.findings_added:
        events.append(
            _event(
                new,
                "finding_added",
                f"{finding.rule_id} {finding.message}",
                severity=finding.severity,  # type: ignore[arg-type]
                rule_id=finding.rule_id,
                where=finding.where(),
                detail=_finding_detail(finding),
            )
        )
    for kind, changes in (
        ("finding_escalated", diff.findings_escalated),
        ("finding_deescalated", diff.findings_deescalated),
    ):
        for change in changes:
            after = change.after
            events.append(
                _event(
                    new,
                    kind,
                    f"{after.rule_id} {change.before.severity} → {after.severity}: {after.message}",
                    severity=after.severity,  # type: ignore[arg-type]
                    rule_id=after.rule_id,
                    where=after.where(),
                    detail={**_finding_detail(after), "previous_severity": change.before.severity},
                )
            )
    for finding in diff.findings_resolved:
        events.append(
            _event(
                new,
                "finding_resolved",
                f"{finding.rule_id} resolved: {finding.message}",
                rule_id=finding.rule_id,
                where=finding.where(),
                detail=_finding_detail(finding),
            )
        )
    return events


def first_audit_events(audit: AuditRecord) -> list[Event]:
    """The baseline: licence, findings count and every promise the first audit saw."""
    active = audit.active_findings()
    events = [
        _event(
            audit,
            "first_audit",
            f"first audit: licence {audit.licence_declared or 'not declared'}; "
            f"{audit.errors} error(s), {audit.warnings} warning(s), {audit.infos} info; "
            f"{len(active)} finding(s), {len(audit.promises)} promise(s)",
            detail={"licence": audit.licence_declared, "licence_spdx": audit.licence_spdx},
        )
    ]
    for promise in audit.promises:
        events.append(
            _event(
                audit,
                "promise_appeared",
                f"promise appeared ({promise.artifact}, {promise.status}): {promise.text}",
                at=_when(promise, audit),
                where=promise.where(),
                detail=promise.detail(),
            )
        )
    return events


def build_history(target_key: str, audits: list[AuditRecord]) -> History:
    """The timeline of a model from its stored audits (oldest first)."""
    events: list[Event] = []
    if audits:
        events += first_audit_events(audits[0])
    for old, new in pairwise(audits):
        if not _same_content(old, new):
            events += diff_events(diff_audits(old, new))
    # Date order: a promise's event carries the date it first appeared (git), which may
    # precede the audit that saw it; the sort is stable, so one audit's events keep theirs.
    events.sort(key=lambda event: event.at)
    return History(target_key, tuple(audits), tuple(events))


def _same_content(old: AuditRecord, new: AuditRecord) -> bool:
    """Whether two audits store the same licence, findings, promises and deliveries: their
    diff is then empty whatever the matching, and a history of 10,000 re-audits of an
    unchanged model skips 10,000 diffs (the store shares the records of equal audits, so
    these comparisons are mostly identity checks)."""
    return (
        old.licence_spdx == new.licence_spdx
        and old.licence_declared == new.licence_declared
        and old.findings == new.findings
        and old.promises == new.promises
        and old.deliveries == new.deliveries
    )


def pick_audit(audits: list[AuditRecord], reference: str) -> AuditRecord:
    """The audit a ``--from`` / ``--to`` value names: ``#ID``, or a revision (prefix), the
    latest audit of that revision winning."""
    from cardaudit.errors import UsageError

    reference = reference.strip()
    if reference.startswith("#") and reference[1:].isdigit():
        for audit in audits:
            if audit.id == int(reference[1:]):
                return audit
        raise UsageError(f"no audit {reference} of this model")
    if len(reference) < 4:
        raise UsageError(f"revision {reference!r} is too short (give at least 4 characters)")
    matches = [a for a in audits if a.revision and a.revision.startswith(reference.lower())]
    if not matches:
        raise UsageError(f"no stored audit at revision {reference!r}")
    if len({a.revision for a in matches}) > 1:
        raise UsageError(f"revision {reference!r} is ambiguous")
    return matches[-1]
