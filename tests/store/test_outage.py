"""Telling a database outage (503, retry) apart from a bug (500)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import DBAPIError, IntegrityError

from frontdesk.store.outage import is_outage


class DriverError(Exception):
    """A driver error carrying its SQLSTATE, as SQLAlchemy's asyncpg adapter's errors do."""

    def __init__(self, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("message", "sqlstate"),
    [
        ("the database system is starting up", "57P03"),
        ("the database system is shutting down", "57P03"),
        ("terminating connection due to administrator command", "57P01"),
        ("terminating connection because of crash of another server process", "57P02"),
        ("connection failure", "08006"),
        ("sorry, too many clients already", "53300"),
    ],
)
def test_a_server_going_away_or_not_yet_up_is_an_outage(message: str, sqlstate: str) -> None:
    """asyncpg's 'cannot connect now' and shutdown errors arrive as a bare DBAPIError."""
    assert is_outage(DBAPIError("SELECT 1", None, DriverError(message, sqlstate)))


def test_other_database_errors_are_bugs() -> None:
    """A constraint violation or an error without a SQLSTATE stays a 500."""
    duplicate = DriverError("duplicate key value violates unique constraint", "23505")
    assert not is_outage(IntegrityError("INSERT", None, duplicate))
    assert not is_outage(DBAPIError("SELECT 1", None, DriverError("odd", None)))
