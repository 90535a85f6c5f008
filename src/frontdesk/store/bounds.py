"""How long anything waits on the database: every wait bounded, and each bound an outage.

A database that refuses connections fails fast by itself; one that stalls (accepts a
connection, then answers nothing: a frozen server, a dropped route, a full disk) would
keep every caller waiting for as long as the kernel keeps the socket. Each wait therefore
has a bound of its own, and every bound reached is an outage (store.outage): the request
is answered 503 with ``Retry-After`` within a few seconds, and the service recovers by
itself once the database answers again.

- ``connect``: opening a connection (TCP, TLS, PostgreSQL's start-up exchange).
- ``acquire``: waiting for a pooled connection, including opening one.
- ``statement``: one statement's round trip. On PostgreSQL the server is told too
  (``statement_timeout``, ``idle_in_transaction_session_timeout``), so it also stops work
  nobody waits for any more, and releases the locks that work holds.
"""

from __future__ import annotations

from dataclasses import dataclass

# A statement on the request path takes milliseconds; one still running after this long
# means a stalled or overloaded server, and the client had better retry.
STATEMENT_SECONDS = 5.0
# Opening a connection on a healthy network takes a few round trips.
CONNECT_SECONDS = 3.0
# A transaction left idle this many statement bounds means its client is gone or stalled.
IDLE_IN_TRANSACTION_FACTOR = 2


@dataclass(frozen=True)
class Timeouts:
    """The bounds, in seconds, of each kind of wait on the database."""

    statement: float = STATEMENT_SECONDS
    connect: float = CONNECT_SECONDS
    acquire: float = CONNECT_SECONDS

    @classmethod
    def within(cls, seconds: float) -> Timeouts:
        """Statements bounded by ``seconds``; connecting and queueing for a connection by
        the same, or CONNECT_SECONDS if that is shorter."""
        quicker = min(seconds, CONNECT_SECONDS)
        return cls(statement=seconds, connect=quicker, acquire=quicker)

    def server_settings(self) -> dict[str, str]:
        """PostgreSQL session settings that make the server keep the same bounds."""
        statement_ms = max(1, round(self.statement * 1000))
        return {
            "statement_timeout": str(statement_ms),
            "idle_in_transaction_session_timeout": str(statement_ms * IDLE_IN_TRANSACTION_FACTOR),
        }
