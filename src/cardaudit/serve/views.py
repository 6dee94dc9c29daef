"""What the dashboard and the model page show, as plain values (templates only lay them out).

The dashboard reads, for every tracked target, its latest audit (licence, lineage and the
findings for the verdict; no other facts) and its promise ledger, in a few queries whatever
the number of targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cardaudit.ledger import LedgerEntry, LedgerSummary, ledgers_of
from cardaudit.serve.service import RefreshStatus, Service
from cardaudit.serve.targets import slug
from cardaudit.store import TrackedTarget
from cardaudit.store.records import AuditRecord

SORTS = ("target", "verdict", "licence", "open", "oldest", "audited")
VERDICT_ORDER = {"failing": 0, "warnings": 1, "passing": 2, "never audited": 3}


@dataclass(frozen=True)
class DashboardRow:
    target: str
    slug: str
    org: str
    verdict: str
    verdict_class: str  # error, warning, info, none, never
    licence: str
    lineage_head: str
    open_promises: int
    oldest_open_days: int | None
    last_audit: datetime | None
    last_audit_id: int | None
    revision: str
    refresh: RefreshStatus | None

    def sort_key(self, column: str) -> Any:
        if column == "verdict":
            return VERDICT_ORDER.get(self.verdict_group, 9), self.target
        if column == "licence":
            return self.licence.lower(), self.target
        if column == "open":
            return self.open_promises, self.target
        if column == "oldest":
            return self.oldest_open_days or -1, self.target
        if column == "audited":
            return self.last_audit or datetime.min.replace(tzinfo=UTC), self.target
        return self.target.lower()

    @property
    def verdict_group(self) -> str:
        """ "failing", "warnings", "passing" or "never audited" (what the filter offers)."""
        if self.last_audit is None:
            return "never audited"
        if self.verdict == "failing":
            return "failing"
        return "warnings" if "warning" in self.verdict else "passing"


def age(moment: datetime | None, now: datetime | None = None) -> str:
    """ "3 h ago", "12 days ago", "never"."""
    if moment is None:
        return "never"
    seconds = ((now or datetime.now(UTC)) - moment).total_seconds()
    if seconds < 90:
        return "just now"
    if seconds < 5400:
        return f"{round(seconds / 60)} min ago"
    if seconds < 48 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def lineage_head(facts: Mapping[str, Any]) -> str:
    """The root of the lineage chain (the deepest base model), with its licence."""
    chain = [link for link in facts.get("lineage") or [] if isinstance(link, Mapping)]
    bases = [link for link in chain if (link.get("depth") or 0) > 0]
    if not bases:
        listed = facts.get("base_models") or []
        return str(listed[0].get("id")) if listed and isinstance(listed[0], Mapping) else "-"
    head = max(bases, key=lambda link: link.get("depth") or 0)
    licence = head.get("licence")
    return f"{head.get('id')} ({licence})" if licence else str(head.get("id"))


def dashboard_rows(service: Service) -> list[DashboardRow]:
    from cardaudit.reporters.common import verdict
    from cardaudit.reporters.from_json import report_from_json
    from cardaudit.store.queries import latest_reports

    store = service.store
    tracked = store.tracked()
    keys = [t.key for t in tracked]
    latest = latest_reports(
        store, keys, facts=("license", "lineage", "base_models"), promises=False
    )
    ledgers = ledgers_of(store, keys)
    rows = []
    for target in tracked:
        summary = LedgerSummary.of(ledgers.get(target.key, []))
        found = latest.get(target.key)
        if found is None:
            rows.append(_never(target, summary, service.status.get(target.key)))
            continue
        record, data = found  # card text is made visible by the templates' finalize
        outcome = verdict(report_from_json({**data, "facts": {}}))  # findings and checks
        rows.append(
            DashboardRow(
                target=slug(target.key) if target.key.startswith("hub:") else target.target,
                slug=slug(target.key),
                org=_org(target),
                verdict=outcome.message,
                verdict_class=outcome.worst or "none",
                licence=(data["facts"].get("license") or {}).get("declared") or "not declared",
                lineage_head=lineage_head(data["facts"]),
                open_promises=summary.open,
                oldest_open_days=summary.oldest_open_days,
                last_audit=record.audited_at,
                last_audit_id=record.id,
                revision=record.short_revision,
                refresh=service.status.get(target.key),
            )
        )
    return rows


def _org(target: TrackedTarget) -> str:
    if target.key.startswith("hub:"):
        return target.target.split("/", 1)[0]
    return "local"


def _never(
    target: TrackedTarget, summary: LedgerSummary, status: RefreshStatus | None
) -> DashboardRow:
    return DashboardRow(
        target=target.target if not target.key.startswith("hub:") else slug(target.key),
        slug=slug(target.key),
        org=_org(target),
        verdict="never audited",
        verdict_class="never",
        licence="-",
        lineage_head="-",
        open_promises=summary.open,
        oldest_open_days=summary.oldest_open_days,
        last_audit=None,
        last_audit_id=None,
        revision="-",
        refresh=status,
    )


def filter_rows(
    rows: Sequence[DashboardRow], *, licence: str = "", verdict: str = "", org: str = ""
) -> list[DashboardRow]:
    return [
        row
        for row in rows
        if (not licence or row.licence == licence)
        and (not verdict or row.verdict_group == verdict)
        and (not org or row.org == org)
    ]


def sort_rows(rows: Sequence[DashboardRow], column: str, descending: bool) -> list[DashboardRow]:
    column = column if column in SORTS else "target"
    return sorted(rows, key=lambda row: row.sort_key(column), reverse=descending)


def row_to_json(row: DashboardRow) -> dict[str, Any]:
    return {
        "target": row.target,
        "slug": row.slug,
        "org": row.org,
        "verdict": row.verdict,
        "licence": row.licence,
        "lineage_head": row.lineage_head,
        "open_promises": row.open_promises,
        "oldest_open_days": row.oldest_open_days,
        "last_audit": row.last_audit.isoformat() if row.last_audit else None,
        "last_audit_id": row.last_audit_id,
        "revision": row.revision,
        "refresh": status_to_json(row.refresh),
    }


def status_to_json(status: RefreshStatus | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {"at": status.at.isoformat(), "outcome": status.outcome, "detail": status.detail}


def find_target(service: Service, wanted: str) -> tuple[str, TrackedTarget | None] | None:
    """The store key a URL slug names (tracked or only audited), or None."""
    for tracked in service.store.tracked():
        if slug(tracked.key) == wanted:
            return tracked.key, tracked
    for key, _count in service.store.targets():
        if slug(key) == wanted:
            return key, None
    return None


@dataclass(frozen=True)
class ModelPage:
    key: str
    slug: str
    title: str
    audits: list[AuditRecord]
    ledger: list[LedgerEntry]
    history: Any  # cardaudit.timeline.History
    diff: Any | None  # cardaudit.timeline.AuditDiff
    diff_from: int | None
    diff_to: int | None
    status: RefreshStatus | None
    tracked: bool


def model_page(
    service: Service,
    key: str,
    tracked: TrackedTarget | None,
    diff_from: int | None,
    diff_to: int | None,
) -> ModelPage:
    from cardaudit.ledger import promise_ledger
    from cardaudit.timeline import build_history, diff_audits

    audits = service.store.audits(key)
    chosen = None
    if len(audits) >= 2:
        by_id = {audit.id: audit for audit in audits}
        new = by_id.get(diff_to) if diff_to else audits[-1]
        old = by_id.get(diff_from) if diff_from else None
        if new is not None and old is None:
            earlier = [a for a in audits if (a.audited_at, a.id) < (new.audited_at, new.id)]
            old = earlier[-1] if earlier else None
        if old is not None and new is not None and old.id != new.id:
            chosen = diff_audits(old, new)
    title = tracked.target if tracked and not key.startswith("hub:") else slug(key)
    if not tracked and key.startswith("local:"):
        title = key.partition(":")[2]
    return ModelPage(
        key=key,
        slug=slug(key),
        title=title,
        audits=audits,
        ledger=promise_ledger(audits),
        history=build_history(key, audits) if audits else None,
        diff=chosen,
        diff_from=chosen.old.id if chosen else None,
        diff_to=chosen.new.id if chosen else None,
        status=service.status.get(key),
        tracked=tracked is not None,
    )
