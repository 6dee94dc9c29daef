"""``audit --record`` into an existing SQLite store, through the standard library's sqlite3.

SQLAlchemy's import alone costs more CPU than the whole ``--record`` budget (about 0.13 s
here, against +0.15 s for reading the previous audit and writing this one), so the common
case — a SQLite file already at :data:`~cardaudit.store.engine.SCHEMA_REVISION` — is
written with sqlite3, the driver SQLAlchemy itself uses for SQLite. The values come from
:func:`~cardaudit.store.repository.audit_values`, the same function the SQLAlchemy store
uses, and are stored as SQLAlchemy stores them (``DateTime`` as ``YYYY-MM-DD
HH:MM:SS.ffffff``, JSON as ``json.dumps``); ``tests/test_store_sqlite_record.py`` records
the same audits both ways and requires identical tables. The connection is set up as
``store.engine`` sets up SQLite (busy timeout, WAL, foreign keys) and each audit is one
``BEGIN IMMEDIATE`` transaction, retried on lock contention. Anything else — a new store,
another revision (a migration), another database — goes through :class:`Store`.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from cardaudit.errors import StoreError
from cardaudit.store.engine import SCHEMA_REVISION, SQLITE_BUSY_TIMEOUT_MS, resolve_url
from cardaudit.store.records import AuditRecord, target_key
from cardaudit.store.repository import (
    SUMMARY_COLUMNS,
    WRITE_ATTEMPTS,
    _aware,
    _transient,
    audit_values,
)

AUDIT_COLUMNS = (
    "target_key",
    "target_kind",
    "target_id",
    "target_path",
    "revision",
    "audited_at",
    "tool_version",
    "schema_version",
    "licence_declared",
    "licence_spdx",
    "errors",
    "warnings",
    "infos",
    "facts",
    "checks",
    "deliveries",
    "content_digest",
)
JSON_COLUMNS = ("facts", "checks", "deliveries")
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
    "item",
    "text",
    "repo",
    "path",
    "line",
    "status",
    "first_seen",
    "reason",
)


def _stored_datetime(moment: datetime) -> str:
    """SQLAlchemy's SQLite ``DateTime`` storage format (the time zone is not stored)."""
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond:06d}"
    )


def _sqlite_file(url: str) -> Path | None:
    """The file of a plain ``sqlite:///path`` URL (no query, not in memory), else None."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or "?" in url:
        return None
    database = url[len(prefix) :]
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


class SqliteRecorder:
    """Reads the previous audit's summary and records audits, as :class:`Store` does."""

    def __init__(self, connection: sqlite3.Connection, url: str) -> None:
        self.connection = connection
        self.url = url

    @classmethod
    def open(cls, url: str | None) -> SqliteRecorder | None:
        """A recorder for the store at ``url`` when it is an existing SQLite file at the
        current schema revision; None otherwise (use :class:`Store`)."""
        resolved = resolve_url(url)
        path = _sqlite_file(resolved)
        if path is None or not path.is_file():
            return None
        try:
            connection = sqlite3.connect(
                path, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, isolation_level=None
            )
        except sqlite3.Error:
            return None
        try:
            connection.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute("PRAGMA synchronous = NORMAL")
            rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.Error:
            rows = []
        if len(rows) != 1 or rows[0][0] != SCHEMA_REVISION:
            connection.close()
            return None
        return cls(connection, resolved)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> SqliteRecorder:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _retry(self, action):  # type: ignore[no-untyped-def]
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if attempt == WRITE_ATTEMPTS or not _transient(exc):
                    raise StoreError(f"store {self.url}: {exc}") from exc
                time.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))
            except sqlite3.Error as exc:
                raise StoreError(f"store {self.url}: {exc}") from exc
        raise AssertionError("unreachable")

    def latest(self, key: str, *, content: bool = True) -> AuditRecord | None:
        """The most recent audit's summary row (``content`` must be False: the recorder
        reads nothing else)."""
        if content:
            raise ValueError("the SQLite recorder reads summary rows only")
        query = (
            f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM audits WHERE target_key = ? "
            "ORDER BY audited_at DESC, id DESC LIMIT 1"
        )
        row = self._retry(lambda: self.connection.execute(query, (key,)).fetchone())
        if row is None:
            return None
        values = list(row)
        index = SUMMARY_COLUMNS.index("audited_at")
        values[index] = _aware(datetime.fromisoformat(values[index]))
        return AuditRecord(*values)

    def record(
        self, report: Any, audited_at: datetime | None = None, deliveries: Any = None
    ) -> int:
        """Store one audit in its own transaction; returns its id."""
        from cardaudit.clock import audit_now
        from cardaudit.reporters.json_report import report_to_json

        data = report_to_json(report)
        moment = audited_at or audit_now()
        audit, findings, promises = audit_values(
            data, target_key(report.target), moment, deliveries
        )
        row = dict(audit, audited_at=_stored_datetime(moment))
        for name in JSON_COLUMNS:
            row[name] = json.dumps(row[name])
        return self._retry(lambda: self._insert(row, findings, promises))

    def _insert(self, audit: dict[str, Any], findings: list, promises: list) -> int:
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            cursor = connection.execute(
                f"INSERT INTO audits ({', '.join(AUDIT_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(AUDIT_COLUMNS))})",
                [audit[name] for name in AUDIT_COLUMNS],
            )
            audit_id = int(cursor.lastrowid or 0)
            for table, columns, rows in (
                ("findings", FINDING_COLUMNS, findings),
                ("promises", PROMISE_COLUMNS, promises),
            ):
                connection.executemany(
                    f"INSERT INTO {table} (audit_id, {', '.join(columns)}) "
                    f"VALUES (?, {', '.join('?' * len(columns))})",
                    [[audit_id, *(values[name] for name in columns)] for values in rows],
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return audit_id
