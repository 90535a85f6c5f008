"""Writing a worker's counts to the database: every ``FRONTDESK_USAGE_FLUSH_SECONDS``, and
once more as the worker stops.

A flush takes the counts away whole and adds them to the hourly rollup in one transaction
(store.tool_usage); when that fails (the database down or stalled), the counts are given
back to be tried with the next flush, within the counters' bounds (usage.counters), and the
failure is logged by its type only. What a crash loses is what its worker counted since its
last flush: at most one interval of one worker.

Stopping does not cancel a flush under way (a cancelled commit could leave the worker not
knowing whether its counts were written): the loop is told to end, finishes its flush, and
the last flush follows.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from frontdesk.store import tool_usage
from frontdesk.store.database import Database
from frontdesk.usage.counters import UsageCounters

log = structlog.get_logger(__name__)

# The longest one flush may take; past it, its counts are kept for the next. The last one,
# as the worker stops, gets less: a flush under way and the last together stay within the
# worker's grace after SIGTERM (http_server.SHUTDOWN_GRACE_SECONDS, 8 s) even when the
# database has stalled.
FLUSH_SECONDS = 5.0
LAST_FLUSH_SECONDS = 2.5


class UsageFlusher:
    def __init__(self, counters: UsageCounters, database: Database, interval: float) -> None:
        self.counters = counters
        self._database = database
        self._interval = interval
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Flush every interval in the background (none when the interval is 0: the last
        flush, at stop, still writes what was counted)."""
        if self._interval > 0 and self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._loop(), name="frontdesk-usage-flush")

    async def stop(self) -> None:
        """End the loop after its flush under way, then write what is left."""
        if self._task is not None:
            self._stopping.set()
            await self._task
            self._task = None
        await self.flush(LAST_FLUSH_SECONDS)

    async def flush(self, within: float = FLUSH_SECONDS) -> bool:
        """Write what was counted, within ``within`` seconds; False when the database
        refused it or took longer (the counts are kept for the next flush)."""
        counts = self.counters.take()
        if not counts:
            return True
        try:
            async with asyncio.timeout(within):
                await tool_usage.add(self._database.engine, counts.tallies, counts.customers)
        except Exception as error:
            dropped_keys, dropped_customers = self.counters.give_back(counts)
            # The type only: a database error's text may quote the statement.
            log.warning(
                "usage_flush_failed", error=type(error).__name__, kept=self.counters.pending()
            )
            if dropped_keys or dropped_customers:
                log.warning(
                    "usage_dropped",
                    reason="the database refused flushes for too long",
                    keys=dropped_keys,
                    customers=dropped_customers,
                )
            return False
        return True

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._interval):
                    await self._stopping.wait()
            if not self._stopping.is_set():
                await self.flush()
