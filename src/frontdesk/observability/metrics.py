"""The Prometheus metrics: every family Frontdesk exposes at /metrics, defined in one place.

Kept by ``prometheus_client``. Under ``frontdesk serve`` each worker is a process of its
own, and a scrape reaches whichever worker the kernel hands the connection to: figures
kept in that worker's memory would read as that worker's share (the issue's "11, 11, 21").
So the server (http_server.py) gives its workers a directory of their own in
``PROMETHEUS_MULTIPROC_DIR``, where ``prometheus_client``'s multiprocess mode keeps every
worker's figures in a memory-mapped file, and /metrics adds all the files up: every
worker answers with the same totals, and a worker that exits or is respawned leaves its
counts in them. Without that variable (an application built in a test, or embedded), each
application keeps its figures in a registry of its own, so that several applications in
one process never share counters. The families every request records are the exception:
kept in memory and shared in batches (request_figures.py), as a write per update cost more
than the rest of the edge.

The edge records every request (``record``). Events deeper down (a sign-in, a token, a
backend call, a refusal) are recorded where they happen through this module's functions,
which reach the application's ``Metrics`` through a context variable the edge sets for each
request: nothing has to be handed down, and two applications in one process (tests) each
count their own. Outside a request they record nothing.

Labels are bounded (each label set is a file's worth of entries under every worker): a
company is named only once the registry found it active (``COMPANY_UNKNOWN`` otherwise, so
no caller can add series with made-up tenant keys), a tool only when the company serves
it, and reasons, outcomes, kinds and causes come from fixed sets in the code.

A family is added as one more attribute of ``Metrics`` (a Counter or a Histogram; a Gauge
under several workers needs a ``multiprocess_mode``), with a method that records it.
"""

from __future__ import annotations

import asyncio
import hmac
import os
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Literal

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.observability.request_figures import FLUSH_SECONDS, Family, RequestFigures

# Where prometheus_client's multiprocess mode keeps the workers' files: it reads this
# variable when it is first imported, so it must be set before a worker starts.
MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

# Prometheus's text exposition format, version 0.0.4, as generate_latest writes it. Named
# in full: Prometheus 3 refuses a scrape whose format it cannot tell, and the library's
# CONTENT_TYPE_LATEST names version 1.0.0 in its recent releases.
EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Request durations, in seconds: from a cached health check to a slow backend call.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
# Backend calls: a tool's time limit is at most 60 seconds (companies.definition).
BACKEND_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# The company label of a request whose tenant key names no active company.
COMPANY_UNKNOWN = "unknown"

# The fixed label values of the deeper events.
SigninFailure = Literal["denied", "login_failed", "provider_unavailable"]
BACKEND_OUTCOMES = frozenset({"ok", "error", "timeout", "refused", "unavailable"})
OUTAGE_CAUSES = ("database", "client_document")
OutageCause = Literal["database", "client_document"]
GRANT_TYPES = frozenset({"authorization_code", "refresh_token", "jwt-bearer"})  # ID-JAG
# The limits' own names (oauth.context's, protocol.endpoint's); any other counts as "other".
LIMIT_KINDS = frozenset(
    {
        *("mcp", "company-lookup", "token", "token-client", "callback", "register"),
        *("authorize", "revoke", "revoke-client", "account", "client-document"),
    }
)

# How often each worker reads how many database connections it has lent out.
POOL_SAMPLE_SECONDS = FLUSH_SECONDS
# A pool's name, and how many connections it has lent out.
PoolReading = tuple[str, int]

# No ``_created`` series (each label set's creation time): the multiprocess collector
# cannot add them up across workers, and the exposition would differ with the mode.
disable_created_metrics()  # type: ignore[no-untyped-call]  # (the library's own annotations)

# The application whose request is being served (set by the edge, ``Metrics.entered``).
_CURRENT: ContextVar[Metrics | None] = ContextVar("frontdesk_metrics", default=None)

# Whether a tenant key names an active company right now (the registry's cache).
KnownCompany = Callable[[str], object | None]


class Metrics:
    """The families, and where /metrics reads them from. One per application."""

    def __init__(self, known_company: KnownCompany | None = None) -> None:
        own = CollectorRegistry(auto_describe=False)
        self._known_company = known_company
        # The families every request records: kept in memory, shared in batches
        # (request_figures.py), not written through to a file at each update.
        self.http_requests = Family(
            "frontdesk_http_requests",
            "HTTP requests answered, by route and status.",
            ("method", "route", "status"),
            None,
        )
        self.http_request_duration = Family(
            "frontdesk_http_request_duration_seconds",
            "Time to answer an HTTP request, by route.",
            ("route",),
            BUCKETS,
        )
        # One histogram holds both the requests and their latency by company: its _count is
        # the requests by status.
        self.company_request_duration = Family(
            "frontdesk_company_request_duration_seconds",
            "Time to answer a request to a company's endpoints (/v1/{tenantKey}/...), by"
            ' company, route and status; "unknown" for a tenant key of no active company.',
            ("company", "route", "status"),
            BUCKETS,
        )
        self.signins_started = Counter(
            "frontdesk_signins_started",
            "Sign-ins begun: authorize requests accepted (consent asked or remembered).",
            ("company",),
            registry=own,
        )
        self.signins_completed = Counter(
            "frontdesk_signins_completed",
            "Sign-ins that ended with a code sent to the client, by company.",
            ("company",),
            registry=own,
        )
        self.signins_failed = Counter(
            "frontdesk_signins_failed",
            "Sign-ins that ended with an error sent to the client, by company and reason.",
            ("company", "reason"),
            registry=own,
        )
        self.tokens_issued = Counter(
            "frontdesk_tokens_issued",
            "Token pairs issued at the token endpoint, by company and grant type"
            ' (grant_type="refresh_token": refreshes).',
            ("company", "grant_type"),
            registry=own,
        )
        self.tokens_revoked = Counter(
            "frontdesk_tokens_revoked",
            "Revocation requests accepted (RFC 7009), by company.",
            ("company",),
            registry=own,
        )
        self.refresh_token_reuse = Counter(
            "frontdesk_refresh_token_reuse_detected",
            "Spent refresh tokens presented again, each ending its token family, by company.",
            ("company",),
            registry=own,
        )
        self.backend_calls = Family(
            "frontdesk_backend_calls",
            "Tool calls made to a provider, by company, tool and outcome.",
            ("company", "tool", "outcome"),
            None,
        )
        self.backend_call_duration = Family(
            "frontdesk_backend_call_duration_seconds",
            "Time a tool's provider took to answer, by company and tool.",
            ("company", "tool"),
            BACKEND_BUCKETS,
        )
        self.rate_limited = Counter(
            "frontdesk_rate_limited",
            "Requests refused by a rate limit (429), by the limit's kind and company"
            ' ("unknown" for a tenant key of no active company).',
            ("kind", "company"),
            registry=own,
        )
        self.outage_answers = Counter(
            "frontdesk_outage_answers",
            "Answers of 503 because something Frontdesk depends on is unavailable, by cause.",
            ("cause",),
            registry=own,
        )
        # Each worker's own figure, added up over the workers alive (livesum).
        self.pool_in_use = Gauge(
            "frontdesk_database_connections_in_use",
            "Database connections lent out of a pool, over every live worker.",
            ("pool",),
            multiprocess_mode="livesum",
            registry=own,
        )
        self._shared_dir = os.environ.get(MULTIPROCESS_DIR_VARIABLE) or None
        self.figures = RequestFigures(
            (
                self.http_requests,
                self.http_request_duration,
                self.company_request_duration,
                self.backend_calls,
                self.backend_call_duration,
            ),
            self._shared_dir,
        )
        self._exposed = (
            _recorded(own) if self._shared_dir is None else _every_worker(self._shared_dir)
        )
        self._exposed.register(self.figures)
        self._sampler: asyncio.Task[None] | None = None

    def entered(self) -> object:
        """This application serves the current request: the deeper events record here.
        Returns the token ``left`` takes."""
        return _CURRENT.set(self)

    @staticmethod
    def left(token: object) -> None:
        _CURRENT.reset(token)  # type: ignore[arg-type]

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        self.http_requests.inc((method, route, str(status)))
        self.http_request_duration.observe((route,), seconds)

    def company_label(self, tenant_key: str) -> str:
        """The tenant key of an active company, else ``COMPANY_UNKNOWN`` (no made-up keys)."""
        known = self._known_company
        active = known is not None and known(tenant_key) is not None
        return tenant_key if active else COMPANY_UNKNOWN

    def record_company(self, tenant_key: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request to a company's endpoints."""
        company = self.company_label(tenant_key)
        self.company_request_duration.observe((company, route, str(status)), seconds)

    def record_backend_call(
        self, company: str, tool: str, outcome: str, seconds: float | None
    ) -> None:
        if outcome not in BACKEND_OUTCOMES:
            outcome = "error"
        self.backend_calls.inc((company, tool, outcome))
        if seconds is not None:
            self.backend_call_duration.observe((company, tool), seconds)

    def start(self, read_pools: Callable[[], Iterable[PoolReading]]) -> None:
        """The application starts serving. The families whose labels are a fixed set start
        at zero, so that a rate or an alert over them has a series before the first event
        (an outage may never come); the pool gauges are set from ``read_pools`` now and
        every POOL_SAMPLE_SECONDS: a reading costs nothing on a statement's path, where
        counting each borrow and return would."""
        for cause in OUTAGE_CAUSES:
            self.outage_answers.labels(cause)
        for kind in LIMIT_KINDS:
            self.rate_limited.labels(kind, COMPANY_UNKNOWN)
        self._sample(read_pools)
        if self._sampler is None:
            self._sampler = asyncio.create_task(self._sample_every(read_pools))

    async def _sample_every(self, read: Callable[[], Iterable[PoolReading]]) -> None:
        while True:
            await asyncio.sleep(POOL_SAMPLE_SECONDS)
            self._sample(read)

    def _sample(self, read: Callable[[], Iterable[PoolReading]]) -> None:
        # The request figures' batch, on the same beat (request_figures.FLUSH_SECONDS).
        self.figures.flush()
        for pool, in_use in read():
            self.pool_in_use.labels(pool).set(in_use)

    def exposition(self) -> str:
        """Every figure, of every worker, in Prometheus's text exposition format."""
        return generate_latest(self._exposed).decode()

    def stop(self) -> None:
        """This worker is stopping: its files' live gauges (the pools') stop counting.

        Its counters and histograms stay in the totals, as the counts they are."""
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.cancel()
        self.figures.flush()
        if self._shared_dir is not None:
            mark_process_dead(os.getpid(), self._shared_dir)  # type: ignore[no-untyped-call]


# The deeper events, recorded where they happen; each a no-op outside a request.


def signin_started(company: str) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.signins_started.labels(company).inc()


def signin_completed(company: str) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.signins_completed.labels(company).inc()


def signin_failed(company: str, reason: SigninFailure) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.signins_failed.labels(company, reason).inc()


def tokens_issued(company: str, grant_type: str) -> None:
    """A token pair issued for ``grant_type`` (the token endpoint accepts only GRANT_TYPES)."""
    if (metrics := _CURRENT.get()) is not None:
        grant = grant_type if grant_type in GRANT_TYPES else "other"
        metrics.tokens_issued.labels(company, grant).inc()


def token_revoked(company: str) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.tokens_revoked.labels(company).inc()


def refresh_token_reused(company: str) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.refresh_token_reuse.labels(company).inc()


def backend_call(company: str, tool: str, outcome: str, seconds: float | None = None) -> None:
    """One call of ``tool`` (a tool the company serves): its outcome, and how long the
    provider took when it was called (None when the call never reached it)."""
    if (metrics := _CURRENT.get()) is not None:
        metrics.record_backend_call(company, tool, outcome, seconds)


def rate_limited(kind: str, tenant_key: str) -> None:
    """A request to ``tenant_key``'s endpoints refused by the limit ``kind`` (per company,
    so one company flooded reads differently on the dashboard from all at once)."""
    if (metrics := _CURRENT.get()) is not None:
        kind = kind if kind in LIMIT_KINDS else "other"
        metrics.rate_limited.labels(kind, metrics.company_label(tenant_key)).inc()


def outage_answered(cause: OutageCause) -> None:
    if (metrics := _CURRENT.get()) is not None:
        metrics.outage_answers.labels(cause).inc()


def bearer_matches(request: Request, token: str) -> bool:
    """Whether the request bears ``token`` (RFC 6750 section 2.1), compared in constant
    time so that the answer's timing tells nothing of how much of a guess was right."""
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(presented.strip().encode(), token.encode())


def unauthorized() -> Response:
    """/metrics without the token FRONTDESK_METRICS_TOKEN names (RFC 6750 section 3)."""
    return Response(
        "metrics need the bearer token FRONTDESK_METRICS_TOKEN names\n",
        status_code=401,
        media_type="text/plain",
        headers={"www-authenticate": 'Bearer realm="frontdesk-metrics"'},
    )


class _Recorded:
    """A registry's families that hold samples. The multiprocess collector reads only what
    was recorded (a family nothing has recorded has no entries in the files), so without
    this the exposition would differ with the mode: a dozen empty families."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return [family for family in self._registry.collect() if family.samples]


def _recorded(registry: CollectorRegistry) -> CollectorRegistry:
    exposed = CollectorRegistry(auto_describe=False)
    exposed.register(_Recorded(registry))
    return exposed


def _every_worker(shared_dir: str) -> CollectorRegistry:
    """A registry that reads every worker's files when collected."""
    registry = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(registry, shared_dir)  # type: ignore[no-untyped-call]
    return registry
