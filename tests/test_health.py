"""Liveness, readiness and the index: what load balancers and operators poll."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from frontdesk import __version__
from frontdesk.app import YOUNG_GENERATION_THRESHOLD, create_app
from frontdesk.config import Settings
from tests.conftest import BASE_URL

# Explicit, so that anyio keeps the database_url parametrization.
pytestmark = pytest.mark.anyio

CLOSED_POSTGRES = "postgresql+asyncpg://frontdesk@127.0.0.1:1/frontdesk"


@asynccontextmanager
async def serving(settings: Settings, *, start: bool = True) -> AsyncIterator[httpx.AsyncClient]:
    """An app on these settings; started (migrated) unless the database is meant to be down."""
    app = create_app(settings)
    if start:
        await app.services.start()
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client
    finally:
        await app.services.stop()


async def test_healthz_answers_ok(client: httpx.AsyncClient) -> None:
    """/healthz says the process is alive."""
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_names_the_database_backend(
    make_settings: Callable[..., Settings], database_url: str
) -> None:
    """/readyz answers 200 with the backend it reached."""
    backend = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    async with serving(make_settings(database_url=database_url)) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": backend}


async def test_readyz_is_503_when_the_database_is_unreachable(
    make_settings: Callable[..., Settings],
) -> None:
    """With the database down, /readyz answers 503 so the balancer stops sending traffic."""
    async with serving(make_settings(database_url=CLOSED_POSTGRES), start=False) as client:
        response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "unreachable"}


async def test_healthz_does_not_depend_on_the_database(
    make_settings: Callable[..., Settings],
) -> None:
    """A database outage is not a dead process: /healthz stays 200, so it is not restarted."""
    async with serving(make_settings(database_url=CLOSED_POSTGRES), start=False) as client:
        assert (await client.get("/healthz")).status_code == 200


async def test_the_index_describes_the_service(client: httpx.AsyncClient) -> None:
    """/ names the service, its version, region and the MCP endpoint's shape."""
    response = await client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "service": "frontdesk",
        "version": __version__,
        "region": "eu",
        "mcp_endpoint": f"{BASE_URL}/v1/{{tenantKey}}/mcp",
    }


async def test_the_index_reports_this_instances_region(
    make_settings: Callable[..., Settings],
) -> None:
    """A us instance says so on its index."""
    async with serving(make_settings(region="us")) as client:
        assert (await client.get("/")).json()["region"] == "us"


async def test_a_started_worker_freezes_its_start_up_heap_and_collects_young_objects_less_often(
    client: httpx.AsyncClient,
) -> None:
    """What start-up loaded is out of the collector's reach, and the youngest generation
    waits for YOUNG_GENERATION_THRESHOLD allocations, not CPython's 700."""
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == YOUNG_GENERATION_THRESHOLD
