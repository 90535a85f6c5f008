"""The hourly rollup of tool calls (tables ``tool_usage``, ``tool_usage_customers``): each
worker's counts added to it, and a company's range of hours read back.

Adding is one transaction per flush, so a flush is written whole or not at all and the
worker can give a failed one back to be tried again (frontdesk.usage.flushing). Each row is
an upsert that adds to what is there (``calls = tool_usage.calls + excluded.calls``, every
bucket the same way): on PostgreSQL ``INSERT ... ON CONFLICT DO UPDATE`` inserts or updates
each row atomically whatever other instances write at the same moment, and SQLite lets one
writer in at a time. Every flush writes its rows in the same order (sorted by key), so two
flushes that touch the same rows wait for each other instead of deadlocking.

A company deleted while a worker still held its counts gets none of them: the flush holds
the company's row (``FOR SHARE``; the deletion takes it ``FOR UPDATE`` first, store.admin)
and writes only for companies that still exist, and checks again once it holds SQLite's
write lock, removing what it wrote for a company gone meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import DateTime, String, delete, distinct, func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store.database import for_reads
from frontdesk.store.tables import (
    LATENCY_BUCKETS,
    companies,
    customers,
    tool_usage,
    tool_usage_customers,
)

T = TypeVar("T")

# (tenant key, tool, hour in seconds since the epoch, outcome, signed in) → calls, latency
# sum in milliseconds, then one count per latency bucket.
TallyKey = tuple[str, str, int, str, bool]
# (tenant key, tool, hour) → the subjects of the customers who called.
CustomersKey = tuple[str, str, int]

# Rows per statement: 21 parameters each, far below either database's limit.
ROWS_PER_STATEMENT = 400
SUBJECTS_PER_STATEMENT = 500
_KEY = ("tenant_key", "tool", "hour", "outcome", "signed_in")
_ADDED = ("calls", "latency_ms_sum", *LATENCY_BUCKETS)


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One tool's calls of one outcome and caller kind, summed over a range of hours."""

    tool: str
    outcome: str
    signed_in: bool
    calls: int
    latency_ms_sum: float
    buckets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class UsageRange:
    rows: list[UsageRow]
    # Distinct customers per tool, and over all the company's tools.
    customers_by_tool: dict[str, int]
    customers: int


def hour_of(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


async def add(
    engine: AsyncEngine,
    tallies: Mapping[TallyKey, Sequence[float]],
    callers: Mapping[CustomersKey, Set[str]],
) -> None:
    """Add a worker's counts to the rollup, in one transaction."""
    postgres = engine.dialect.name == "postgresql"
    tenants = sorted({key[0] for key in tallies} | {key[0] for key in callers})
    async with engine.begin() as connection:
        present = await _present(connection, tenants, postgres)
        rows = [_row(key, tally) for key, tally in sorted(tallies.items()) if key[0] in present]
        for chunk in _chunks(rows, ROWS_PER_STATEMENT):
            await connection.execute(_upsert(chunk, postgres))
        for key, subjects in sorted(callers.items()):
            if key[0] in present:
                for some in _chunks(sorted(subjects), SUBJECTS_PER_STATEMENT):
                    await connection.execute(_add_callers(key, some, postgres))
        gone = present - await _present(connection, tenants, postgres)
        if gone:
            for table in (tool_usage, tool_usage_customers):
                await connection.execute(delete(table).where(table.c.tenant_key.in_(gone)))


async def read(
    engine: AsyncEngine, tenant_key: str, since: datetime, until: datetime
) -> UsageRange:
    """The company's rows with ``since <= hour < until``, summed per tool, outcome and
    caller kind, and its distinct customers."""
    usage = tool_usage.c
    summed = (
        select(
            usage.tool,
            usage.outcome,
            usage.signed_in,
            *(func.sum(usage[name]) for name in _ADDED),
        )
        .where(usage.tenant_key == tenant_key, usage.hour >= since, usage.hour < until)
        .group_by(usage.tool, usage.outcome, usage.signed_in)
        .order_by(usage.tool, usage.outcome, usage.signed_in)
    )
    seen = tool_usage_customers.c
    in_range = (seen.tenant_key == tenant_key, seen.hour >= since, seen.hour < until)
    by_tool = (
        select(seen.tool, func.count(distinct(seen.customer_id)))
        .where(*in_range)
        .group_by(seen.tool)
    )
    overall = select(func.count(distinct(seen.customer_id))).where(*in_range)
    async with for_reads(engine).connect() as connection:
        rows = [
            UsageRow(
                tool=row[0],
                outcome=row[1],
                signed_in=bool(row[2]),
                calls=int(row[3]),
                latency_ms_sum=float(row[4]),
                buckets=tuple(int(count) for count in row[5:]),
            )
            for row in await connection.execute(summed)
        ]
        customers_by_tool = {row[0]: int(row[1]) for row in await connection.execute(by_tool)}
        total = int((await connection.execute(overall)).scalar_one())
    return UsageRange(rows, customers_by_tool, total)


async def _present(connection: AsyncConnection, tenants: list[str], postgres: bool) -> set[str]:
    """Which of ``tenants`` are companies now; on PostgreSQL their rows are held until the
    transaction ends, so none is deleted meanwhile."""
    query = select(companies.c.tenant_key).where(companies.c.tenant_key.in_(tenants))
    if postgres:
        query = query.order_by(companies.c.tenant_key).with_for_update(read=True)
    return {row[0] for row in await connection.execute(query)}


def _row(key: TallyKey, tally: Sequence[float]) -> dict[str, Any]:
    tenant_key, tool, hour, outcome, signed_in = key
    row: dict[str, Any] = {
        "tenant_key": tenant_key,
        "tool": tool,
        "hour": hour_of(hour),
        "outcome": outcome,
        "signed_in": signed_in,
        "calls": int(tally[0]),
        "latency_ms_sum": float(tally[1]),
    }
    for name, count in zip(LATENCY_BUCKETS, tally[2:], strict=True):
        row[name] = int(count)
    return row


def _upsert(rows: list[dict[str, Any]], postgres: bool) -> Any:
    insert = _insert_of(postgres)
    statement = insert(tool_usage).values(rows)
    return statement.on_conflict_do_update(
        index_elements=list(_KEY),
        set_={name: tool_usage.c[name] + statement.excluded[name] for name in _ADDED},
    )


def _add_callers(key: CustomersKey, subjects: list[str], postgres: bool) -> Any:
    """The customers with these subjects, as callers of the tool in the hour: by their ids,
    so that a customer's deletion takes their rows with it (the foreign key cascades)."""
    tenant_key, tool, hour = key
    chosen = select(
        literal(tenant_key, String),
        literal(tool, String),
        literal(hour_of(hour), DateTime(timezone=True)),
        customers.c.id,
    ).where(customers.c.tenant_key == tenant_key, customers.c.subject.in_(subjects))
    insert = _insert_of(postgres)
    return (
        insert(tool_usage_customers)
        .from_select(["tenant_key", "tool", "hour", "customer_id"], chosen)
        .on_conflict_do_nothing()
    )


def _insert_of(postgres: bool) -> Any:
    """The dialect's INSERT, which has ON CONFLICT. PostgreSQL's is imported only where it
    is used: a SQLite worker never loads that dialect (tests/test_imports.py)."""
    if postgres:
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
