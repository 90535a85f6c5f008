"""Customer sign-in: clients, customers, codes and token families.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"

Json = sa.JSON().with_variant(JSONB(), "postgresql")
When = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(64), primary_key=True),
        sa.Column("tenant_key", sa.String(63), nullable=False, index=True),
        sa.Column("client_name", sa.String(200), nullable=True),
        sa.Column("redirect_uris", Json, nullable=False),
        sa.Column("metadata", Json, nullable=False),
        sa.Column("created_at", When, nullable=False),
    )
    op.create_table(
        "customers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("created_at", When, nullable=False),
        sa.Column("updated_at", When, nullable=False),
        sa.UniqueConstraint("tenant_key", "subject"),
    )
    op.create_table(
        "authorization_codes",
        sa.Column("code_hash", sa.String(64), primary_key=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("customer_id", sa.Integer, sa.ForeignKey("customers.id"), nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("code_challenge", sa.String(128), nullable=False),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("resource", sa.Text, nullable=True),
        sa.Column("expires_at", When, nullable=False),
        sa.Column("used_at", When, nullable=True),
        sa.Column("created_at", When, nullable=False),
    )
    op.create_table(
        "token_families",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_key", sa.String(63), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("customer_id", sa.Integer, sa.ForeignKey("customers.id"), nullable=False),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("resource", sa.Text, nullable=True),
        sa.Column("code_hash", sa.String(64), nullable=False, index=True),
        sa.Column("created_at", When, nullable=False),
        sa.Column("revoked_at", When, nullable=True),
    )
    op.create_table(
        "access_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column(
            "family_id", sa.Integer, sa.ForeignKey("token_families.id"), nullable=False, index=True
        ),
        sa.Column("expires_at", When, nullable=False),
        sa.Column("revoked_at", When, nullable=True),
        sa.Column("created_at", When, nullable=False),
    )
    op.create_table(
        "refresh_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column(
            "family_id", sa.Integer, sa.ForeignKey("token_families.id"), nullable=False, index=True
        ),
        sa.Column("expires_at", When, nullable=False),
        sa.Column("used_at", When, nullable=True),
        sa.Column("created_at", When, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "refresh_tokens",
        "access_tokens",
        "token_families",
        "authorization_codes",
        "customers",
        "oauth_clients",
    ):
        op.drop_table(table)
