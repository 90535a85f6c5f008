"""Tool change control: the version of each tool a consent covered. (Being written: the
schema lands with the change control.)

Revision ID: 0014
Revises: 0013
"""

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
