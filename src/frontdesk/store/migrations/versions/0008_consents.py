"""Remembered consent (store.consents): the consent page is shown once per client and set
of scopes, until the customer revokes the client.

- ``consents(tenant_key, customer_id, client_id)``: the union of the scopes the customer
  allowed the client. The primary key, led by the company and customer, serves every
  lookup (a sign-in's, a customer's list of clients, a revocation's).
- Deleted with its customer (``ON DELETE CASCADE``), so deleting a customer never trips on
  it; a new table, so the upgrade locks nothing that serves.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "consents",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column(
            "customer_id",
            sa.Integer,
            sa.ForeignKey("customers.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("client_id", sa.String(2048), primary_key=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("consents")
