"""Read queries for many targets at once (dashboard, ledger, badges) and per-target claims.

Additive to :class:`~cardaudit.store.Store`: functions over a store that never load the large
JSON columns they do not need, so a dashboard over a thousand tracked models is a handful of
queries. :func:`claim` is the cross-process "only one of us audits this target" lock: an
advisory lock on PostgreSQL (the same mechanism the migrations use), a lock file beside a
SQLite store (``filelock``, already a huggingface_hub dependency).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardaudit.store.records import AuditRecord, PromiseRecord
from cardaudit.store.repository import Store, _aware, record_of_row

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def audit_histories(
    store: Store, keys: Sequence[str] | None = None
) -> dict[str, list[AuditRecord]]:
    """Every audit of each of ``keys`` (default: every target), oldest first, with its
    promises but without findings, facts or checks: what the promise ledger reads.

    Two plain (Core) selects rather than ORM loading: a dashboard reads every audit of
    every tracked model through here.
    """
    from sqlalchemy import select

    from cardaudit.store.schema import AuditRow, PromiseRow

    audit_columns = (
        AuditRow.id,
        AuditRow.target_key,
        AuditRow.target_kind,
        AuditRow.target_id,
        AuditRow.revision,
        AuditRow.audited_at,
        AuditRow.tool_version,
        AuditRow.licence_declared,
        AuditRow.licence_spdx,
        AuditRow.errors,
        AuditRow.warnings,
        AuditRow.infos,
        AuditRow.deliveries,
    )
    promise_columns = (
        PromiseRow.audit_id,
        PromiseRow.artifact,
        PromiseRow.text,
        PromiseRow.repo,
        PromiseRow.path,
        PromiseRow.line,
        PromiseRow.status,
        PromiseRow.first_seen,
        PromiseRow.reason,
        PromiseRow.item,
    )

    def work(session: Session) -> dict[str, list[AuditRecord]]:
        chosen = select(AuditRow.id)
        query = select(*audit_columns).order_by(
            AuditRow.target_key, AuditRow.audited_at, AuditRow.id
        )
        if keys is not None:
            chosen = chosen.where(AuditRow.target_key.in_(list(keys)))
            query = query.where(AuditRow.target_key.in_(list(keys)))
        promises: dict[int, list[PromiseRecord]] = {}
        listed = select(*promise_columns).where(PromiseRow.audit_id.in_(chosen.scalar_subquery()))
        for audit_id, *values in session.execute(listed.order_by(PromiseRow.id)):
            promises.setdefault(audit_id, []).append(PromiseRecord(*values))
        found: dict[str, list[AuditRecord]] = {}
        for row in session.execute(query):
            record = AuditRecord(
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
                promises=tuple(promises.get(row.id, ())),
                deliveries=row.deliveries,
            )
            found.setdefault(row.target_key, []).append(record)
        return found

    return store._run(work)


def latest_reports(
    store: Store,
    keys: Sequence[str] | None = None,
    *,
    revision: str | None = None,
    facts: Sequence[str] | None = None,
    promises: bool = True,
) -> dict[str, tuple[AuditRecord, dict[str, Any]]]:
    """The latest audit of each of ``keys`` (of ``revision`` when given), as its record and
    its JSON report (``report_to_json``'s shape, without ``not_read``).

    ``facts`` names the top-level facts to load (None: all of them); the dashboard asks for
    a few, the model page and the badge for all. ``promises=False`` leaves the record's
    promises empty (the dashboard reads them through the ledger).
    """
    from sqlalchemy import false, func, select
    from sqlalchemy.orm import defer, selectinload, undefer

    from cardaudit.store.schema import AuditRow

    def work(session: Session) -> dict[str, tuple[AuditRecord, dict[str, Any]]]:
        ranked = select(
            AuditRow.id,
            func.row_number()
            .over(
                partition_by=AuditRow.target_key,
                order_by=(AuditRow.audited_at.desc(), AuditRow.id.desc()),
            )
            .label("rank"),
        )
        if keys is not None:
            ranked = ranked.where(AuditRow.target_key.in_(list(keys)))
        if revision is not None:
            ranked = ranked.where(AuditRow.revision == revision)
        latest = ranked.subquery()
        query = (
            select(AuditRow)
            .join(latest, latest.c.id == AuditRow.id)
            .where(latest.c.rank == 1)
            .options(
                selectinload(AuditRow.findings),
                selectinload(AuditRow.promises if promises else AuditRow.promises.and_(false())),
            )
        )
        # Explicit about the JSON columns, whatever the mapping defers by default: checks
        # always (the verdict reads them), facts whole only when all are asked for.
        query = query.options(undefer(AuditRow.checks))
        query = query.options(
            defer(AuditRow.facts) if facts is not None else undefer(AuditRow.facts)
        )
        rows = list(session.scalars(query))
        partial: dict[int, dict[str, Any]] = {}
        if facts is not None and rows:
            columns = [AuditRow.facts[name].label(name) for name in facts]
            chosen = select(AuditRow.id, *columns).where(AuditRow.id.in_([r.id for r in rows]))
            for found in session.execute(chosen):
                partial[found[0]] = {
                    name: value
                    for name, value in zip(facts, found[1:], strict=True)
                    if value is not None
                }
        result = {}
        for row in rows:
            data = report_json(row, partial.get(row.id) if facts is not None else row.facts)
            result[row.target_key] = (record_of_row(row), data)
        return result

    return store._run(work)


def report_json(row: Any, facts: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON report of a stored audit row (findings from their rows, each with its
    rule's fix as remediation, as the report that was stored had it)."""
    from cardaudit.rules import load_rules

    rules = load_rules()

    def finding(f: Any) -> dict[str, Any]:
        rule = rules.get(f.rule_id)
        data: dict[str, Any] = {
            "rule_id": f.rule_id,
            "severity": f.severity,
            "message": f.message,
            "location": {"path": f.path, "line": f.line, "repo": f.repo},
            "evidence": f.evidence,
            "remediation": rule.fix if rule is not None else None,
        }
        if f.suppressed_by is not None:
            data["suppressed_by"] = f.suppressed_by
        return data

    return {
        "schema_version": row.schema_version,
        "tool": {"name": "cardaudit", "version": row.tool_version},
        "target": {
            "kind": row.target_kind,
            "id": row.target_id,
            "path": row.target_path,
            "revision": row.revision,
        },
        "facts": facts or {},
        "checks": list(row.checks or []),
        "findings": [finding(f) for f in row.findings if f.suppressed_by is None],
        "suppressed_findings": [finding(f) for f in row.findings if f.suppressed_by is not None],
        "summary": {
            "error": row.errors,
            "warning": row.warnings,
            "info": row.infos,
            "suppressed": sum(1 for f in row.findings if f.suppressed_by is not None),
        },
    }


def audit_report(store: Store, audit_id: int) -> tuple[AuditRecord, dict[str, Any]] | None:
    """One stored audit by id: its record and its JSON report (None when absent)."""
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload, undefer

    from cardaudit.store.schema import AuditRow

    def work(session: Session) -> tuple[AuditRecord, dict[str, Any]] | None:
        query = (
            select(AuditRow)
            .where(AuditRow.id == audit_id)
            .options(
                selectinload(AuditRow.findings),
                selectinload(AuditRow.promises),
                undefer(AuditRow.facts),
                undefer(AuditRow.checks),
            )
        )
        row = session.scalars(query).first()
        return None if row is None else (record_of_row(row), report_json(row, row.facts))

    return store._run(work)


def _lock_number(key: str) -> int:
    """A signed 64-bit advisory-lock number for ``key`` (stable across processes)."""
    digest = hashlib.blake2b(f"cardaudit-audit:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextmanager
def claim(store: Store, key: str) -> Iterator[bool]:
    """Hold the right to audit ``key`` across processes sharing the store; yields False
    (without waiting) when another process holds it, so two ``serve`` processes never audit
    the same target at once. Callers re-check the store after winning the claim."""
    if store.engine.dialect.name == "postgresql":
        number = _lock_number(key)
        with store.engine.connect() as connection:
            won = bool(
                connection.exec_driver_sql(f"SELECT pg_try_advisory_lock({number})").scalar()
            )
            try:
                yield won
            finally:
                if won:
                    connection.exec_driver_sql(f"SELECT pg_advisory_unlock({number})")
                connection.commit()
        return
    from filelock import FileLock, Timeout

    lock = FileLock(str(_lock_path(store, key)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def _lock_path(store: Store, key: str) -> Path:
    """A lock file for ``key`` beside the SQLite file (the temp dir for in-memory stores)."""
    import tempfile

    database = store.engine.url.database
    if database and database != ":memory:" and not database.startswith("file:"):
        folder = Path(database).expanduser().resolve().parent / ".cardaudit-locks"
    else:
        folder = Path(tempfile.gettempdir()) / "cardaudit-locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{_lock_number(key) & 0xFFFFFFFFFFFFFFFF:016x}.lock"
