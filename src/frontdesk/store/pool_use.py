"""How many connections each of a worker's database pools has lent out right now, for the
``frontdesk_database_connections_in_use`` gauge (metrics.py samples it every second).

Read from the pools' own counts, not counted on each borrow and return: the hot statements
borrow a connection each, and a reading once a second costs them nothing.
"""

from __future__ import annotations

from sqlalchemy.pool import QueuePool

from frontdesk.observability.metrics import PoolReading
from frontdesk.store.database import Database


def pool_use(database: Database) -> list[PoolReading]:
    """(pool, lent out) for SQLAlchemy's pool ("engine") and, on PostgreSQL, asyncpg's two
    ("driver": the refresh grant's statements; "lookup": the batched token lookups)."""
    readings: list[PoolReading] = []
    pool = database.engine.sync_engine.pool
    # A database in memory keeps one connection outside any queue: nothing to read.
    if isinstance(pool, QueuePool):
        readings.append(("engine", pool.checkedout()))
    for name, driver in (("driver", database.driver_pool), ("lookup", database.lookup_pool)):
        if driver is not None:
            readings.append((name, driver.lent()))
    return readings
