"""Tool change control: the version of each tool a consent covered.

- ``tool_versions``: each version of each company's tool as first seen (by a consent that
  covered it, or a change to the company), with the hash of its whole definition and the
  document the version hashes, so that a later change can be judged: does it widen what
  the tool does (companies.tool_versions)? One row per (company, tool, version, definition
  hash): a change the customer cannot see (a provider's URL) is a row of its own too.
- ``tool_snapshots``: the versions one consent covered (tool name -> version), named by
  the SHA-256 of their canonical JSON, so that a grant holds 64 characters, not a map.
- ``tool_snapshot`` on ``consents``, ``authorization_codes`` and ``token_families``: the
  snapshot the customer allowed. NULL for a grant made before this revision (or without
  a consent page): such a grant is not held to versions.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0014"
down_revision = "0013"

JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
# Tables whose rows record what a consent covered.
GRANT_TABLES = ("consents", "authorization_codes", "token_families")


def upgrade() -> None:
    op.create_table(
        "tool_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("tool", sa.String(128), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("definition_hash", sa.String(64), nullable=False),
        sa.Column("document", JSON_DOCUMENT, nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("tenant_key", "tool", "version", "definition_hash"),
    )
    op.create_table(
        "tool_snapshots",
        sa.Column("tenant_key", sa.String(63), primary_key=True),
        sa.Column("snapshot", sa.String(64), primary_key=True),
        sa.Column("versions", JSON_DOCUMENT, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    for table in GRANT_TABLES:
        op.add_column(table, sa.Column("tool_snapshot", sa.String(64), nullable=True))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite has it since 3.35): a batch rebuild would drop and
    # recreate token_families, which the token tables' foreign keys refuse.
    for table in reversed(GRANT_TABLES):
        op.execute(f"ALTER TABLE {table} DROP COLUMN tool_snapshot")
    op.drop_table("tool_snapshots")
    op.drop_table("tool_versions")
