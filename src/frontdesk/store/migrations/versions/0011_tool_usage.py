"""How each company's tools are used, rolled up by the hour (the admin API's usage).

- ``tool_usage``: per company, tool, hour, outcome (``ok`` or an error kind) and caller
  (guest or signed in): the number of calls, the sum of their latencies, and their
  latencies counted in fixed buckets (a JSON array), from which percentiles are read.
  Workers add their counts with an upsert, so the figures add up across instances and
  survive restarts.
- ``tool_usage_customers``: which customers called which tool in which hour, for the count
  of distinct customers over any range; deleted with the customer.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    op.create_table(
        "tool_usage",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column("tool", sa.String(128), primary_key=True),
        sa.Column("hour", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("outcome", sa.String(32), primary_key=True),
        sa.Column("signed_in", sa.Boolean, primary_key=True),
        sa.Column("calls", sa.Integer, nullable=False),
        sa.Column("latency_ms_sum", sa.Float, nullable=False),
        sa.Column("latency_buckets", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
    )
    op.create_index("ix_tool_usage_tenant_hour", "tool_usage", ["tenant_key", "hour"])
    op.create_table(
        "tool_usage_customers",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column("tool", sa.String(128), primary_key=True),
        sa.Column("hour", sa.DateTime(timezone=True), primary_key=True),
        sa.Column(
            "customer_id",
            sa.Integer,
            sa.ForeignKey("customers.id", ondelete="CASCADE"),
            primary_key=True,
        ),
    )


def downgrade() -> None:
    op.drop_table("tool_usage_customers")
    op.drop_index("ix_tool_usage_tenant_hour", "tool_usage")
    op.drop_table("tool_usage")
