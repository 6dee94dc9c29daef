"""The promise ledger of a model: every promised item across its stored audits, when it was
first promised, when it was delivered (or that it is still open, or was dropped), how many
days it has been open, and where it is stated.

One implementation for ``cardaudit history --format …``, ``track list`` and ``serve``. It
follows each promise from audit to audit with :func:`cardaudit.timeline.match_promises` (the
same identity ``history`` and ``diff`` use, so a better matching of reworded promises flows
in here) and judges a promise that disappears with :func:`cardaudit.timeline.diff_audits`
(delivered and removed from the text, or dropped).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Literal

from cardaudit.store.records import AuditRecord, PromiseRecord
from cardaudit.timeline import diff_audits, match_promises, promised_since

if TYPE_CHECKING:
    from cardaudit.store import Store

State = Literal["open", "delivered", "dropped"]


@dataclass(frozen=True)
class LedgerEntry:
    """One promised item of one model, followed over its audits."""

    artifact: str
    item: str | None
    text: str  # the wording of the last audit that stated it
    repo: str
    path: str | None
    line: int | None
    state: State
    status: str  # the promise's status in the last audit that stated it
    first_promised: datetime
    first_audit_id: int
    last_audit_id: int
    delivered_on: datetime | None = None
    dropped_on: datetime | None = None
    reason: str | None = None
    days_open: int = 0

    @property
    def name(self) -> str:
        """What is promised: the item's words, else the sentence."""
        return self.item or self.text

    def where(self) -> str:
        return PromiseRecord(
            self.artifact, self.text, self.repo, self.path, self.line, self.status
        ).where()

    @property
    def closed_on(self) -> datetime | None:
        return self.delivered_on or self.dropped_on


def _days(start: datetime, end: datetime) -> int:
    return max(0, (end - start).days)


def _opened(promise: PromiseRecord, audit: AuditRecord) -> LedgerEntry:
    delivered = promise.status == "delivered"
    return LedgerEntry(
        artifact=promise.artifact,
        item=promise.item,
        text=promise.text,
        repo=promise.repo,
        path=promise.path,
        line=promise.line,
        state="delivered" if delivered else "open",
        status=promise.status,
        first_promised=promised_since(promise, audit),
        first_audit_id=audit.id,
        last_audit_id=audit.id,
        delivered_on=audit.audited_at if delivered else None,
        reason=promise.reason,
    )


def _seen_again(entry: LedgerEntry, promise: PromiseRecord, audit: AuditRecord) -> LedgerEntry:
    """``entry`` stated again by ``audit``: its wording and place now, delivered when it
    turns delivered, open again when a delivery is withdrawn."""
    delivered = promise.status == "delivered"
    delivered_on = entry.delivered_on if delivered else None
    if delivered and delivered_on is None:
        delivered_on = audit.audited_at
    return replace(
        entry,
        item=promise.item or entry.item,
        text=promise.text,
        repo=promise.repo,
        path=promise.path,
        line=promise.line,
        state="delivered" if delivered else "open",
        status=promise.status,
        first_promised=min(entry.first_promised, promised_since(promise, audit)),
        last_audit_id=audit.id,
        delivered_on=delivered_on,
        reason=promise.reason,
    )


def promise_ledger(audits: Sequence[AuditRecord], now: datetime | None = None) -> list[LedgerEntry]:
    """The ledger from a model's audits (oldest first), ordered by first promised (then by
    where it was first stated).

    ``days_open`` runs from first promised to delivered or dropped, or to ``now`` (default:
    the audit clock, ``CARDAUDIT_NOW`` when set) for an open item.
    """
    if not audits:
        return []
    if now is None:
        from cardaudit.clock import audit_now

        now = audit_now()
    closed: list[LedgerEntry] = []
    current: dict[int, LedgerEntry] = {id(p): _opened(p, audits[0]) for p in audits[0].promises}
    unchanged_until: int | None = None  # the last audit of a run that restated the same records
    for old, new in pairwise(audits):
        if new.promises is old.promises:
            # The store shares one records tuple across a run of audits with equal content:
            # each promise is seen again as it was, so only the last audit id moves on.
            unchanged_until = new.id
            continue
        if unchanged_until is not None:
            current = {k: replace(e, last_audit_id=unchanged_until) for k, e in current.items()}
            unchanged_until = None
        pairs, gone, fresh = match_promises(old.promises, new.promises)
        following: dict[int, LedgerEntry] = {}
        for was, now_stated in pairs:
            following[id(now_stated)] = _seen_again(current[id(was)], now_stated, new)
        if gone:
            removed = {
                id(change.before): change.after
                for change in diff_audits(old, new).promises_delivered
                if change.removed
            }
            for was in gone:
                entry = current[id(was)]
                if entry.state == "delivered":
                    closed.append(entry)
                elif id(was) in removed:
                    delivered = removed[id(was)]
                    closed.append(
                        replace(
                            entry,
                            state="delivered",
                            status="delivered",
                            delivered_on=new.audited_at,
                            reason=delivered.reason,
                        )
                    )
                else:
                    closed.append(replace(entry, state="dropped", dropped_on=new.audited_at))
        for promise in fresh:
            following[id(promise)] = _opened(promise, new)
        current = following
    if unchanged_until is not None:
        current = {k: replace(e, last_audit_id=unchanged_until) for k, e in current.items()}
    entries = [*closed, *current.values()]
    entries = [replace(e, days_open=_days(e.first_promised, e.closed_on or now)) for e in entries]
    return sorted(
        entries,
        key=lambda e: (e.first_promised, e.first_audit_id, e.repo, e.path or "", e.line or 0),
    )


@dataclass(frozen=True)
class LedgerSummary:
    """What a dashboard row or ``track list`` shows of a ledger."""

    open: int
    delivered: int
    dropped: int
    oldest_open_days: int | None

    @classmethod
    def of(cls, entries: Iterable[LedgerEntry]) -> LedgerSummary:
        listed = list(entries)
        open_days = [e.days_open for e in listed if e.state == "open"]
        return cls(
            open=len(open_days),
            delivered=sum(1 for e in listed if e.state == "delivered"),
            dropped=sum(1 for e in listed if e.state == "dropped"),
            oldest_open_days=max(open_days) if open_days else None,
        )


def ledger_of(store: Store, key: str, now: datetime | None = None) -> list[LedgerEntry]:
    """The ledger of one stored target (empty when it has no audit)."""
    return ledgers_of(store, [key], now).get(key, [])


def ledgers_of(
    store: Store, keys: Sequence[str] | None = None, now: datetime | None = None
) -> Mapping[str, list[LedgerEntry]]:
    """The ledger of each of ``keys`` (default: every stored target), read in one query
    without the audits' facts, checks or findings."""
    from cardaudit.store.queries import audit_histories

    return {
        key: promise_ledger(audits, now) for key, audits in audit_histories(store, keys).items()
    }
