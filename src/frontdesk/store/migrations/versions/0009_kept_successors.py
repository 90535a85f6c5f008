"""A company's refresh retry window (oauth.refresh): the pair a rotation produced, kept
sealed on the spent refresh token for that window only.

- ``refresh_tokens.successor_sealed``: that pair, sealed under the data keys
  (oauth.kept_pairs). Nullable with no default: on PostgreSQL a change of the catalogue
  only, and every existing row keeps none (a retry of a token spent before the upgrade is
  reuse, as the contract says).
- ``ix_refresh_tokens_kept_successor``: a partial index on the spending time of the rows
  that keep one, which the purge clears after the window (store.retention); it holds only
  the few rows inside a window, so it is built at once whatever the table's size.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"

INDEX = "ix_refresh_tokens_kept_successor"


def upgrade() -> None:
    op.add_column("refresh_tokens", sa.Column("successor_sealed", sa.Text))
    kept = sa.text("successor_sealed IS NOT NULL")
    op.create_index(INDEX, "refresh_tokens", ["used_at"], postgresql_where=kept, sqlite_where=kept)


def downgrade() -> None:
    op.drop_index(INDEX, table_name="refresh_tokens")
    # Not batch mode: SQLite (3.35 and later) drops a column with no index in place.
    op.drop_column("refresh_tokens", "successor_sealed")
