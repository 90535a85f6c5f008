"""Both PostgreSQL pools plan each statement for the tables as they are: a generic plan
cached while a table was small keeps a sequential scan after it has grown (the bench saw
an access-token lookup go from 0.3 ms to 20 ms)."""

from __future__ import annotations

from sqlalchemy import text

from frontdesk.store.database import Database
from frontdesk.store.postgres import DriverPool


async def test_the_hot_statements_pool_plans_every_run(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1)
    try:
        async with pool.connection() as connection:
            assert await connection.fetchval("SHOW plan_cache_mode") == "force_custom_plan"
    finally:
        await pool.close()


async def test_the_sqlalchemy_pool_plans_every_run(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        async with database.engine.connect() as connection:
            mode = (await connection.execute(text("SHOW plan_cache_mode"))).scalar()
        assert mode == "force_custom_plan"
    finally:
        await database.close()
