"""Lookup of the company behind a tenant key, with a short in-memory cache.

A company that is inactive, or set up in another region, is "no active company" here:
the caller cannot tell it apart from a key nobody has.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict

import structlog
from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import FROM_STORE, TENANT_KEY_PATTERN, CompanyDefinition
from frontdesk.companies.files import describe
from frontdesk.companies.providers import ProviderFactory
from frontdesk.companies.tool_versions import seen_versions
from frontdesk.config import Settings
from frontdesk.sealing.company_secrets import SecretsUnreadable
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.outage import is_outage
from frontdesk.store.tool_versions import ToolVersionRepository

log = structlog.get_logger(__name__)

# Unknown keys are cached too, so that a flood of made-up keys does not become a flood
# of queries; the bound keeps that cache from growing without limit.
MAX_CACHED_KEYS = 10_000

_TENANT_KEY_MAX = 63
_TENANT_KEY = re.compile(TENANT_KEY_PATTERN)


def looks_like_tenant_key(value: str) -> bool:
    return len(value) <= _TENANT_KEY_MAX and _TENANT_KEY.fullmatch(value) is not None


def _failure_for_one(failure: BaseException) -> Exception:
    """An exception of its own for one request that waited on a failed read: one instance
    raised in many requests would gather all their tracebacks. An outage stays one (a
    ConnectionError, store.outage), so the request is still answered 503."""
    reason = f"the company lookup failed: {type(failure).__name__}"
    if is_outage(failure):
        return ConnectionError(reason)
    return RuntimeError(reason)


class CompanyRegistry:
    def __init__(
        self,
        repository: CompanyRepository,
        settings: Settings,
        providers: ProviderFactory | None = None,
        versions: ToolVersionRepository | None = None,
    ) -> None:
        self._repository = repository
        # Where each tool version served is recorded, once per revision loaded (the
        # version history: companies.tool_versions).
        self._versions = versions
        self._settings = settings
        self._providers = providers
        self._ttl = settings.company_cache_seconds
        self._cache: OrderedDict[str, tuple[float, ServedCompany | None]] = OrderedDict()
        # Loading is costly (providers are imported, schemas compiled): reuse the loaded
        # company while its stored revision has not changed.
        self._loaded: dict[str, tuple[int, ServedCompany]] = {}
        self._loading: dict[str, asyncio.Future[ServedCompany | None]] = {}

    def remembered(self, tenant_key: str) -> ServedCompany | None:
        """The active company, when the cache holds it fresh; None when ``active`` must be
        asked (unknown, inactive, expired). Every request looks its company up and nearly
        always finds it here, so this answer needs no coroutine."""
        cached = self._cache.get(tenant_key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        return None

    def fresh_for(self, tenant_key: str) -> float:
        """Seconds this instance keeps serving the company as it has it now, before it reads
        it again (0 when it holds none): how long its listings are sure to stay as they are."""
        cached = self._cache.get(tenant_key)
        if cached is None:
            return 0.0
        return max(0.0, cached[0] - time.monotonic())

    async def active(self, tenant_key: str) -> ServedCompany | None:
        cached = self._cache.get(tenant_key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        if not looks_like_tenant_key(tenant_key):
            self._remember(tenant_key, None)
            return None
        # One read per key at a time: when the entry of a busy company expires, every
        # request then in flight waits for the same read instead of each making its own.
        loading = self._loading.get(tenant_key)
        if loading is None:
            loading = self._loading[tenant_key] = asyncio.ensure_future(
                self._load_and_remember(tenant_key)
            )
            loading.add_done_callback(lambda done: self._loaded_once(tenant_key, done))
        # Waited for, not awaited: a request that goes away does not cancel the read the
        # others wait for (asyncio.wait cancels nothing), and a failed read's exception,
        # which every waiting request would otherwise raise again, is raised by none of
        # them: each raises one of its own.
        await asyncio.wait((loading,))
        failure = loading.exception()
        if failure is not None:
            raise _failure_for_one(failure) from failure
        return loading.result()

    async def _load_and_remember(self, tenant_key: str) -> ServedCompany | None:
        company = await self._load(tenant_key)
        self._remember(tenant_key, company)
        return company

    def _loaded_once(self, tenant_key: str, done: asyncio.Future[ServedCompany | None]) -> None:
        if self._loading.get(tenant_key) is done:
            del self._loading[tenant_key]
        if not done.cancelled():
            # Read here, so an outage nobody was left waiting for is not reported as an
            # exception never retrieved; those waiting get it from their own await.
            done.exception()

    def _remember(self, tenant_key: str, company: ServedCompany | None) -> None:
        self._cache[tenant_key] = (time.monotonic() + self._ttl, company)
        self._cache.move_to_end(tenant_key)
        while len(self._cache) > MAX_CACHED_KEYS:
            self._cache.popitem(last=False)

    def forget(self) -> None:
        """Drop the cache, so the next lookup reads the database (after an apply in-process)."""
        self._cache.clear()
        self._loading.clear()

    async def _record_versions(self, company: ServedCompany) -> None:
        if self._versions is None:
            return
        served = [tool.definition for tool in company.tools.values()]
        try:
            await self._versions.record(company.tenant_key, seen_versions(served))
        except SQLAlchemyError as error:
            # The history misses a first sighting, which the next consent records; serving
            # does not wait on it.
            log.warning("tool_versions_not_recorded", tenant=company.tenant_key, error=str(error))

    async def _load(self, tenant_key: str) -> ServedCompany | None:
        stored = await self._repository.get(tenant_key)
        if stored is None:
            self._loaded.pop(tenant_key, None)
            return None
        loaded = self._loaded.get(tenant_key)
        if loaded is not None and loaded[0] == stored.revision:
            company = loaded[1]
        else:
            try:
                # Opened here, once per revision: the secrets are in clear only in memory.
                document = self._repository.opened(stored)
                definition = CompanyDefinition.model_validate(document, context=FROM_STORE)
            except SecretsUnreadable as error:
                # A data key retired too soon, or a row copied from another company: the
                # operator is told which company and why, and it is served no secret.
                log.error("company_secrets_unreadable", tenant=tenant_key, error=str(error))
                return None
            except ValidationError as error:
                # Only a hand-edited row can get here; serve nothing rather than half. Each
                # problem by its path and message only: pydantic's own text quotes the
                # input, which can be a secret.
                log.error("company_definition_invalid", tenant=tenant_key, error=describe(error))
                return None
            company = ServedCompany(definition, self._settings.mcp_rate_limit, self._providers)
            self._loaded[tenant_key] = (stored.revision, company)
            await self._record_versions(company)
        definition = company.definition
        if not definition.active or definition.region != self._settings.region:
            return None
        return company
