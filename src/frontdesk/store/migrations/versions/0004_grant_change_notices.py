"""Notices of grant changes, on PostgreSQL: every revocation reaches every instance.

A row-level trigger on the tables behind a signed-in call (access tokens, token families,
customers) sends a notice on the channel store.change_feed listens to, in the transaction
that changes the row: PostgreSQL delivers it to every listening session when that
transaction commits, and never for one rolled back. Triggers, rather than a notice sent by
each statement that revokes, so that no path can change a grant without one: not a new
statement, not a cascade, not an operator's hand-written UPDATE. SQLite serves a single
process and needs none.

Payloads: ``a:<token hash>``, ``f:<family id>``, ``c:<customer id>``, or ``*`` after a
TRUNCATE, which changes everything.

Revision ID: 0004
Revises: 0003
"""

from alembic import op

revision = "0004"
down_revision = "0003"

CHANNEL = "frontdesk_grant_changes"

NOTIFY_FUNCTION = f"""
CREATE OR REPLACE FUNCTION frontdesk_grant_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('{CHANNEL}', '*');
    ELSIF TG_TABLE_NAME = 'access_tokens' THEN
        PERFORM pg_notify('{CHANNEL}', 'a:' || OLD.token_hash);
    ELSIF TG_TABLE_NAME = 'token_families' THEN
        PERFORM pg_notify('{CHANNEL}', 'f:' || OLD.id);
    ELSE
        PERFORM pg_notify('{CHANNEL}', 'c:' || OLD.id);
    END IF;
    RETURN NULL;
END
$$
"""

TRIGGERS = {
    "access_tokens_changed": "AFTER UPDATE OR DELETE ON access_tokens FOR EACH ROW",
    "access_tokens_truncated": "AFTER TRUNCATE ON access_tokens FOR EACH STATEMENT",
    "token_families_changed": "AFTER UPDATE OR DELETE ON token_families FOR EACH ROW",
    "token_families_truncated": "AFTER TRUNCATE ON token_families FOR EACH STATEMENT",
    # A customer's row is written on every sign-in; only what a tool sees is a change.
    "customers_changed": (
        "AFTER UPDATE ON customers FOR EACH ROW WHEN ("
        "OLD.subject IS DISTINCT FROM NEW.subject OR OLD.email IS DISTINCT FROM NEW.email "
        "OR OLD.name IS DISTINCT FROM NEW.name)"
    ),
    "customers_deleted": "AFTER DELETE ON customers FOR EACH ROW",
    "customers_truncated": "AFTER TRUNCATE ON customers FOR EACH STATEMENT",
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(NOTIFY_FUNCTION)
    for name, when in TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION frontdesk_grant_changed()")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, when in TRIGGERS.items():
        table = when.split(" ON ", 1)[1].split()[0]
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
    op.execute("DROP FUNCTION IF EXISTS frontdesk_grant_changed()")
