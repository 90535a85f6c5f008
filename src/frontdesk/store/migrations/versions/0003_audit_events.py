"""Audit log of security events.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=True),
        sa.Column("family_id", sa.Integer, nullable=True),
        sa.Column("detail", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
    )
    op.create_index("ix_audit_events_tenant_time", "audit_events", ["tenant_key", "occurred_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_events_tenant_time", "audit_events")
    op.drop_table("audit_events")
