"""audit content digest

Adds ``audits.content_digest``: a SHA-256 over what history and diff compare (the audit's
findings, promises and deliveries as stored), written with each new audit. Consecutive audits
with the same digest have the same content, so history loads it once per run of equal audits
instead of once per audit. Existing rows keep NULL, which means "load this audit's content".

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 08:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("content_digest", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.drop_column("content_digest")
