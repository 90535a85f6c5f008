"""Grant changes as PostgreSQL announces them: one listening session per process.

The triggers of migration 0004 send a notice in every transaction that revokes an access
token, ends a token family or changes a customer, and PostgreSQL delivers it to every
listening session when that transaction commits. A process that keeps one session
listening learns of a revocation made by any instance within a round trip of its commit;
store.access_lookups keeps live tokens in memory on that promise, so the promise is kept
precise when the session fails too:

- ``confirmed()`` is True only while the session has answered a heartbeat sent within the
  last TRUST_SECONDS. PostgreSQL sends a session the notices of every transaction committed
  before it answers the session's next statement, so an answered heartbeat means nothing
  committed before it was sent is still on its way. A session cut off without a word (a
  dropped route, a frozen server) stops being trusted within TRUST_SECONDS; one that
  closes, at once.
- ``generation`` advances with every notice, and whenever a session is lost or a new one
  starts: a lookup that ran while it moved may hold what a notice just ended.
- a subscriber hears every notice's payload, and None ("anything may have changed") when a
  session is lost or a new one starts, since notices sent in between reached nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable

import asyncpg
import structlog

from frontdesk.store.bounds import Timeouts
from frontdesk.store.postgres import driver_dsn

log = structlog.get_logger(__name__)

# The channel migration 0004's triggers notify.
CHANNEL = "frontdesk_grant_changes"
# How the listening session shows in pg_stat_activity.
APPLICATION_NAME = "frontdesk-grant-changes"
# A heartbeat ten times a second costs PostgreSQL a trivial statement each; it bounds how
# long a silently lost session can go unnoticed.
HEARTBEAT_SECONDS = 0.1
TRUST_SECONDS = 0.5
RECONNECT_SECONDS = 1.0

Subscriber = Callable[[str | None], None]


class SessionMoved(RuntimeError):
    """The heartbeat was answered by another server process than the one listening."""


class ChangeFeed:
    def __init__(self, url: str, timeouts: Timeouts | None = None) -> None:
        self._dsn = driver_dsn(url)
        self._timeouts = timeouts or Timeouts()
        self._subscribers: list[Subscriber] = []
        self.generation = 0
        # When the newest answered heartbeat was sent (time.monotonic).
        self._confirmed_at = -math.inf
        # When the heartbeat under way was sent, if one is.
        self._heartbeat_sent: float | None = None
        self._listening: asyncio.Task[None] | None = None
        self._heartbeat_wanted = asyncio.Event()
        # Callers of caught_up, each with the moment it asked.
        self._catching_up: list[tuple[float, asyncio.Future[None]]] = []
        self._closed = False

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def start(self) -> None:
        """Start listening, once; nothing is confirmed before the first heartbeat answers.
        Started on first need, so a process that serves no signed-in call opens no session."""
        if self._listening is None and not self._closed:
            self._listening = asyncio.ensure_future(self._listen())

    def confirmed(self) -> bool:
        """Every change committed more than TRUST_SECONDS ago has been delivered here."""
        return time.monotonic() - self._confirmed_at <= TRUST_SECONDS

    async def caught_up(self) -> None:
        """Wait until every change committed before this call has been delivered here, or
        until no confirmation that could miss one can be trusted any more.

        For the revocations this process makes itself: awaited after the commit and before
        the answer, they take effect here before the client hears they did.
        """
        asked = time.monotonic()
        # Confirmed now, or soon by a heartbeat sent before this call: it must be waited out.
        if not self.confirmed() and self._heartbeat_sent is None:
            return
        caught: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._catching_up.append((asked, caught))
        self._heartbeat_wanted.set()
        # After TRUST_SECONDS only a heartbeat sent after `asked` can confirm anything.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(TRUST_SECONDS):
                await caught

    async def close(self) -> None:
        self._closed = True
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
            self._listening = None

    async def _listen(self) -> None:
        lost_since: float | None = None
        while not self._closed:
            connection: asyncpg.Connection | None = None
            try:
                # Every wait bounded (store.bounds): the heartbeat has its own, shorter
                # bound; LISTEN, sent on a server that may have stalled since it accepted
                # the connection, has the command timeout.
                connection = await asyncpg.connect(
                    self._dsn,
                    timeout=self._timeouts.connect,
                    command_timeout=self._timeouts.statement,
                    server_settings={
                        **self._timeouts.server_settings(),
                        "application_name": APPLICATION_NAME,
                    },
                )
                await connection.add_listener(CHANNEL, self._on_notice)
                self._changed(None)
                if lost_since is not None:
                    down_for = round(time.monotonic() - lost_since, 1)
                    log.info("grant_changes_resumed", after_seconds=down_for)
                    lost_since = None
                await self._beat(connection)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if lost_since is None:
                    lost_since = time.monotonic()
                    log.warning("grant_changes_lost", error=type(error).__name__)
            finally:
                self._heartbeat_sent = None
                self._confirmed_at = -math.inf
                self._changed(None)
                self._release_catching_up(math.inf)
                if connection is not None:
                    connection.terminate()
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _beat(self, connection: asyncpg.Connection) -> None:
        listening_pid = connection.get_server_pid()
        while True:
            sent = self._heartbeat_sent = time.monotonic()
            pid = await connection.fetchval("SELECT pg_backend_pid()", timeout=TRUST_SECONDS)
            if pid != listening_pid:
                # A pooler between here and PostgreSQL moved the session to another server
                # process, which hears none of the notices: never to be trusted.
                raise SessionMoved(f"listening on backend {listening_pid}, answered by {pid}")
            # asyncpg hands notices to call_soon as they arrive, ahead of the answer: every
            # notice sent before this answer has been handled by now.
            self._heartbeat_sent = None
            self._confirmed_at = sent
            self._release_catching_up(sent)
            self._heartbeat_wanted.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(HEARTBEAT_SECONDS):
                    await self._heartbeat_wanted.wait()

    def _release_catching_up(self, confirmed_up_to: float) -> None:
        waiting = []
        for asked, caught in self._catching_up:
            if asked <= confirmed_up_to:
                if not caught.done():
                    caught.set_result(None)
            else:
                waiting.append((asked, caught))
        self._catching_up = waiting

    def _on_notice(
        self,
        _connection: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy,
        _pid: int,
        _channel: str,
        payload: object,
    ) -> None:
        self._changed(str(payload))

    def _changed(self, payload: str | None) -> None:
        self.generation += 1
        for subscriber in self._subscribers:
            subscriber(payload)
