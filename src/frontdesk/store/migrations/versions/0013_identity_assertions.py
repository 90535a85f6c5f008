"""Enterprise-managed sign-in (ID-JAG): what the token endpoint must remember across
instances. (Being written: the schema lands with the grant.)

Revision ID: 0013
Revises: 0012
"""

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
