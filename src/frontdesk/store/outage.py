"""Telling a database outage apart from a bug.

An outage (the server is down, restarting, unreachable, or the pool is exhausted) is
answered 503 so clients retry; anything else is a bug and stays a 500. The HTTP layers
ask ``is_outage`` in their one error-rendering place.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

OUTAGE_TYPES: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    PoolTimeoutError,
    ConnectionError,
    TimeoutError,
)


# SQLSTATEs of a server that is going away, not taking connections yet or past a bound:
# connection exceptions (class 08), admin and crash shutdown, "the database system is
# starting up" or "shutting down" (57P01-57P03), too many connections (53300), a statement
# the server cancelled at its statement_timeout (57014, store.bounds), and a session it
# ended at its idle_in_transaction_session_timeout (25P03). asyncpg raises these as its
# own errors, which SQLAlchemy wraps in a bare DBAPIError, not an OperationalError.
OUTAGE_SQLSTATES = ("08", "57P01", "57P02", "57P03", "53300", "57014", "25P03")


def is_outage(error: BaseException) -> bool:
    if isinstance(error, OUTAGE_TYPES):
        return True
    if isinstance(error, DBAPIError):
        if error.connection_invalidated:
            return True
        sqlstate = getattr(error.orig, "sqlstate", None)
        if isinstance(sqlstate, str) and sqlstate.startswith(OUTAGE_SQLSTATES):
            return True
    # asyncpg reports a dropped or refused connection as its own errors, which SQLAlchemy
    # wraps; they all end in an OSError somewhere down the chain.
    cause = error.__cause__ or error.__context__
    return cause is not None and cause is not error and isinstance(cause, OSError)
