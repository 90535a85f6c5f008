"""Enterprise-managed sign-in (ID-JAG): what the token endpoint must remember across
instances.

- ``identity_assertions(tenant_key, assertion_hash, expires_at)``: an Identity Assertion
  JWT Authorization Grant is spent by the first token request that presents it (the MCP
  ``ext-auth`` extension "Enterprise-Managed Authorization", 7.4.2: its ``jti`` is refused
  again at least until its ``exp``). Only a SHA-256 hash of the issuer and ``jti`` is kept,
  never the assertion; the primary key makes the first insert the only one, on every
  instance. A row serves no purpose past ``expires_at`` (the assertion itself is refused
  then), so the retention purge deletes it; the index keeps that purge a range scan.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.create_table(
        "identity_assertions",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column("assertion_hash", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_identity_assertions_expires_at", "identity_assertions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_identity_assertions_expires_at", table_name="identity_assertions")
    op.drop_table("identity_assertions")
