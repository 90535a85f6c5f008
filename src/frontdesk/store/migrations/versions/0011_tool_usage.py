"""How each company's tools are used, rolled up by the hour (the admin API's usage).

- ``tool_usage``: per company, tool, hour, outcome (``ok`` or an error kind) and caller
  (guest or signed in): the number of calls, the sum of their latencies, and their
  latencies counted in fixed buckets, one integer column per bucket (``latency_le_5ms`` ...
  ``latency_le_60000ms``, then ``latency_over_60000ms``), from which percentiles are read.
  Workers add their counts with one upsert per row (``SET calls = tool_usage.calls +
  excluded.calls``, and each bucket the same): integer columns, so concurrent flushes from
  many instances add up in the database with no read-modify-write of their own.
- ``tool_usage_customers``: which customers called which tool in which hour, for the count
  of distinct customers over any range; deleted with the customer.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"

# The upper bounds of the latency buckets, in milliseconds, as this revision made them
# (store.tables.LATENCY_BOUNDS_MS): a migration keeps its own copy.
LATENCY_BOUNDS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


def upgrade() -> None:
    buckets = [
        sa.Column(f"latency_le_{bound}ms", sa.Integer, nullable=False, server_default="0")
        for bound in LATENCY_BOUNDS_MS
    ]
    op.create_table(
        "tool_usage",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column("tool", sa.String(128), primary_key=True),
        sa.Column("hour", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("outcome", sa.String(32), primary_key=True),
        sa.Column("signed_in", sa.Boolean, primary_key=True),
        sa.Column("calls", sa.Integer, nullable=False),
        sa.Column("latency_ms_sum", sa.Float, nullable=False),
        *buckets,
        sa.Column(
            f"latency_over_{LATENCY_BOUNDS_MS[-1]}ms",
            sa.Integer,
            nullable=False,
            server_default="0",
        ),
    )
    # The read of a range, and the retention purge, go by the hour.
    op.create_index("ix_tool_usage_tenant_hour", "tool_usage", ["tenant_key", "hour"])
    op.create_index("ix_tool_usage_hour", "tool_usage", ["hour"])
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
    op.create_index("ix_tool_usage_customers_hour", "tool_usage_customers", ["hour"])
    op.create_index("ix_tool_usage_customers_customer", "tool_usage_customers", ["customer_id"])


def downgrade() -> None:
    op.drop_index("ix_tool_usage_customers_customer", "tool_usage_customers")
    op.drop_index("ix_tool_usage_customers_hour", "tool_usage_customers")
    op.drop_table("tool_usage_customers")
    op.drop_index("ix_tool_usage_hour", "tool_usage")
    op.drop_index("ix_tool_usage_tenant_hour", "tool_usage")
    op.drop_table("tool_usage")
