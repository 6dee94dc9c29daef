"""initial schema: tracked, audits, findings, promises

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 02:22:28.566442
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "audits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_key", sa.String(length=1024), nullable=False),
        sa.Column("target_kind", sa.String(length=16), nullable=False),
        sa.Column("target_id", sa.String(length=1024), nullable=False),
        sa.Column("target_path", sa.String(length=4096), nullable=True),
        sa.Column("revision", sa.String(length=128), nullable=True),
        sa.Column("audited_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tool_version", sa.String(length=64), nullable=False),
        sa.Column("schema_version", sa.String(length=16), nullable=False),
        sa.Column("licence_declared", sa.String(length=1024), nullable=True),
        sa.Column("licence_spdx", sa.String(length=1024), nullable=True),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("warnings", sa.Integer(), nullable=False),
        sa.Column("infos", sa.Integer(), nullable=False),
        sa.Column(
            "facts", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False
        ),
        sa.Column(
            "checks", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.create_index(
            "ix_audits_target_key_audited_at", ["target_key", "audited_at"], unique=False
        )

    op.create_table(
        "tracked",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("target", sa.String(length=1024), nullable=False),
        sa.Column("code", sa.String(length=1024), nullable=True),
        sa.Column("base", sa.String(length=1024), nullable=True),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.String(length=16), nullable=False),
        sa.Column("severity", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("repo", sa.String(length=16), nullable=False),
        sa.Column("path", sa.String(length=4096), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("evidence", sa.Text(), nullable=True),
        sa.Column("suppressed_by", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["audit_id"], ["audits.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_findings_audit_id"), ["audit_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_findings_rule_id"), ["rule_id"], unique=False)

    op.create_table(
        "promises",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("artifact", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("repo", sa.String(length=16), nullable=False),
        sa.Column("path", sa.String(length=4096), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("first_seen", sa.String(length=64), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["audit_id"], ["audits.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("promises", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_promises_audit_id"), ["audit_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("promises", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_promises_audit_id"))

    op.drop_table("promises")
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_findings_rule_id"))
        batch_op.drop_index(batch_op.f("ix_findings_audit_id"))

    op.drop_table("findings")
    op.drop_table("tracked")
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.drop_index("ix_audits_target_key_audited_at")

    op.drop_table("audits")
