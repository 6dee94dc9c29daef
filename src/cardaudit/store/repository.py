"""The tracking store: every audit, with its findings and promises, and the tracked list.

Each write is one short transaction, retried when another process holds the lock, so a
crash loses at most the audit being written and concurrent ``track run`` processes only
ever wait for each other.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from cardaudit.errors import StoreError
from cardaudit.store.engine import create_store_engine, resolve_url, safe_url, upgrade
from cardaudit.store.records import (
    AuditRecord,
    FindingRecord,
    PromiseRecord,
    TrackedTarget,
    display_key,
    target_key,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

    from cardaudit.model import Report
    from cardaudit.store.schema import AuditRow, TrackedRow

T = TypeVar("T")
#: Attempts for one write transaction that keeps meeting a lock or a serialisation failure.
WRITE_ATTEMPTS = 5


def _transient(exc: Exception) -> bool:
    """Whether a database error is worth retrying (a lock, a busy file, a serialisation)."""
    text = str(getattr(exc, "orig", exc)).lower()
    return any(
        word in text
        for word in ("database is locked", "database is busy", "could not serialize", "deadlock")
    )


def _one_line(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back naive; they were stored in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Store:
    """A tracking store at a SQLAlchemy URL, migrated to the current schema on open."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Open (creating and migrating as needed) the store at ``url`` or the default."""
        from sqlalchemy.exc import SQLAlchemyError

        resolved = resolve_url(url)
        engine = create_store_engine(resolved)
        try:
            cls._retry(lambda: upgrade(engine))
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(
                f"cannot open the store {safe_url(resolved)}: {_one_line(exc)}"
            ) from exc
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        return safe_url(self.engine.url)

    # ------------------------------------------------------------------ transactions

    @staticmethod
    def _retry(action: Callable[[], T]) -> T:
        from sqlalchemy.exc import OperationalError

        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return action()
            except OperationalError as exc:
                if attempt == WRITE_ATTEMPTS or not _transient(exc):
                    raise
                time.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    @contextmanager
    def _session(self) -> Iterator[Session]:
        from sqlalchemy.orm import Session

        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def _run(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in one transaction (retried on lock contention)."""
        from sqlalchemy.exc import SQLAlchemyError

        def attempt() -> T:
            with self._session() as session:
                return work(session)

        try:
            return self._retry(attempt)
        except SQLAlchemyError as exc:
            raise StoreError(f"store {self.url}: {_one_line(exc)}") from exc

    # ------------------------------------------------------------------ tracked targets

    def track(self, key: str, target: str, code: str | None, base: str | None) -> bool:
        """Add a target to the tracked list; False when it was already there (updated)."""
        from sqlalchemy import select

        from cardaudit.clock import audit_now
        from cardaudit.store.schema import TrackedRow

        def work(session: Session) -> bool:
            row = session.scalars(select(TrackedRow).where(TrackedRow.key == key)).first()
            if row is not None:
                row.target, row.code, row.base = target, code, base
                return False
            session.add(
                TrackedRow(key=key, target=target, code=code, base=base, added_at=audit_now())
            )
            return True

        return self._run(work)

    def untrack(self, key: str) -> bool:
        """Remove a target from the tracked list (its audits stay); False if absent."""
        from sqlalchemy import delete

        from cardaudit.store.schema import TrackedRow

        def work(session: Session) -> bool:
            return session.execute(delete(TrackedRow).where(TrackedRow.key == key)).rowcount > 0

        return self._run(work)

    def tracked(self) -> list[TrackedTarget]:
        from sqlalchemy import select

        from cardaudit.store.schema import TrackedRow

        def work(session: Session) -> list[TrackedTarget]:
            rows = session.scalars(select(TrackedRow).order_by(TrackedRow.key))
            return [_tracked(row) for row in rows]

        return self._run(work)

    # ------------------------------------------------------------------ audits

    def record(
        self,
        report: Report,
        audited_at: datetime | None = None,
        deliveries: dict[str, Any] | None = None,
    ) -> int:
        """Store one audit (in its own transaction); returns its id."""
        from cardaudit.reporters.json_report import report_to_json

        data = report_to_json(report)
        return self.record_json(data, target_key(report.target), audited_at, deliveries)

    def record_json(
        self,
        data: dict[str, Any],
        key: str,
        audited_at: datetime | None = None,
        deliveries: dict[str, Any] | None = None,
    ) -> int:
        """Store an audit given as a JSON report (the published contract), at ``audited_at``
        (default: the audit clock, ``CARDAUDIT_NOW`` when set)."""
        from cardaudit.clock import audit_now

        moment = audited_at or audit_now()

        def work(session: Session) -> int:
            row = _audit_row(data, key, moment, deliveries)  # built afresh on every attempt
            session.add(row)
            session.flush()
            return row.id

        return self._run(work)

    def audits(self, key: str) -> list[AuditRecord]:
        """Every audit of ``key``, oldest first."""
        from sqlalchemy import select
        from sqlalchemy.orm import selectinload

        from cardaudit.store.schema import AuditRow

        def work(session: Session) -> list[AuditRecord]:
            query = (
                select(AuditRow)
                .where(AuditRow.target_key == key)
                .order_by(AuditRow.audited_at, AuditRow.id)
                .options(selectinload(AuditRow.findings), selectinload(AuditRow.promises))
            )
            return [_audit_record(row) for row in session.scalars(query)]

        return self._run(work)

    def latest(self, key: str) -> AuditRecord | None:
        """The most recent audit of ``key`` (without loading the others)."""
        from sqlalchemy import select
        from sqlalchemy.orm import selectinload

        from cardaudit.store.schema import AuditRow

        def work(session: Session) -> AuditRecord | None:
            query = (
                select(AuditRow)
                .where(AuditRow.target_key == key)
                .order_by(AuditRow.audited_at.desc(), AuditRow.id.desc())
                .limit(1)
                .options(selectinload(AuditRow.findings), selectinload(AuditRow.promises))
            )
            row = session.scalars(query).first()
            return _audit_record(row) if row is not None else None

        return self._run(work)

    def targets(self) -> list[tuple[str, int]]:
        """Every audited target key with its number of audits."""
        from sqlalchemy import func, select

        from cardaudit.store.schema import AuditRow

        def work(session: Session) -> list[tuple[str, int]]:
            query = (
                select(AuditRow.target_key, func.count(AuditRow.id))
                .group_by(AuditRow.target_key)
                .order_by(AuditRow.target_key)
            )
            return [(key, count) for key, count in session.execute(query)]

        return self._run(work)

    def require_audits(self, key: str) -> list[AuditRecord]:
        """Like :meth:`audits`, but an unknown target is a clear error."""
        found = self.audits(key)
        if not found:
            known = ", ".join(display_key(k) for k, _ in self.targets()[:5]) or "none yet"
            raise StoreError(f"no stored audit of {display_key(key)} (stored: {known})")
        return found


def _audit_row(
    data: dict[str, Any], key: str, audited_at: datetime, deliveries: dict[str, Any] | None
) -> AuditRow:
    """The rows of one audit from its JSON report."""
    from cardaudit.store.schema import AuditRow, FindingRow, PromiseRow

    target = data.get("target") or {}
    facts = data.get("facts") or {}
    licence = facts.get("license") or {}
    summary = data.get("summary") or {}
    row = AuditRow(
        target_key=key,
        target_kind=str(target.get("kind") or "local"),
        target_id=str(target.get("id") or display_key(key)),
        target_path=target.get("path"),
        revision=target.get("revision"),
        audited_at=audited_at,
        tool_version=str((data.get("tool") or {}).get("version") or "unknown"),
        schema_version=str(data.get("schema_version") or "1"),
        licence_declared=_text(licence.get("declared")),
        licence_spdx=_text(licence.get("declared_spdx")),
        errors=int(summary.get("error") or 0),
        warnings=int(summary.get("warning") or 0),
        infos=int(summary.get("info") or 0),
        facts=facts,
        checks=list(data.get("checks") or []),
        deliveries=deliveries,
    )
    listed = [(f, None) for f in data.get("findings") or []]
    listed += [
        (f, f.get("suppressed_by") or "suppressed") for f in data.get("suppressed_findings") or []
    ]
    for item, suppressed_by in listed:
        location = item.get("location") or {}
        row.findings.append(
            FindingRow(
                rule_id=item["rule_id"],
                severity=item["severity"],
                message=item["message"],
                repo=location.get("repo", "model"),
                path=location.get("path"),
                line=location.get("line"),
                evidence=item.get("evidence"),
                suppressed_by=suppressed_by,
            )
        )
    for item in facts.get("promises") or []:
        if str(item.get("about") or "audited") not in ("audited", "page"):
            continue  # another model's promise: context in the report, not this model's story
        row.promises.append(
            PromiseRow(
                artifact=str(item.get("artifact") or "other"),
                item=_text(item.get("item")),
                text=str(item.get("text") or ""),
                repo=str(item.get("repo") or "model"),
                path=item.get("path"),
                line=item.get("line"),
                status=str(item.get("status") or "unknown"),
                first_seen=_text(item.get("first_seen")),
                reason=item.get("reason"),
            )
        )
    return row


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _tracked(row: TrackedRow) -> TrackedTarget:
    return TrackedTarget(row.key, row.target, row.code, row.base, _aware(row.added_at))


def _audit_record(row: AuditRow) -> AuditRecord:
    return AuditRecord(
        id=row.id,
        target_key=row.target_key,
        target_kind=row.target_kind,
        target_id=row.target_id,
        revision=row.revision,
        audited_at=_aware(row.audited_at),
        tool_version=row.tool_version,
        licence_declared=row.licence_declared,
        licence_spdx=row.licence_spdx,
        errors=row.errors,
        warnings=row.warnings,
        infos=row.infos,
        findings=tuple(
            FindingRecord(
                f.rule_id,
                f.severity,
                f.message,
                f.repo,
                f.path,
                f.line,
                f.evidence,
                f.suppressed_by,
            )
            for f in row.findings
        ),
        promises=tuple(
            PromiseRecord(
                p.artifact, p.text, p.repo, p.path, p.line, p.status, p.first_seen, p.reason, p.item
            )
            for p in row.promises
        ),
        deliveries=row.deliveries,
    )
