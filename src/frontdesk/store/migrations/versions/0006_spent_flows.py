"""Spent sign-in flows, and whether a customer's email was verified.

- ``spent_flows(flow_hash, tenant_key, expires_at)``: a sign-in flow is spent by its first
  callback, success or failure (oauth.flow). Only a SHA-256 hash of the flow's random id is
  stored; the primary key makes the first insert the only one, on every instance. A row
  serves no purpose past ``expires_at`` (the flow no longer opens), so the retention purge
  deletes it then; the index keeps that purge a range scan.
- ``customers.email_verified``: true only when the company's identity provider said so in
  the ID token (login.oidc.identity_from); every customer recorded before is false, as
  nothing was known of them.
- On PostgreSQL the notice of a changed customer (migration 0004) is also sent when only
  ``email_verified`` changes: tools see it, and every instance keeps signed-in customers
  in memory (store.access_lookups).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"

NOTIFY = "EXECUTE FUNCTION frontdesk_grant_changed()"
CUSTOMER_FIELDS_0004 = (
    "OLD.subject IS DISTINCT FROM NEW.subject OR OLD.email IS DISTINCT FROM NEW.email "
    "OR OLD.name IS DISTINCT FROM NEW.name"
)
CUSTOMER_FIELDS = (
    f"{CUSTOMER_FIELDS_0004} OR OLD.email_verified IS DISTINCT FROM NEW.email_verified"
)


def _customers_changed(fields: str) -> None:
    # One transaction (Database.migrate): no change is committed between the two.
    op.execute("DROP TRIGGER customers_changed ON customers")
    op.execute(
        "CREATE TRIGGER customers_changed AFTER UPDATE ON customers FOR EACH ROW "
        f"WHEN ({fields}) {NOTIFY}"
    )


def upgrade() -> None:
    op.create_table(
        "spent_flows",
        sa.Column("flow_hash", sa.String(64), primary_key=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_spent_flows_expires_at", "spent_flows", ["expires_at"])
    op.add_column(
        "customers",
        sa.Column("email_verified", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    if op.get_bind().dialect.name == "postgresql":
        _customers_changed(CUSTOMER_FIELDS)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _customers_changed(CUSTOMER_FIELDS_0004)
    # Not batch mode: copying customers would trip the foreign keys that reference it;
    # SQLite (3.35 and later) drops a column with no index or constraint in place.
    op.drop_column("customers", "email_verified")
    op.drop_index("ix_spent_flows_expires_at", table_name="spent_flows")
    op.drop_table("spent_flows")
