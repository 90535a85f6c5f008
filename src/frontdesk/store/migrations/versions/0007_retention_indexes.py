"""Retention (store.retention): the indexes its purge scans, and whether a client was granted.

- Indexes on each expiry (codes, access and refresh tokens) and on the audit log's time
  across companies: every batch of the purge is a range scan, not a scan of the table.
- ``token_families(tenant_key, client_id)``: whether a client has a family.
- ``oauth_clients.granted_at``: recorded by the purge before a client's ended families go,
  so that a client granted long ago is never purged as one registered and never used.
  Nullable with no default: on PostgreSQL a change of the catalogue only.

Creating an index on PostgreSQL blocks writes to its table until it is built (it runs in
the one transaction of Database.migrate, so not CONCURRENTLY): on a large database, run
``frontdesk db upgrade`` at a quiet hour.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"

INDEXES = {
    "ix_authorization_codes_expires_at": ("authorization_codes", ["expires_at"]),
    "ix_access_tokens_expires_at": ("access_tokens", ["expires_at"]),
    "ix_refresh_tokens_expires_at": ("refresh_tokens", ["expires_at"]),
    "ix_audit_events_occurred_at": ("audit_events", ["occurred_at"]),
    "ix_token_families_tenant_client": ("token_families", ["tenant_key", "client_id"]),
}


def upgrade() -> None:
    op.add_column("oauth_clients", sa.Column("granted_at", sa.DateTime(timezone=True)))
    for name, (table, columns) in INDEXES.items():
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _columns) in INDEXES.items():
        op.drop_index(name, table_name=table)
    # Not batch mode: copying oauth_clients is not needed, as SQLite (3.35 and later) drops
    # a column with no index or constraint in place.
    op.drop_column("oauth_clients", "granted_at")
