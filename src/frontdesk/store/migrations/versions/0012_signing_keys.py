"""Each company's keys for the JWTs its APIs receive (a personal call's signed identity).

- ``signing_keys``: per company, one row per key: its ``kid``, algorithm, public JWK (served
  at the company's ``jwks_uri``) and private JWK sealed under the data keys. The newest
  active key signs; a retired key (``retired_at``) is still published until
  ``retired_at`` plus the overlap, so tokens it signed keep verifying after a rotation.
  A partial unique index keeps one active key per company: instances that make a
  company's first key at once race on it, and one wins.
- A new table: the upgrade locks nothing that serves.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.create_table(
        "signing_keys",
        sa.Column("kid", sa.String(64), primary_key=True),
        sa.Column("tenant_key", sa.String(63), nullable=False, index=True),
        sa.Column("algorithm", sa.String(16), nullable=False),
        sa.Column("public_jwk", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("private_sealed", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index(
        "uq_signing_keys_one_active",
        "signing_keys",
        ["tenant_key"],
        unique=True,
        sqlite_where=sa.text("retired_at IS NULL"),
        postgresql_where=sa.text("retired_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("uq_signing_keys_one_active", table_name="signing_keys")
    op.drop_table("signing_keys")
