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


def is_outage(error: BaseException) -> bool:
    if isinstance(error, OUTAGE_TYPES):
        return True
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    # asyncpg reports a dropped or refused connection as its own errors, which SQLAlchemy
    # wraps; they all end in an OSError somewhere down the chain.
    cause = error.__cause__ or error.__context__
    return cause is not None and cause is not error and isinstance(cause, OSError)
