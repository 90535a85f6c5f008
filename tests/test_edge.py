"""The edge every request crosses: Host check, CORS, request id, metrics and access log."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from frontdesk import edge
from frontdesk.app import create_app
from frontdesk.config import Settings
from frontdesk.edge import route_label
from frontdesk.metrics import Metrics
from frontdesk.observability import REQUEST_ID, configure_logging, iso_timestamp

# Explicit, so that anyio keeps each test's parametrization.
pytestmark = pytest.mark.anyio

PUBLIC_BASE_URL = "https://eu.frontdesk.example"
GENERATED_ID = re.compile(r"^[0-9a-f]{16}$")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "edge-test", "version": "1"},
    },
}
ROUTE_LABELS = {
    "mcp",
    "discovery",
    "other",
    "/",
    "/healthz",
    "/readyz",
    "/metrics",
    *(f"oauth/{route}" for route in edge._OAUTH_ROUTES),
}


@asynccontextmanager
async def serving(settings: Settings, *, start: bool = False) -> AsyncIterator[httpx.AsyncClient]:
    """An app on these settings; unstarted by default, as the edge needs no database."""
    app = create_app(settings)
    if start:
        await app.services.start()
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=settings.base_url) as client:
            yield client
    finally:
        await app.services.stop()


def listed(value: str) -> set[str]:
    """A comma-separated header value, as a set of lower-case items."""
    return {item.strip().lower() for item in value.split(",")}


# Host (DNS-rebinding protection)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/acme/mcp"),
        ("GET", "/healthz"),
        ("GET", "/"),
        ("GET", "/.well-known/oauth-protected-resource/v1/acme/mcp"),
        ("GET", "/no/such/path"),
    ],
)
async def test_a_foreign_host_is_misdirected(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    """A Host that is not the base URL's gets 421, on the MCP path and everywhere else."""
    response = await client.request(
        method, path, json=INITIALIZE, headers={"Host": "attacker.example"}
    )
    assert response.status_code == 421
    assert response.json()["error"] == "misdirected_request"
    assert "mcp-session-id" not in response.headers


async def test_the_base_urls_own_host_is_served(client: httpx.AsyncClient) -> None:
    """The MCP endpoint answers when the Host is the base URL's host and port."""
    response = await client.post(
        "/v1/acme/mcp", json=INITIALIZE, headers={"Host": "127.0.0.1:8000"}
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "host", ["localhost:8000", "LOCALHOST", "127.0.0.1", "[::1]:8000", "[::1]"]
)
async def test_a_loopback_base_url_accepts_every_loopback_name(
    client: httpx.AsyncClient, host: str
) -> None:
    """On a loopback base URL, localhost, 127.0.0.1 and [::1] are the same server."""
    response = await client.post("/v1/acme/mcp", json=INITIALIZE, headers={"Host": host})
    assert response.status_code == 200


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:8000", "[::1]", "frontdesk.example"])
async def test_a_public_base_url_refuses_loopback_and_lookalike_hosts(
    make_settings: Callable[..., Settings], host: str
) -> None:
    """Behind a public name, loopback aliases are refused like any other foreign host."""
    async with serving(make_settings(base_url=PUBLIC_BASE_URL)) as client:
        assert (await client.get("/healthz", headers={"Host": host})).status_code == 421
        assert (await client.get("/healthz")).status_code == 200


async def test_allowed_hosts_from_the_environment_are_served_too(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FRONTDESK_ALLOWED_HOSTS adds names to the base URL's host, and only those."""
    monkeypatch.setenv("FRONTDESK_ALLOWED_HOSTS", "api.example.com, Internal.Example")
    async with serving(make_settings(base_url=PUBLIC_BASE_URL)) as client:
        for host in ("eu.frontdesk.example", "api.example.com:443", "internal.example"):
            assert (await client.get("/healthz", headers={"Host": host})).status_code == 200
        assert (await client.get("/healthz", headers={"Host": "other.example"})).status_code == 421


async def test_an_ipv6_base_url_is_served_under_its_bracketed_host(
    make_settings: Callable[..., Settings],
) -> None:
    """A base URL on an IPv6 literal accepts the bracketed Host clients send."""
    async with serving(make_settings(base_url="https://[2001:db8::1]:8443")) as client:
        response = await client.get("/healthz", headers={"Host": "[2001:db8::1]:8443"})
    assert response.status_code == 200


# CORS


async def test_an_origin_gets_cors_headers_exposing_auth_and_session(
    client: httpx.AsyncClient,
) -> None:
    """A browser client may read WWW-Authenticate and Mcp-Session-Id from MCP responses."""
    response = await client.post(
        "/v1/acme/mcp", json=INITIALIZE, headers={"Origin": "https://inspector.example"}
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    exposed = listed(response.headers["access-control-expose-headers"])
    assert {"www-authenticate", "mcp-session-id"} <= exposed
    assert "mcp-session-id" in response.headers


async def test_a_request_without_origin_gets_no_cors_headers(client: httpx.AsyncClient) -> None:
    """CORS headers answer browsers; other clients are not sent them."""
    response = await client.get("/healthz")
    assert "access-control-allow-origin" not in response.headers


async def test_a_preflight_is_answered_with_204(client: httpx.AsyncClient) -> None:
    """OPTIONS from a browser answers 204 allowing the MCP methods and the asked headers."""
    response = await client.options(
        "/v1/acme/mcp",
        headers={
            "Origin": "https://inspector.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id",
        },
    )
    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["access-control-allow-origin"] == "*"
    assert {"post", "delete", "get"} <= listed(response.headers["access-control-allow-methods"])
    assert listed(response.headers["access-control-allow-headers"]) == {
        "authorization",
        "content-type",
        "mcp-session-id",
    }


async def test_a_preflight_without_asked_headers_allows_the_mcp_ones(
    client: httpx.AsyncClient,
) -> None:
    """With no headers asked for, the preflight allows every header an MCP client sends."""
    response = await client.options(
        "/v1/acme/mcp",
        headers={"Origin": "https://inspector.example", "Access-Control-Request-Method": "POST"},
    )
    assert response.status_code == 204
    allowed = listed(response.headers["access-control-allow-headers"])
    assert {"authorization", "content-type", "mcp-session-id", "mcp-protocol-version"} <= allowed


async def test_restricted_origins_are_echoed_and_vary(
    make_settings: Callable[..., Settings],
) -> None:
    """A listed origin is echoed back (not *), with Vary: Origin for caches."""
    settings = make_settings(cors_origins=["https://app.example"])
    async with serving(settings) as client:
        response = await client.get("/healthz", headers={"Origin": "https://app.example"})
        preflight = await client.options(
            "/v1/acme/mcp",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
        )
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    assert "origin" in listed(response.headers["vary"])
    assert preflight.status_code == 204


async def test_an_unlisted_origin_gets_no_cors_and_a_refused_preflight(
    make_settings: Callable[..., Settings],
) -> None:
    """With cors_origins restricted, other origins get no CORS headers and preflight 403."""
    settings = make_settings(cors_origins=["https://app.example"])
    async with serving(settings) as client:
        response = await client.get("/healthz", headers={"Origin": "https://evil.example"})
        preflight = await client.options(
            "/v1/acme/mcp",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
    assert response.status_code == 200
    assert not any(name.startswith("access-control-") for name in response.headers)
    assert preflight.status_code == 403
    assert not any(name.startswith("access-control-") for name in preflight.headers)


# Request id


async def test_a_request_id_is_generated_when_none_is_sent(client: httpx.AsyncClient) -> None:
    """Each response carries a fresh X-Request-Id when the caller sent none."""
    first = (await client.get("/healthz")).headers["x-request-id"]
    second = (await client.get("/healthz")).headers["x-request-id"]
    assert GENERATED_ID.match(first)
    assert GENERATED_ID.match(second)
    assert first != second


@pytest.mark.parametrize("request_id", ["abc", "req-42.eu:7", "A" * 128])
async def test_a_safe_request_id_is_echoed(client: httpx.AsyncClient, request_id: str) -> None:
    """A short, plain X-Request-Id from a proxy is kept, so logs join up across hops."""
    response = await client.get("/healthz", headers={"X-Request-Id": request_id})
    assert response.headers["x-request-id"] == request_id


@pytest.mark.parametrize(
    "request_id",
    ["has spaces", "x" * 500, "A" * 129, "abc\n", "a;b", "<script>", "id\tx", "ünïcode"],
)
async def test_an_unsafe_request_id_is_replaced(client: httpx.AsyncClient, request_id: str) -> None:
    """An X-Request-Id that is long or has unsafe characters is replaced, never echoed."""
    response = await client.get("/healthz", headers=[(b"X-Request-Id", request_id.encode())])
    assert GENERATED_ID.match(response.headers["x-request-id"])


async def test_a_refused_host_still_gets_a_request_id(client: httpx.AsyncClient) -> None:
    """A 421 carries X-Request-Id too, so even refusals can be traced."""
    response = await client.get(
        "/healthz", headers={"Host": "attacker.example", "X-Request-Id": "trace-1"}
    )
    assert response.status_code == 421
    assert response.headers["x-request-id"] == "trace-1"


# Metrics


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/v1/acme/mcp", "mcp"),
        ("/v1/some-secret-tenant/mcp", "mcp"),
        ("/v1/acme/oauth/token", "oauth/token"),
        ("/v1/acme/oauth/authorize", "oauth/authorize"),
        ("/v1/acme/oauth/register", "oauth/register"),
        ("/v1/acme/oauth/acme", "other"),
        ("/v1/acme/oauth/token/extra", "other"),
        ("/v1/acme/mcp/acme", "other"),
        ("/v1/acme", "other"),
        ("/.well-known/oauth-protected-resource/v1/acme/mcp", "discovery"),
        ("/.well-known/oauth-authorization-server/v1/acme/oauth", "discovery"),
        ("/v1/acme/oauth/.well-known/openid-configuration", "other"),
        ("/healthz", "/healthz"),
        ("/readyz", "/readyz"),
        ("/metrics", "/metrics"),
        ("/", "/"),
        ("/acme", "other"),
        ("/wp-admin/setup.php", "other"),
    ],
)
def test_route_labels_name_the_route_not_the_path(path: str, label: str) -> None:
    """Metrics are labelled by route shape, never by tenant key or raw path."""
    assert route_label(path) == label


@given(st.text())
def test_every_path_maps_to_one_of_a_few_labels(suffix: str) -> None:
    """Whatever the path, the label comes from a small fixed set (bounded cardinality)."""
    for path in (f"/{suffix}", f"/v1/{suffix}", f"/v1/{suffix}/mcp", f"/v1/x/oauth/{suffix}"):
        assert route_label(path) in ROUTE_LABELS


async def test_metrics_count_requests_by_route_and_status(client: httpx.AsyncClient) -> None:
    """/metrics exposes frontdesk_http_requests_total once a request was answered."""
    await client.get("/healthz")
    await client.get("/healthz", headers={"Host": "attacker.example"})
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert 'frontdesk_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in (
        response.text
    )
    assert 'route="/healthz",status="421"} 1.0' in response.text
    assert "frontdesk_http_request_duration_seconds_bucket" in response.text


async def test_a_method_http_does_not_define_is_counted_as_other(
    client: httpx.AsyncClient,
) -> None:
    """A client cannot add metric series by inventing methods: they all count as "other"."""
    for invented in ("BREW", "PROPFIND", "X-ANYTHING"):
        await client.request(invented, "/healthz")
    response = await client.get("/metrics")
    assert 'method="other",route="/healthz"' in response.text
    assert "BREW" not in response.text and "PROPFIND" not in response.text


def test_the_metrics_read_back_as_prometheus_reads_them() -> None:
    """The exposition parses as Prometheus reads it, with the families' names and labels
    unchanged (dashboards query them): counter totals, cumulative buckets ending in +Inf,
    count and sum, escaped label values, and no ``_created`` series."""
    metrics = Metrics()
    metrics.record("mcp", "POST", 200, 0.0004)
    metrics.record("mcp", "POST", 200, 0.003)
    metrics.record("mcp", "POST", 429, 20.0)
    metrics.record("other", 'odd"\\method\n', 404, 0.05)
    families = {
        family.name: family for family in text_string_to_metric_families(metrics.exposition())
    }
    assert set(families) == {"frontdesk_http_requests", "frontdesk_http_request_duration_seconds"}
    counts = {
        (sample.labels["route"], sample.labels["method"], sample.labels["status"]): sample.value
        for sample in families["frontdesk_http_requests"].samples
    }
    assert counts == {
        ("mcp", "POST", "200"): 2.0,
        ("mcp", "POST", "429"): 1.0,
        ("other", 'odd"\\method\n', "404"): 1.0,
    }
    histogram = families["frontdesk_http_request_duration_seconds"]
    assert histogram.type == "histogram"
    mcp = [sample for sample in histogram.samples if sample.labels["route"] == "mcp"]
    buckets = {s.labels["le"]: s.value for s in mcp if s.name.endswith("_bucket")}
    assert buckets["0.001"] == 1.0
    assert buckets["0.005"] == 2.0
    assert buckets["10.0"] == 2.0
    assert buckets["+Inf"] == 3.0
    assert list(buckets.values()) == sorted(buckets.values())
    totals = {s.name: s.value for s in mcp if not s.name.endswith("_bucket")}
    assert totals["frontdesk_http_request_duration_seconds_count"] == 3.0
    assert totals["frontdesk_http_request_duration_seconds_sum"] == pytest.approx(20.0034)


def test_applications_in_one_process_keep_their_own_counts() -> None:
    """Without the workers' shared directory (tests, an embedding application), each
    application counts only its own requests."""
    first, second = Metrics(), Metrics()
    first.record("/healthz", "GET", 200, 0.001)
    first.record("/healthz", "GET", 200, 0.001)
    second.record("/healthz", "GET", 200, 0.001)

    def healthz_count(metrics: Metrics) -> float:
        [family] = [
            family
            for family in text_string_to_metric_families(metrics.exposition())
            if family.name == "frontdesk_http_requests"
        ]
        [sample] = family.samples
        return sample.value

    assert (healthz_count(first), healthz_count(second)) == (2.0, 1.0)


async def test_metrics_never_carry_a_tenant_key_or_a_path(client: httpx.AsyncClient) -> None:
    """MCP calls for any tenant, and probes of odd paths, leave no key or path in /metrics."""
    await client.post("/v1/acme/mcp", json=INITIALIZE)
    await client.post("/v1/secret-tenant-42/mcp", json=INITIALIZE)
    await client.get("/probe-for-admin-panel")
    text = (await client.get("/metrics")).text
    assert 'route="mcp",status="200"' in text
    assert 'route="mcp",status="404"' in text
    for leaked in ("acme", "secret-tenant-42", "probe-for-admin-panel"):
        assert leaked not in text


# Access log


def access_lines(stderr: str) -> list[dict[str, Any]]:
    entries = [orjson.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [entry for entry in entries if entry.get("event") == "request"]


async def test_the_access_log_never_holds_the_query_string(
    make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]
) -> None:
    """A logged request has its path only: codes and state in the query never reach logs."""
    async with serving(make_settings(access_log=True), start=True) as client:
        response = await client.get(
            "/v1/acme/oauth/callback?code=SECRET-CODE&state=opaque-state",
            headers={"X-Request-Id": "trace-7"},
        )
    [line] = access_lines(capsys.readouterr().err)
    assert "SECRET-CODE" not in orjson.dumps(line).decode()
    assert "opaque-state" not in orjson.dumps(line).decode()
    assert line["path"] == "/v1/acme/oauth/callback"
    assert line["status"] == response.status_code
    assert line["method"] == "GET"
    assert line["request_id"] == "trace-7"


async def test_the_access_log_can_be_turned_off(
    make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]
) -> None:
    """With access_log off, answering a request writes no access line."""
    async with serving(make_settings(access_log=False)) as client:
        await client.get("/healthz")
    assert access_lines(capsys.readouterr().err) == []


async def test_the_request_id_is_unbound_after_the_request(client: httpx.AsyncClient) -> None:
    """One request's id does not leak into logs written after it."""
    await client.get("/healthz", headers={"X-Request-Id": "trace-9"})
    assert REQUEST_ID.get() is None


def test_a_line_logged_while_a_request_is_answered_carries_its_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every log line written during a request names it; lines written after do not."""
    configure_logging("INFO", json=True)
    logger = structlog.get_logger("frontdesk.test")
    bound = REQUEST_ID.set("trace-11")
    try:
        logger.info("inside")
    finally:
        REQUEST_ID.reset(bound)
    logger.info("outside")
    lines = [orjson.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["event"], line.get("request_id")) for line in lines] == [
        ("inside", "trace-11"),
        ("outside", None),
    ]


def test_a_logged_line_is_stamped_in_utc_to_the_microsecond(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same stamp as the access log's lines, and as structlog's ISO time stamper."""
    configure_logging("INFO", json=True)
    logger = structlog.get_logger("frontdesk.test")
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.125)
    logger.info("stamped")
    (line,) = [orjson.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert line["timestamp"] == "2023-11-14T22:13:20.125000Z"


def test_timestamps_are_right_across_seconds_and_back() -> None:
    """The text kept for the last second formatted is never reused for another. (Times a
    float holds exactly: datetime rounds to the microsecond, the stamp truncates.)"""
    for now in (1_700_000_000.5, 1_700_000_001.25, 1_699_999_999.0, 1_700_000_000.0625):
        expected = datetime.fromtimestamp(now, UTC).isoformat(timespec="microseconds")
        assert iso_timestamp(now) == expected.replace("+00:00", "Z")
