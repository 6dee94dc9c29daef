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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from cardaudit.errors import StoreError
from cardaudit.store.engine import (
    create_store_engine,
    current_revision,
    resolve_url,
    safe_url,
    stored_revision,
    upgrade,
)
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


def _no_store_message(url: str) -> str:
    return (
        f"no tracking store at {safe_url(url)}: nothing tracked or recorded there yet "
        "(`cardaudit track add` or `cardaudit audit --record` creates it; "
        "--db or CARDAUDIT_DB name another store)"
    )


def _require_existing(url: str) -> None:
    """A SQLite store file must exist before it is opened (opening would create it)."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    if not Path(database).expanduser().is_file():
        raise StoreError(_no_store_message(url))


class Store:
    """A tracking store at a SQLAlchemy URL, migrated to the current schema on open."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, url: str | None = None, *, must_exist: bool = False) -> Store:
        """Open (creating and migrating as needed) the store at ``url`` or the default.

        ``must_exist`` is for commands that only read: a store that was never created is
        an error naming it, not a new empty database that silently answers "nothing".
        """
        from sqlalchemy.exc import SQLAlchemyError

        resolved = resolve_url(url)
        if must_exist:
            _require_existing(resolved)
        engine = create_store_engine(resolved)
        try:
            # one query; Alembic only when it finds no single revision (several heads)
            if must_exist and stored_revision(engine) is None and current_revision(engine) is None:
                engine.dispose()
                raise StoreError(_no_store_message(resolved))
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
        """Every audit of ``key``, oldest first, with its findings, promises and deliveries.

        Three queries (audits, findings, promises), never the stored ``facts``/``checks``
        JSON: history and diff read neither.
        """
        from cardaudit.store.schema import AuditRow

        return self._run(lambda session: _load(session, AuditRow.target_key == key, content=True))

    def summaries(self, key: str) -> list[AuditRecord]:
        """Every audit of ``key``, oldest first, as one row each: ids, revisions, times,
        licences and counts, without findings, promises or deliveries (``findings`` and
        ``promises`` are empty, ``deliveries`` None). For picking audits, not diffing them."""
        from cardaudit.store.schema import AuditRow

        return self._run(lambda session: _load(session, AuditRow.target_key == key, content=False))

    def audits_by_id(self, key: str, ids: list[int]) -> list[AuditRecord]:
        """The audits of ``key`` with these ids, oldest first, with their content."""
        from cardaudit.store.schema import AuditRow

        wanted = sorted(set(ids))
        return self._run(
            lambda session: _load(
                session, (AuditRow.target_key == key) & AuditRow.id.in_(wanted), content=True
            )
        )

    def latest(self, key: str, *, content: bool = True) -> AuditRecord | None:
        """The most recent audit of ``key`` (without loading the others); with
        ``content=False`` only its summary row (enough for :meth:`AuditRecord.as_prior`)."""
        from cardaudit.store.schema import AuditRow

        def work(session: Session) -> AuditRecord | None:
            found = _load(session, AuditRow.target_key == key, content=content, newest=1)
            return found[0] if found else None

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
        return self._require(key, self.audits(key))

    def require_summaries(self, key: str, newest: int | None = None) -> list[AuditRecord]:
        """Like :meth:`summaries` (only the ``newest`` N, oldest first, when given), but an
        unknown target is a clear error."""
        from cardaudit.store.schema import AuditRow

        if newest is None:
            return self._require(key, self.summaries(key))
        where = AuditRow.target_key == key
        found = self._run(lambda session: _load(session, where, content=False, newest=newest))
        return self._require(key, found)

    def _require(self, key: str, found: list[AuditRecord]) -> list[AuditRecord]:
        if not found:
            known = ", ".join(display_key(k) for k, _ in self.targets()[:5]) or "none yet"
            raise StoreError(f"no stored audit of {display_key(key)} (stored: {known})")
        return found


def audit_values(
    data: dict[str, Any], key: str, audited_at: datetime, deliveries: dict[str, Any] | None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The column values of one audit from its JSON report: the ``audits`` row (with its
    ``content_digest``), its ``findings`` rows and its ``promises`` rows (without ids).
    Plain data, so the SQLAlchemy store and the SQLite recorder store the same values."""
    target = data.get("target") or {}
    facts = data.get("facts") or {}
    licence = facts.get("license") or {}
    summary = data.get("summary") or {}
    audit = {
        "target_key": key,
        "target_kind": str(target.get("kind") or "local"),
        "target_id": str(target.get("id") or display_key(key)),
        "target_path": target.get("path"),
        "revision": target.get("revision"),
        "audited_at": audited_at,
        "tool_version": str((data.get("tool") or {}).get("version") or "unknown"),
        "schema_version": str(data.get("schema_version") or "1"),
        "licence_declared": _text(licence.get("declared")),
        "licence_spdx": _text(licence.get("declared_spdx")),
        "errors": int(summary.get("error") or 0),
        "warnings": int(summary.get("warning") or 0),
        "infos": int(summary.get("info") or 0),
        "facts": facts,
        "checks": list(data.get("checks") or []),
        "deliveries": deliveries,
    }
    listed = [(f, None) for f in data.get("findings") or []]
    listed += [
        (f, f.get("suppressed_by") or "suppressed") for f in data.get("suppressed_findings") or []
    ]
    findings = []
    for item, suppressed_by in listed:
        location = item.get("location") or {}
        findings.append(
            {
                "rule_id": item["rule_id"],
                "severity": item["severity"],
                "message": item["message"],
                "repo": location.get("repo", "model"),
                "path": location.get("path"),
                "line": location.get("line"),
                "evidence": item.get("evidence"),
                "suppressed_by": suppressed_by,
            }
        )
    promises = []
    for item in facts.get("promises") or []:
        if str(item.get("about") or "audited") not in ("audited", "page"):
            continue  # another model's promise: context in the report, not this model's story
        promises.append(
            {
                "artifact": str(item.get("artifact") or "other"),
                "item": _text(item.get("item")),
                "text": str(item.get("text") or ""),
                "repo": str(item.get("repo") or "model"),
                "path": item.get("path"),
                "line": item.get("line"),
                "status": str(item.get("status") or "unknown"),
                "first_seen": _text(item.get("first_seen")),
                "reason": item.get("reason"),
            }
        )
    audit["content_digest"] = digest_of(findings, promises, deliveries)
    return audit, findings, promises


def _audit_row(
    data: dict[str, Any], key: str, audited_at: datetime, deliveries: dict[str, Any] | None
) -> AuditRow:
    """The ORM rows of one audit from its JSON report."""
    from cardaudit.store.schema import AuditRow, FindingRow, PromiseRow

    audit, findings, promises = audit_values(data, key, audited_at, deliveries)
    row = AuditRow(**audit)
    row.findings.extend(FindingRow(**values) for values in findings)
    row.promises.extend(PromiseRow(**values) for values in promises)
    return row


def digest_of(
    findings: list[dict[str, Any]], promises: list[dict[str, Any]], deliveries: Any
) -> str:
    """SHA-256 of what a diff compares: every stored column of the audit's findings and
    promises (in order, ids aside) and its deliveries. Equal digests mean equal content,
    which :func:`_load` then reads once for a whole run of consecutive equal audits."""
    import hashlib
    import json

    content = {"findings": findings, "promises": promises, "deliveries": deliveries}
    encoded = json.dumps(content, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _tracked(row: TrackedRow) -> TrackedTarget:
    return TrackedTarget(row.key, row.target, row.code, row.base, _aware(row.added_at))


#: The columns of an audit row that history, diff and ``track list`` show.
SUMMARY_COLUMNS = (
    "id",
    "target_key",
    "target_kind",
    "target_id",
    "revision",
    "audited_at",
    "tool_version",
    "licence_declared",
    "licence_spdx",
    "errors",
    "warnings",
    "infos",
)
FINDING_COLUMNS = (
    "rule_id",
    "severity",
    "message",
    "repo",
    "path",
    "line",
    "evidence",
    "suppressed_by",
)
PROMISE_COLUMNS = (
    "artifact",
    "text",
    "repo",
    "path",
    "line",
    "status",
    "first_seen",
    "reason",
    "item",
)


#: Ids per ``IN (...)`` query (SQLite allows 32,766 parameters; PostgreSQL more).
IN_CHUNK = 500


@dataclass(frozen=True)
class _Content:
    findings: tuple[FindingRecord, ...]
    promises: tuple[PromiseRecord, ...]
    deliveries: Any


def _load(
    session: Session, where: Any, *, content: bool, newest: int | None = None
) -> list[AuditRecord]:
    """Audit records matching ``where`` (a condition on ``audits``), oldest first, or the
    ``newest`` N.

    Column queries, not ORM objects: the JSON columns ``facts`` and ``checks`` are never
    read. With ``content``, findings, promises and deliveries are read only for the first
    audit of each run of consecutive audits with the same ``content_digest`` (the others
    share its records), so a history of 10,000 mostly unchanged audits reads a few.
    """
    from sqlalchemy import select

    from cardaudit.store.schema import AuditRow

    audits = AuditRow.__table__
    columns = [audits.c[name] for name in SUMMARY_COLUMNS]
    query = select(*columns, audits.c.content_digest).where(where)
    if newest is None:
        query = query.order_by(audits.c.audited_at, audits.c.id)
    else:
        query = query.order_by(audits.c.audited_at.desc(), audits.c.id.desc()).limit(newest)
    rows = session.execute(query).all()
    if newest is not None:
        rows.reverse()
    if not content or not rows:
        return [_summary(row) for row in rows]
    starts = [
        row.id
        for index, row in enumerate(rows)
        if index == 0
        or row.content_digest is None
        or row.content_digest != rows[index - 1].content_digest
    ]
    every = newest is None and len(starts) == len(rows)
    loaded = _content(session, starts, where if every else None)
    records, current = [], None
    for row in rows:
        current = loaded.get(row.id, current)
        assert current is not None  # the first row always starts a run
        records.append(_summary(row, current))
    return records


def _content(session: Session, ids: list[int], where: Any | None) -> dict[int, _Content]:
    """Findings, promises and deliveries of the audits ``ids``: by ``IN`` lists of ids, or
    joined on the audits condition ``where`` when it selects exactly those audits."""
    from cardaudit.store.schema import AuditRow, FindingRow, PromiseRow

    audits = AuditRow.__table__
    findings = _children(session, FindingRow.__table__, FINDING_COLUMNS, ids, where)
    promises = _children(session, PromiseRow.__table__, PROMISE_COLUMNS, ids, where)
    deliveries = dict(_rows(session, [audits.c.id, audits.c.deliveries], audits.c.id, ids, where))
    return {
        audit_id: _Content(
            tuple(FindingRecord(**values) for values in findings.get(audit_id, ())),
            tuple(PromiseRecord(**values) for values in promises.get(audit_id, ())),
            deliveries.get(audit_id),
        )
        for audit_id in ids
    }


def _children(
    session: Session, table: Any, names: tuple[str, ...], ids: list[int], where: Any | None
) -> dict[int, list[dict[str, Any]]]:
    """Rows of ``table`` (findings or promises) by audit id, in insertion order."""
    columns = [table.c.audit_id, table.c.id, *(table.c[name] for name in names)]
    grouped: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for audit_id, row_id, *values in _rows(session, columns, table.c.audit_id, ids, where):
        grouped.setdefault(audit_id, []).append((row_id, dict(zip(names, values, strict=True))))
    return {
        audit_id: [values for _, values in sorted(rows, key=lambda pair: pair[0])]
        for audit_id, rows in grouped.items()
    }


def _rows(
    session: Session, columns: list[Any], audit_id: Any, ids: list[int], where: Any | None
) -> list[Any]:
    """``columns`` of the rows whose ``audit_id`` is in ``ids``: one query joined on
    ``where`` when given, else ``IN`` queries of :data:`IN_CHUNK` ids."""
    from sqlalchemy import select

    from cardaudit.store.schema import AuditRow

    if where is not None:
        audits = AuditRow.__table__
        query = select(*columns).where(where)
        if audit_id is not audits.c.id:
            query = query.join(audits, audits.c.id == audit_id)
        return list(session.execute(query))
    found: list[Any] = []
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        found += session.execute(select(*columns).where(audit_id.in_(chunk)))
    return found


#: Where ``audited_at`` sits among :data:`SUMMARY_COLUMNS` (SQLite hands it back naive).
_AUDITED_AT = SUMMARY_COLUMNS.index("audited_at")


def _summary(row: Any, content: _Content | None = None) -> AuditRecord:
    """The record of a summary row, with ``content`` when it was read. Positional: the
    row starts with :data:`SUMMARY_COLUMNS`, which are the first fields of
    :class:`AuditRecord` in the same order (a history of 10,000 audits builds 10,000)."""
    values = list(tuple(row)[: len(SUMMARY_COLUMNS)])
    values[_AUDITED_AT] = _aware(values[_AUDITED_AT])
    if content is not None:
        values += (content.findings, content.promises, content.deliveries)
    return AuditRecord(*values)


def record_of_row(row: AuditRow) -> AuditRecord:
    """The record of an ORM audit row whose findings and promises are loaded (the queries of
    :mod:`cardaudit.store.queries` that need the whole report load rows this way)."""
    values = [getattr(row, name) for name in SUMMARY_COLUMNS]
    values[_AUDITED_AT] = _aware(values[_AUDITED_AT])
    findings = tuple(
        FindingRecord(**{name: getattr(f, name) for name in FINDING_COLUMNS}) for f in row.findings
    )
    promises = tuple(
        PromiseRecord(**{name: getattr(p, name) for name in PROMISE_COLUMNS}) for p in row.promises
    )
    return AuditRecord(*values, findings, promises, row.deliveries)
