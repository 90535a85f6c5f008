"""Lookup by tenant key: only active companies of this region, through a bounded cache."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from frontdesk.companies import registry as registry_module
from frontdesk.companies.files import apply_companies, parse_companies
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyRepository, StoredCompany
from frontdesk.store.database import Database

# Explicit, so that anyio keeps the database_url parametrization.
pytestmark = pytest.mark.anyio

COMPANIES: list[dict[str, Any]] = [
    {"tenant_key": "acme", "name": "Acme Corp"},
    {"tenant_key": "dormant", "name": "Dormant Ltd", "active": False},
    {"tenant_key": "yankee", "name": "Yankee Inc", "region": "us"},
]


class CountingRepository(CompanyRepository):
    """The real repository, counting the lookups that reach the database."""

    def __init__(self, database: Database) -> None:
        super().__init__(database.engine)
        self.lookups: list[str] = []

    async def get(self, tenant_key: str) -> StoredCompany | None:
        self.lookups.append(tenant_key)
        return await super().get(tenant_key)


class Clock:
    """Stands in for time.monotonic, so cache expiry is tested without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
async def repository(database_url: str) -> AsyncIterator[CountingRepository]:
    database = Database(database_url)
    await database.migrate()
    repository = CountingRepository(database)
    await apply(repository, *COMPANIES)
    try:
        yield repository
    finally:
        await database.close()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(registry_module, "time", clock)
    return clock


async def apply(repository: CompanyRepository, *companies: dict[str, Any]) -> None:
    await apply_companies(repository, parse_companies({"companies": list(companies)}))


def registry_for(
    repository: CompanyRepository, make_settings: Callable[..., Settings], **settings: Any
) -> CompanyRegistry:
    return CompanyRegistry(repository, make_settings(**settings))


async def test_an_active_company_of_this_region_is_served(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    """An active company set up in this instance's region is found by its key."""
    company = await registry_for(repository, make_settings).active("acme")
    assert company is not None
    assert (company.tenant_key, company.name) == ("acme", "Acme Corp")


@pytest.mark.parametrize("tenant_key", ["dormant", "yankee", "nobody"])
async def test_inactive_foreign_and_unknown_companies_are_not_served(
    repository: CountingRepository, make_settings: Callable[..., Settings], tenant_key: str
) -> None:
    """An inactive company, one of another region and a key nobody has all read as None."""
    assert await registry_for(repository, make_settings).active(tenant_key) is None


async def test_an_instance_serves_its_own_regions_companies_only(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    """A us instance serves the us company and not the eu one."""
    registry = registry_for(repository, make_settings, region="us")
    assert await registry.active("acme") is None
    company = await registry.active("yankee")
    assert company is not None
    assert company.name == "Yankee Inc"


NOT_TENANT_KEYS = [
    "",
    "ACME",
    "ac_me",
    "-acme",
    "acme-",
    "a.b",
    "../etc",
    "acme mcp",
    "a" * 64,
    "é",
]


async def test_a_string_that_is_no_tenant_key_is_refused_without_a_query(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    """A value that cannot be a tenant key reads as None and never reaches the database."""
    registry = registry_for(repository, make_settings)
    for tenant_key in NOT_TENANT_KEYS:
        assert await registry.active(tenant_key) is None, tenant_key
    assert repository.lookups == []


async def test_a_found_company_is_served_from_the_cache(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """Within company_cache_seconds a company is read from the database once."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    first = await registry.active("acme")
    clock.now += 29
    assert await registry.active("acme") is first
    assert repository.lookups == ["acme"]


async def test_a_cached_active_company_is_remembered_without_a_coroutine(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """remembered gives the fresh cached company, and None whenever active must be asked."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    assert registry.remembered("acme") is None
    first = await registry.active("acme")
    assert first is not None
    assert registry.remembered("acme") is first
    assert await registry.active("nobody") is None
    assert registry.remembered("nobody") is None
    clock.now += 31
    assert registry.remembered("acme") is None
    assert repository.lookups == ["acme", "nobody"]


async def test_requests_that_find_the_entry_expired_share_one_read(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """When a busy company's entry expires, the requests then in flight make one query."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    first = await registry.active("acme")
    clock.now += 31
    found = await asyncio.gather(*(registry.active("acme") for _ in range(20)))
    assert repository.lookups == ["acme", "acme"]
    assert all(company is first for company in found)


async def test_a_request_that_goes_away_leaves_the_shared_read_to_the_others(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    registry = registry_for(repository, make_settings)
    leaving = asyncio.ensure_future(registry.active("acme"))
    staying = asyncio.ensure_future(registry.active("acme"))
    await asyncio.sleep(0)
    leaving.cancel()
    company = await staying
    assert company is not None
    assert company.tenant_key == "acme"
    assert repository.lookups == ["acme"]


async def test_an_unknown_key_is_cached_too(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """Asking again for a key nobody has costs no second query while cached."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    assert await registry.active("nobody") is None
    assert await registry.active("nobody") is None
    assert repository.lookups == ["nobody"]


async def test_the_cache_of_keys_is_bounded(
    repository: CountingRepository,
    make_settings: Callable[..., Settings],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the bound the oldest key is dropped, so made-up keys cannot grow memory forever."""
    monkeypatch.setattr(registry_module, "MAX_CACHED_KEYS", 2)
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    for key in ("ghost-1", "ghost-2", "ghost-3"):
        await registry.active(key)
    await registry.active("ghost-3")
    await registry.active("ghost-1")
    assert repository.lookups == ["ghost-1", "ghost-2", "ghost-3", "ghost-1"]


async def test_a_change_shows_once_the_cache_time_has_passed(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """An applied change is served after company_cache_seconds, not before."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    assert await registry.active("acme") is not None
    await apply(repository, {"tenant_key": "acme", "name": "Acme Anvils"})
    clock.now += 29
    cached = await registry.active("acme")
    assert cached is not None
    assert cached.name == "Acme Corp"
    clock.now += 2
    fresh = await registry.active("acme")
    assert fresh is not None
    assert fresh.name == "Acme Anvils"


async def test_a_new_company_shows_once_its_negative_entry_expires(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """A key cached as unknown is found once the company exists and the entry expired."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    assert await registry.active("initech") is None
    await apply(repository, {"tenant_key": "initech", "name": "Initech"})
    assert await registry.active("initech") is None
    clock.now += 31
    assert await registry.active("initech") is not None


async def test_with_no_cache_time_changes_show_at_once(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    """company_cache_seconds=0 serves each change on the very next lookup."""
    registry = registry_for(repository, make_settings, company_cache_seconds=0)
    assert await registry.active("acme") is not None
    await apply(repository, {"tenant_key": "acme", "name": "Acme Corp", "active": False})
    assert await registry.active("acme") is None
    await apply(repository, {"tenant_key": "dormant", "name": "Dormant Ltd"})
    assert await registry.active("dormant") is not None
    await apply(repository, {"tenant_key": "dormant", "name": "Dormant Ltd", "region": "us"})
    assert await registry.active("dormant") is None


async def test_forget_drops_the_cache_at_once(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """After forget() the next lookup reads the database again."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    await registry.active("acme")
    await apply(repository, {"tenant_key": "acme", "name": "Acme Anvils"})
    registry.forget()
    company = await registry.active("acme")
    assert company is not None
    assert company.name == "Acme Anvils"


async def test_an_unchanged_company_is_not_loaded_again(
    repository: CountingRepository, make_settings: Callable[..., Settings], clock: Clock
) -> None:
    """When the stored revision is the same, the loaded company is reused after expiry."""
    registry = registry_for(repository, make_settings, company_cache_seconds=30)
    first = await registry.active("acme")
    clock.now += 31
    assert await registry.active("acme") is first
    assert repository.lookups == ["acme", "acme"]


async def test_the_operators_default_rate_limit_applies_when_a_company_sets_none(
    repository: CountingRepository, make_settings: Callable[..., Settings]
) -> None:
    """A company without rate_limit is limited by FRONTDESK_MCP_RATE_LIMIT."""
    registry = registry_for(repository, make_settings, mcp_rate_limit="7/second")
    company = await registry.active("acme")
    assert company is not None
    assert (company.rate_limit.amount, company.rate_limit.seconds) == (7, 1)
