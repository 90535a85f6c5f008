"""The application factory: builds the services, wires the routes. No logic lives here."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib.resources import files

import structlog
from sqlalchemy.exc import DBAPIError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from frontdesk import __version__
from frontdesk.account.routes import account_routes
from frontdesk.admin_api import admin_routes
from frontdesk.admin_api.guard import AdminContext
from frontdesk.companies.production import stored_problems
from frontdesk.companies.providers import ProviderFactory
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.companies.seed import seed_demo_company
from frontdesk.config import Settings
from frontdesk.console.context import ConsoleServices, McpHandler
from frontdesk.console.site import console_routes
from frontdesk.limits.ratelimit import RateLimiter, parse_rate_limit
from frontdesk.login.connectors import LoginConnectors
from frontdesk.oauth.client_documents import ClientDocuments
from frontdesk.oauth.clients import ClientDirectory
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.errors import AuthorizePage, OAuthError
from frontdesk.oauth.flow import FlowSigner
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.rendering import render_authorize_page, render_oauth_error, render_outage
from frontdesk.oauth.routes import oauth_routes
from frontdesk.oauth.tool_consent import ToolConsent
from frontdesk.observability.log_throttle import outage_warnings
from frontdesk.observability.logs import configure_logging
from frontdesk.observability.metrics import (
    EXPOSITION_CONTENT_TYPE,
    Metrics,
    bearer_matches,
    unauthorized,
)
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.clients import OutboundClients
from frontdesk.protocol.bearer import BearerResolver
from frontdesk.protocol.endpoint import McpEndpoint
from frontdesk.protocol.request_state import RequestStates
from frontdesk.protocol.sessions import SessionSigner
from frontdesk.sealing.company_secrets import SecretsUnreadable, unset_variables
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.admin_keys import AdminKeys
from frontdesk.store.bounds import Timeouts
from frontdesk.store.clients import ClientRepository
from frontdesk.store.companies import CompanyRepository, StoredCompany
from frontdesk.store.connected_clients import ConnectedClients
from frontdesk.store.consents import ConsentRepository
from frontdesk.store.customers import CustomerRepository
from frontdesk.store.database import Database
from frontdesk.store.grant_backends import grant_repository
from frontdesk.store.outage import OUTAGE_TYPES
from frontdesk.store.pool_use import pool_use
from frontdesk.store.purging import PeriodicPurge
from frontdesk.store.signing_keys import SigningKeyRepository
from frontdesk.store.spent_flows import SpentFlowRepository
from frontdesk.tools.identity_tokens import IdentityTokens
from frontdesk.unrouted import render_unrouted
from frontdesk.usage.counters import UsageCounters
from frontdesk.usage.flushing import UsageFlusher
from frontdesk.web.access_log import AccessLog
from frontdesk.web.allowed_methods import one_route_per_path
from frontdesk.web.asgi import Receive, Scope, Send
from frontdesk.web.edge import Edge, request_id_of
from frontdesk.web.network import ClientAddressResolver

log = structlog.get_logger(__name__)

# The longest /readyz takes, below a balancer's usual probe timeout.
READY_SECONDS = 1.5


@dataclass
class Services:
    """Everything a request may need, built once per application."""

    settings: Settings
    database: Database
    companies: CompanyRepository
    registry: CompanyRegistry
    sessions: SessionSigner
    limiter: RateLimiter
    metrics: Metrics
    access_log: AccessLog | None
    clients: ClientDirectory
    customers: CustomerRepository
    grants: Grants
    # Outbound calls: the companies' identity providers, and their tool backends.
    outbound: OutboundClients
    logins: LoginConnectors
    # Each tools/call counted, and written to the hourly rollup (frontdesk.usage).
    usage: UsageFlusher
    # The JWTs a company's APIs receive, and the keys that sign them (its jwks_uri).
    identity: IdentityTokens
    tool_consent: ToolConsent  # the tool versions grants were allowed (issue 33)

    @classmethod
    def build(cls, settings: Settings) -> Services:
        database = Database(
            settings.database_url,
            settings.database_pool_size,
            Timeouts.within(settings.database_timeout_seconds),
        )
        companies = CompanyRepository(database.engine, SecretBox(settings.data_keys))
        # The operator's reviewed backends may be allowed private networks; metadata
        # documents, which anyone can name, are fetched from public addresses only
        # (oauth.client_documents).
        outbound = OutboundClients(
            backend_addresses=AddressPolicy(settings.backend_allowed_networks)
        )
        identity = IdentityTokens(
            SigningKeyRepository(database.engine), SecretBox(settings.data_keys), settings
        )
        providers = ProviderFactory(outbound, identity)
        documents = ClientDocuments(outbound, on_loopback=settings.client_documents_on_loopback)
        tool_consent = ToolConsent(database.engine)
        registry = CompanyRegistry(companies, settings, providers, tool_consent.versions)
        return cls(
            settings=settings,
            database=database,
            companies=companies,
            registry=registry,
            sessions=SessionSigner(settings.secret_keys, settings.session_ttl_seconds),
            limiter=RateLimiter(settings.redis_url),
            # A request's company is a label only when the registry holds it active.
            metrics=Metrics(registry.remembered),
            access_log=(
                AccessLog(settings.log_json, ClientAddressResolver(settings.trusted_proxies))
                if settings.access_log
                else None
            ),
            clients=ClientDirectory(ClientRepository(database.engine), documents),
            customers=CustomerRepository(database.engine),
            grants=Grants(grant_repository(database), SecretBox(settings.data_keys)),
            outbound=outbound,
            logins=LoginConnectors(settings, outbound),
            usage=UsageFlusher(UsageCounters(), database, settings.usage_flush_seconds),
            identity=identity,
            tool_consent=tool_consent,
        )

    async def start(self) -> None:
        if self.settings.auto_migrate:
            await self.database.migrate()
        if self.settings.should_seed_demo:
            await seed_demo_company(self.companies, self.settings.demo_backend_port)
        for stored in await self.companies.all():
            log.info(
                "serving_company",
                tenant=stored.tenant_key,
                mcp_url=self.settings.mcp_url(stored.tenant_key),
            )
            # Served all the same (its other tools, its listings); the call or sign-in that
            # needs the secret logs the error again and is answered plainly.
            for warning in unset_variables(stored.tenant_key, stored.definition):
                log.warning("company_secret_unset", tenant=stored.tenant_key, error=warning)
            if self.settings.is_production:
                # Applied before this instance ran in production: its sign-in is refused
                # at use (login.connectors); the operator hears of it now.
                for problem in _production_problems(self.companies, stored):
                    log.error(
                        "company_unsafe_in_production", tenant=stored.tenant_key, error=problem
                    )
        self.metrics.start(functools.partial(pool_use, self.database))
        self.usage.start()
        _tune_collector()

    async def stop(self) -> None:
        if self.access_log is not None:
            self.access_log.flush()
        self.metrics.stop()
        # The last counts, written while the database is still open.
        await self.usage.stop()
        await self.limiter.close()
        await self.outbound.aclose()
        await self.database.close()


# Net allocations of tracked objects after which the collector looks at the youngest
# generation; CPython's default is 700. A request's objects are freed by reference counting
# as it ends, so a young collection mostly walks requests still in flight, and under load,
# with many in flight (a batch of 20 gathers 20 tasks), it ran often enough to cost a
# worker a good share of its CPU; 20,000 won that back for little memory, and higher gained
# nothing more (docs/decisions/memory.md). Cyclic garbage waits a little longer.
YOUNG_GENERATION_THRESHOLD = 20_000

_collector_tuned = False


def _tune_collector() -> None:
    """Everything loaded by the first start (modules, the schema, compiled checks) lives as
    long as the process: moved out of the collector's reach, a full collection no longer
    walks a few hundred thousand objects that can never be garbage, which showed as
    multi-millisecond pauses in the p99 of a loaded worker. Then the youngest generation is
    collected less often (``YOUNG_GENERATION_THRESHOLD``). Once per process: a frozen
    object that later turned into cyclic garbage would never be collected, and a test
    process starts many apps."""
    global _collector_tuned
    if _collector_tuned:
        return
    _collector_tuned = True
    gc.collect()
    gc.freeze()
    _young, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, older, oldest)


def _production_problems(companies: CompanyRepository, stored: StoredCompany) -> list[str]:
    try:
        return stored_problems(companies.opened(stored))
    except SecretsUnreadable:
        return []  # refused and logged when the company loads (companies.registry)


class Frontdesk(Edge):
    """The ASGI application: the edge every request passes, Starlette's Host check and CORS
    (``edge.protect``, skipped for a request they would pass on untouched), then the MCP
    endpoint on its fast path and everything else via
    Starlette's router. An Edge itself rather than holding one, so that a request enters
    the edge with no call in between."""

    def __init__(self, services: Services) -> None:
        self.services = services
        addresses = ClientAddressResolver(services.settings.trusted_proxies)
        self._mcp = McpEndpoint(
            services.registry,
            services.sessions,
            services.limiter,
            addresses,
            BearerResolver(services.grants, services.settings, services.tool_consent),
            RequestStates(services.settings.secret_keys),
            parse_rate_limit(services.settings.mcp_rate_limit),
            services.usage.counters,
        )
        self._routes = _routes(services, addresses, self._mcp)
        super().__init__(
            self._route,
            services.settings,
            services.metrics,
            services.access_log,
        )

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path.startswith("/v1/") and path.endswith("/mcp"):
                parts = path.split("/")
                if len(parts) == 4:
                    await self._mcp(scope, receive, send, parts[2], request_id_of(scope))
                    return
        # Everything else, and the lifespan: Starlette starts and stops the services.
        await self._routes(scope, receive, send)


def _routes(services: Services, addresses: ClientAddressResolver, mcp: McpHandler) -> Starlette:
    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> Response:
        # Answered within READY_SECONDS whatever the database does: a probe that hangs on
        # a stalled database would keep a balancer guessing instead of routing around it.
        try:
            async with asyncio.timeout(READY_SECONDS):
                await services.database.ping()
        except Exception as error:
            outage_warnings.warning(log, "not_ready", reason=type(error).__name__)
            return JSONResponse({"status": "unavailable", "database": "unreachable"}, 503)
        return JSONResponse({"status": "ok", "database": services.database.backend})

    metrics_token = services.settings.metrics_token

    async def metrics(request: Request) -> Response:
        if metrics_token is not None and not bearer_matches(request, metrics_token):
            return unauthorized()
        return Response(services.metrics.exposition(), media_type=EXPOSITION_CONTENT_TYPE)

    interface = files("frontdesk").joinpath("openapi.yaml").read_bytes()

    async def openapi(_request: Request) -> Response:
        return Response(interface, media_type="application/yaml")

    async def index(_request: Request) -> Response:
        settings = services.settings
        return JSONResponse(
            {
                "service": "frontdesk",
                "version": __version__,
                "region": settings.region.value,
                "mcp_endpoint": f"{settings.base_url}/v1/{{tenantKey}}/mcp",
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await services.start()
        # The retention purge, in the background of serving workers only (frontdesk.store.purging).
        purge = PeriodicPurge.for_database(services.database, services.settings)
        purge.start()
        try:
            yield
        finally:
            await purge.stop()
            await services.stop()

    oauth = OAuthServices(
        settings=services.settings,
        registry=services.registry,
        clients=services.clients,
        customers=services.customers,
        grants=services.grants,
        logins=services.logins,
        limiter=services.limiter,
        addresses=addresses,
        flows=FlowSigner(
            services.settings.secret_keys, SpentFlowRepository(services.database.engine)
        ),
        consents=ConsentRepository(services.database.engine),
        identity=services.identity,
        tool_consent=services.tool_consent,
    )
    routed = Starlette(
        # One route per path, answering OPTIONS and naming all its methods in Allow.
        routes=one_route_per_path(
            [
                # OAuth first: its token endpoint is the busiest route here (oauth.routes).
                *oauth_routes(oauth),
                # The customer's own page (frontdesk.account).
                *account_routes(
                    oauth,
                    ConnectedClients(services.database.engine, services.database.grant_changes),
                ),
                # The companies' console (frontdesk.console).
                *console_routes(
                    ConsoleServices(
                        settings=services.settings,
                        database=services.database,
                        companies=services.companies,
                        registry=services.registry,
                        logins=services.logins,
                        limiter=services.limiter,
                        addresses=addresses,
                        outbound=services.outbound,
                        mcp=mcp,
                    )
                ),
                Route("/", index),
                Route("/healthz", healthz),
                Route("/readyz", readyz),
                Route("/metrics", metrics),
                Route("/openapi.yaml", openapi),
                # Companies managed with a key (frontdesk.admin_api).
                *admin_routes(
                    AdminContext(
                        settings=services.settings,
                        database=services.database,
                        companies=services.companies,
                        keys=AdminKeys(services.database.engine),
                        limiter=services.limiter,
                        limit=parse_rate_limit(services.settings.admin_rate_limit),
                        addresses=addresses,
                        outbound=services.outbound,
                    )
                ),
            ]
        ),
        exception_handlers={
            OAuthError: render_oauth_error,
            AuthorizePage: render_authorize_page,
            # Outages of the database answer 503; render_outage re-raises anything else.
            **dict.fromkeys((*OUTAGE_TYPES, DBAPIError), render_outage),
            # A path no route serves, in its family's error body (frontdesk.unrouted).
            404: render_unrouted,
        },
        lifespan=lifespan,
    )
    # Every path has one spelling: no 307 to the other, whose http:// behind a TLS proxy
    # would have a client resend a token request in clear (frontdesk.unrouted).
    routed.router.redirect_slashes = False
    return routed


def create_app(settings: Settings | None = None) -> Frontdesk:
    settings = settings or Settings()
    configure_logging(settings.log_level, settings.log_json)
    return Frontdesk(Services.build(settings))
