"""The tracking store: every audit of every tracked model, kept over time (SQLAlchemy).

A SQLite file in the user's data directory by default; any SQLAlchemy URL (PostgreSQL
through psycopg 3) with ``--db`` or ``CARDAUDIT_DB``. The schema is migrated by the
packaged Alembic revisions whenever a store is opened.
"""

from __future__ import annotations

from cardaudit.store.records import (
    AuditRecord,
    FindingRecord,
    PromiseRecord,
    TrackedTarget,
    key_for_argument,
    target_key,
)
from cardaudit.store.repository import Store

__all__ = [
    "AuditRecord",
    "FindingRecord",
    "PromiseRecord",
    "Store",
    "TrackedTarget",
    "key_for_argument",
    "target_key",
]
