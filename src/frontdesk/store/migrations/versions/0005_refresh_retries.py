"""Refresh retries and client ids that are URLs.

- ``access_tokens.used_at``: when a token was first presented at the MCP endpoint.
- ``refresh_tokens.successor_hash`` and ``access_hash``: the pair a rotation produced, so a
  refresh token sent again can be told to be a lost answer's retry (oauth.refresh).
- Every ``client_id`` holds 2,048 characters: a client id may be the URL of a Client ID
  Metadata Document. On PostgreSQL a longer varchar is a change of the catalogue only, with
  no rewrite of the table or its indexes. SQLite never enforces a VARCHAR's length (its
  columns have type affinity, not sizes), so its tables, which other tables' foreign keys
  reference, are not rebuilt for a number it would not read.
- On PostgreSQL the notice of a changed access token (migration 0004) is no longer sent
  when only ``used_at`` changes: a first use changes nothing a signed-in call reads, and the
  notice would drop the token just kept in memory (store.access_lookups) on every instance.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"

CLIENT_ID_COLUMNS = ("oauth_clients", "authorization_codes", "token_families", "audit_events")
OLD_CLIENT_ID_LENGTH = 64
CLIENT_ID_LENGTH = 2048

# Every column of the row but used_at, compared as a whole, so that a column added later
# still notifies when it changes.
WHEN_CHANGED = (
    "AFTER UPDATE ON access_tokens FOR EACH ROW "
    "WHEN (to_jsonb(OLD) - 'used_at' IS DISTINCT FROM to_jsonb(NEW) - 'used_at')"
)
WHEN_DELETED = "AFTER DELETE ON access_tokens FOR EACH ROW"
# As migration 0004 created it.
WHEN_0004 = "AFTER UPDATE OR DELETE ON access_tokens FOR EACH ROW"
NOTIFY = "EXECUTE FUNCTION frontdesk_grant_changed()"


def upgrade() -> None:
    op.add_column("access_tokens", sa.Column("used_at", sa.DateTime(timezone=True)))
    op.add_column("refresh_tokens", sa.Column("successor_hash", sa.String(64)))
    op.add_column("refresh_tokens", sa.Column("access_hash", sa.String(64)))
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in CLIENT_ID_COLUMNS:
        op.alter_column(
            table,
            "client_id",
            type_=sa.String(CLIENT_ID_LENGTH),
            existing_type=sa.String(OLD_CLIENT_ID_LENGTH),
        )
    # One transaction (Database.migrate): no change is committed between the two triggers.
    op.execute("DROP TRIGGER access_tokens_changed ON access_tokens")
    op.execute(f"CREATE TRIGGER access_tokens_changed {WHEN_CHANGED} {NOTIFY}")
    op.execute(f"CREATE TRIGGER access_tokens_deleted {WHEN_DELETED} {NOTIFY}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER access_tokens_deleted ON access_tokens")
        op.execute("DROP TRIGGER access_tokens_changed ON access_tokens")
        op.execute(f"CREATE TRIGGER access_tokens_changed {WHEN_0004} {NOTIFY}")
        # Fails, as it should, while a client id longer than the old limit is stored.
        for table in CLIENT_ID_COLUMNS:
            op.alter_column(
                table,
                "client_id",
                type_=sa.String(OLD_CLIENT_ID_LENGTH),
                existing_type=sa.String(CLIENT_ID_LENGTH),
            )
    # Batch mode: SQLite drops a column by copying its table (both are referenced by none).
    with op.batch_alter_table("refresh_tokens") as refresh_tokens:
        refresh_tokens.drop_column("access_hash")
        refresh_tokens.drop_column("successor_hash")
    with op.batch_alter_table("access_tokens") as access_tokens:
        access_tokens.drop_column("used_at")
