"""The statements on the hot path, each written once in SQLAlchemy Core.

Every signed-in call looks its access token up and every refresh grant spends a token;
those few statements run on the raw drivers (asyncpg on PostgreSQL, the stdlib ``sqlite3``
reader on SQLite: docs/decisions/hot-sql.md says why), which take SQL text. The text is
not written by hand: each statement is built here once, executed as it is through the
engine where the engine serves (store.access_grants, store.refresh_grants), and compiled
at import to the text a raw driver runs (``compiled``; store.sqlite_lookups,
store.access_lookups, store.grants_postgres). So the rules they hold (which token is live,
when a refresh token may be spent) are written once, whatever runs them.

Only SQLAlchemy's generic constructs are used here: the PostgreSQL dialect is loaded by
the modules that compile for it, which only a PostgreSQL worker imports
(docs/decisions/memory.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    DateTime,
    Integer,
    Select,
    String,
    Text,
    any_,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement

from frontdesk.store.tables import (
    JsonDocument,
    access_tokens,
    audit_events,
    customers,
    refresh_tokens,
    token_families,
)

# The parameters, by name. "now" is the moment the statement's caller reads the clock at.
# No name is a column's: SQLAlchemy keeps those for an UPDATE's SET clause.
NOW = bindparam("now", type_=DateTime(timezone=True))
TOKEN_HASH = bindparam("token", type_=String)
TENANT_KEY = bindparam("tenant", type_=String)

_access = access_tokens.c
_family = token_families.c
_customer = customers.c

# An access token with its family and customer: one search by primary key in each table.
_TOKENS_WITH_GRANTS = access_tokens.join(token_families, _family.id == _access.family_id).join(
    customers, _customer.id == _family.customer_id
)

# store.grant_records.AccessRecord's fields, in its order.
_GRANT_COLUMNS = (
    _family.client_id,
    _family.scope,
    _family.resource,
    _customer.subject,
    _customer.email,
    _customer.name,
    _customer.email_verified,
    _family.tool_snapshot,
)


def _live_access(now: ColumnElement[Any]) -> tuple[ColumnElement[bool], ...]:
    """The live-access-token rule: unexpired at ``now``, unrevoked, of a family not revoked
    (interface 3.2). Whose token it is, the caller compares."""
    return (_access.expires_at > now, _access.revoked_at.is_(None), _family.revoked_at.is_(None))


# The grant behind one live token of the company asking, and whether it was used before
# (SQLite's reader and the engine's lookup).
FIND_LIVE_ACCESS_GRANT: Select[Any] = (
    select(*_GRANT_COLUMNS, _access.used_at.is_not(None).label("used"))
    .select_from(_TOKENS_WITH_GRANTS)
    .where(_access.token_hash == TOKEN_HASH, _family.tenant_key == TENANT_KEY, *_live_access(NOW))
)

# A token's first use, recorded; it rechecks the revocation, so a token revoked since it
# was read is not marked (and must not be used). A mark made first by another call stays.
MARK_ACCESS_USED = (
    update(access_tokens)
    .where(_access.token_hash == TOKEN_HASH, _access.revoked_at.is_(None))
    .values(used_at=func.coalesce(_access.used_at, NOW))
)


def _live_access_tokens() -> Select[Any]:
    """PostgreSQL's batched lookup (store.access_lookups): the live tokens among a list of
    hashes, with the company each belongs to (compared by the caller, so one statement
    serves lookups of several companies) and what a notice may name to end it. A token
    found for the first time is marked used in the same statement, which commits before
    it answers; the mark rechecks the revocation as ``MARK_ACCESS_USED`` does."""
    hashes = bindparam("token_hashes", type_=ARRAY(Text))
    live = (
        select(
            _access.token_hash,
            _family.tenant_key,
            _access.expires_at,
            _family.id,
            _family.customer_id,
            *_GRANT_COLUMNS,
            _access.used_at.is_not(None).label("used"),
        )
        .select_from(_TOKENS_WITH_GRANTS)
        .where(_access.token_hash == any_(hashes), *_live_access(NOW))
        .cte("live")
    )
    first_use = (
        update(access_tokens)
        .where(_access.token_hash == live.c.token_hash, ~live.c.used, _access.revoked_at.is_(None))
        .values(used_at=func.coalesce(_access.used_at, NOW))
        .returning(_access.token_hash)
        .cte("first_use")
    )
    return select(*(column for column in live.c if column.name != "used")).where(
        live.c.used | live.c.token_hash.in_(select(first_use.c.token_hash))
    )


FIND_LIVE_ACCESS_TOKENS = _live_access_tokens()

# A refresh token of the company, its family, and the refresh token its rotation produced
# (when there is one): what oauth.refresh decides over (store.grant_records.RefreshState).
_refresh = refresh_tokens.c
_successor = refresh_tokens.alias("successor")
FIND_REFRESH: Select[Any] = (
    select(
        _refresh.family_id,
        _family.client_id,
        _family.scope,
        _refresh.expires_at,
        _refresh.used_at,
        _family.revoked_at.is_not(None).label("family_revoked"),
        _refresh.successor_hash,
        _successor.c.used_at.is_not(None).label("successor_spent"),
        _refresh.successor_sealed,
    )
    .select_from(
        refresh_tokens.join(token_families, _family.id == _refresh.family_id).outerjoin(
            _successor, _successor.c.token_hash == _refresh.successor_hash
        )
    )
    .where(_refresh.token_hash == TOKEN_HASH, _family.tenant_key == TENANT_KEY)
)

FAMILY_ID = bindparam("family", type_=Integer)
ACCESS_HASH = bindparam("access_hash", type_=String)
ACCESS_EXPIRES_AT = bindparam("access_expires_at", type_=DateTime(timezone=True))
REFRESH_HASH = bindparam("refresh_hash", type_=String)
REFRESH_EXPIRES_AT = bindparam("refresh_expires_at", type_=DateTime(timezone=True))


def family_live(family_id: ColumnElement[Any] | int) -> ColumnElement[bool]:
    """The family has not ended (the condition every refresh step is taken on)."""
    return select(_family.id).where(_family.id == family_id, _family.revoked_at.is_(None)).exists()


# Spending a refresh token for the pair that follows it, on the condition of the state the
# decision read (unspent, family live): of concurrent spends the row lock lets one win.
SPEND_REFRESH = (
    update(refresh_tokens)
    .where(_refresh.token_hash == TOKEN_HASH, _refresh.used_at.is_(None), family_live(FAMILY_ID))
    .values(
        used_at=NOW,
        successor_hash=REFRESH_HASH,
        successor_sealed=bindparam("kept_successor", type_=Text),
    )
)


def _rotate_refresh() -> Select[Any]:
    """A refresh grant's rotation as one statement (PostgreSQL: store.grants_postgres):
    ``SPEND_REFRESH``, the next pair and the audit event, together or not at all, in one
    round trip. The engine's version runs the same spend and writes the rest in its
    transaction (store.refresh_grants)."""
    spent = SPEND_REFRESH.returning(_refresh.family_id).cte("spent")
    next_access = insert(access_tokens).from_select(
        [_access.token_hash, _access.family_id, _access.expires_at, _access.created_at],
        select(ACCESS_HASH, spent.c.family_id, ACCESS_EXPIRES_AT, NOW),
    )
    next_refresh = insert(refresh_tokens).from_select(
        [
            _refresh.token_hash,
            _refresh.family_id,
            _refresh.expires_at,
            _refresh.created_at,
            _refresh.access_hash,
        ],
        select(REFRESH_HASH, spent.c.family_id, REFRESH_EXPIRES_AT, NOW, ACCESS_HASH),
    )
    recorded = audit_events.c
    logged = insert(audit_events).from_select(
        [
            recorded.tenant_key,
            recorded.occurred_at,
            recorded.event,
            recorded.client_id,
            recorded.family_id,
            recorded.detail,
        ],
        select(
            TENANT_KEY,
            NOW,
            bindparam("event", type_=String),
            bindparam("client", type_=String),
            spent.c.family_id,
            bindparam("detail", type_=JsonDocument),
        ),
    )
    return (
        select(func.count())
        .select_from(spent)
        .add_cte(
            next_access.cte("next_access"),
            next_refresh.cte("next_refresh"),
            logged.cte("logged"),
        )
    )


ROTATE_REFRESH = _rotate_refresh()


class Compiled(NamedTuple):
    """A statement's text for one driver, and its parameters' names in the order the
    driver takes them (positionally: ``$1, $2…`` or ``?``)."""

    text: str
    parameters: tuple[str, ...]

    def arguments(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """``values`` in the driver's order; KeyError for a parameter not given, ValueError
        for a value no parameter takes."""
        unknown = values.keys() - set(self.parameters)
        if unknown:
            raise ValueError(f"no parameter takes {sorted(unknown)}")
        return tuple(values[name] for name in self.parameters)


def compiled(
    statement: ClauseElement, driver: str, parameters: tuple[str, ...] | None = None
) -> Compiled:
    """``statement`` as ``driver`` runs it (SQLAlchemy's name for a dialect and driver:
    ``postgresql+asyncpg``, ``sqlite``; the dialect is loaded when first asked for).
    ``parameters``: the order a caller passes values in positionally (on the hottest
    statements, where ``arguments`` would cost a call); a statement compiled to another
    order fails here, at import, rather than binding one value in another's place."""
    text = statement.compile(dialect=make_url(f"{driver}://").get_dialect()())
    if not isinstance(text, SQLCompiler):
        raise TypeError(f"{type(statement).__name__} is not a SQL statement")
    order = tuple(text.positiontup or ())
    if parameters is not None and order != parameters:
        raise RuntimeError(f"the statement's parameters are {order}, not {parameters}")
    return Compiled(text.string, order)
