"""Keys for the admin API (`frontdesk keys`): an operator key manages every company, a
company key only its own.

- ``admin_keys``: one row per key. Only the key's SHA-256 is kept (``key_hash``, unique:
  the lookup a request makes); ``key_id`` is the public name shown by `keys list` and used
  by `keys revoke`. ``tenant_key`` is NULL for an operator key. A revoked key keeps its row
  (``revoked_at``), so the audit log's references to it stay readable.
- A new table: the upgrade locks nothing that serves.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.create_table(
        "admin_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("tenant_key", sa.String(63), nullable=True, index=True),
        sa.Column("name", sa.String(100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("admin_keys")
