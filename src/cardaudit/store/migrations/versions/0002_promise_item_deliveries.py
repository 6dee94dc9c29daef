"""promise item, audit deliveries

Adds ``promises.item`` (the words naming the promised artifact: one sentence can promise
several items of one kind) and ``audits.deliveries`` (what the audit saw delivered). Existing
promise rows get their item back from the facts JSON stored with their audit, where the
extractor already published it; rows the facts cannot explain keep NULL.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 03:50:00
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_TYPE = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("promises", schema=None) as batch_op:
        batch_op.add_column(sa.Column("item", sa.Text(), nullable=True))
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deliveries", JSON_TYPE, nullable=True))
    _backfill_items()


def _facts(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # SQLite hands JSON back as text through a plain select
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _backfill_items() -> None:
    """Promise rows were written in the order of their audit's ``facts.promises``: pair them
    in that order, checking artifact, text and location agree before copying the item."""
    bind = op.get_bind()
    audits = sa.table("audits", sa.column("id", sa.Integer), sa.column("facts", JSON_TYPE))
    promises = sa.table(
        "promises",
        sa.column("id", sa.Integer),
        sa.column("audit_id", sa.Integer),
        sa.column("artifact", sa.String),
        sa.column("text", sa.Text),
        sa.column("path", sa.String),
        sa.column("line", sa.Integer),
        sa.column("item", sa.Text),
    )
    audit_ids = [row.id for row in bind.execute(sa.select(audits.c.id).order_by(audits.c.id))]
    for audit_id in audit_ids:
        facts = _facts(
            bind.execute(sa.select(audits.c.facts).where(audits.c.id == audit_id)).scalar_one()
        )
        published = [p for p in facts.get("promises") or [] if isinstance(p, dict)]
        rows = bind.execute(
            sa.select(promises).where(promises.c.audit_id == audit_id).order_by(promises.c.id)
        ).all()
        for row, fact in zip(rows, published, strict=False):
            same = (
                str(fact.get("artifact") or "other") == row.artifact
                and str(fact.get("text") or "") == row.text
                and fact.get("path") == row.path
                and fact.get("line") == row.line
            )
            item = fact.get("item")
            if same and isinstance(item, str) and item:
                bind.execute(sa.update(promises).where(promises.c.id == row.id).values(item=item))


def downgrade() -> None:
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.drop_column("deliveries")
    with op.batch_alter_table("promises", schema=None) as batch_op:
        batch_op.drop_column("item")
