"""ORM tables of the tracking store (SQLAlchemy 2.x, typed declarative mapping).

Every change here needs a new Alembic revision under ``migrations/versions``;
``tests/test_store_migrations.py`` fails when the two disagree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator, TypeEngine


class JSONColumn(TypeDecorator[Any]):
    """JSON on SQLite, JSONB on PostgreSQL — the PostgreSQL dialect is imported only when
    a PostgreSQL store is used (it costs ~35 ms of every SQLite ``--record`` otherwise)."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())


JSONType = JSONColumn()


class Base(DeclarativeBase):
    """Declarative base of every store table."""


class TrackedRow(Base):
    """A model the user asked to re-audit with ``cardaudit track run``."""

    __tablename__ = "tracked"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(1024), unique=True)
    target: Mapped[str] = mapped_column(String(1024))
    code: Mapped[str | None] = mapped_column(String(1024))
    base: Mapped[str | None] = mapped_column(String(1024))
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AuditRow(Base):
    """One audit of one target at one revision."""

    __tablename__ = "audits"
    __table_args__ = (Index("ix_audits_target_key_audited_at", "target_key", "audited_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_key: Mapped[str] = mapped_column(String(1024))
    target_kind: Mapped[str] = mapped_column(String(16))
    target_id: Mapped[str] = mapped_column(String(1024))
    target_path: Mapped[str | None] = mapped_column(String(4096))
    revision: Mapped[str | None] = mapped_column(String(128))
    audited_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    tool_version: Mapped[str] = mapped_column(String(64))
    schema_version: Mapped[str] = mapped_column(String(16))
    licence_declared: Mapped[str | None] = mapped_column(String(1024))
    licence_spdx: Mapped[str | None] = mapped_column(String(1024))
    errors: Mapped[int] = mapped_column(Integer, default=0)
    warnings: Mapped[int] = mapped_column(Integer, default=0)
    infos: Mapped[int] = mapped_column(Integer, default=0)
    facts: Mapped[dict[str, Any]] = mapped_column(JSONType)
    checks: Mapped[list[Any]] = mapped_column(JSONType)
    #: What the audit could see delivered (stated deliveries, delivering files), so a later
    #: diff can tell a promise removed after delivery from one dropped (None before 0002).
    deliveries: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    #: SHA-256 of the findings, promises and deliveries as stored (``repository.
    #: content_digest``): equal digests, equal content, loaded once (None before 0003).
    content_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)

    findings: Mapped[list[FindingRow]] = relationship(
        back_populates="audit", cascade="all, delete-orphan", order_by="FindingRow.id"
    )
    promises: Mapped[list[PromiseRow]] = relationship(
        back_populates="audit", cascade="all, delete-orphan", order_by="PromiseRow.id"
    )


class FindingRow(Base):
    """A finding of one audit (suppressed ones included, flagged)."""

    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id", ondelete="CASCADE"), index=True)
    rule_id: Mapped[str] = mapped_column(String(16), index=True)
    severity: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text)
    repo: Mapped[str] = mapped_column(String(16))
    path: Mapped[str | None] = mapped_column(String(4096))
    line: Mapped[int | None] = mapped_column(Integer)
    evidence: Mapped[str | None] = mapped_column(Text)
    suppressed_by: Mapped[str | None] = mapped_column(Text)

    audit: Mapped[AuditRow] = relationship(back_populates="findings")


class PromiseRow(Base):
    """A promised artifact as one audit saw it."""

    __tablename__ = "promises"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id", ondelete="CASCADE"), index=True)
    artifact: Mapped[str] = mapped_column(String(64))
    item: Mapped[str | None] = mapped_column(Text)  # the words naming it (None before 0002)
    text: Mapped[str] = mapped_column(Text)
    repo: Mapped[str] = mapped_column(String(16))
    path: Mapped[str | None] = mapped_column(String(4096))
    line: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    first_seen: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)

    audit: Mapped[AuditRow] = relationship(back_populates="promises")
