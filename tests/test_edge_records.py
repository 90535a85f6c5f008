"""What the edge records of every request, refused ones included: metrics and the access
log."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.observability.logs import REQUEST_ID, configure_logging, iso_timestamp
from frontdesk.observability.metrics import Metrics
from frontdesk.web import edge
from frontdesk.web.edge import route_label
from tests.support.edge import INITIALIZE, call_asgi, serving

# Explicit, so that anyio keeps each test's parametrization.
pytestmark = pytest.mark.anyio

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


async def test_metrics_count_requests_by_route_and_status(
    make_settings: Callable[..., Settings],
) -> None:
    """/metrics exposes frontdesk_http_requests_total once a request was answered, refused
    ones included."""
    async with serving(make_settings(cors_origins=["https://app.example"])) as client:
        await client.get("/healthz")
        await client.get("/healthz", headers={"Host": "attacker.example"})
        await client.get("/healthz", headers=[(b"host", b"127.0.0.1"), (b"host", b"x")])
        await client.post("/v1/acme/mcp", json=INITIALIZE, headers={"Origin": "https://x.example"})
        await client.options(
            "/v1/acme/mcp",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
        )
        response = await client.get("/metrics")
    assert response.status_code == 200
    assert 'frontdesk_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in (
        response.text
    )
    assert 'method="GET",route="/healthz",status="400"} 2.0' in response.text
    assert 'method="POST",route="mcp",status="403"} 1.0' in response.text
    assert 'method="OPTIONS",route="mcp",status="200"} 1.0' in response.text
    assert "frontdesk_http_request_duration_seconds_bucket" in response.text


async def test_a_client_gone_before_its_answer_is_counted_as_499(app: Frontdesk) -> None:
    """A request the client abandoned before any answer counts as 499 (as nginx logs it),
    not as a failure of the server."""
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    answered = await call_asgi(app, "POST", "/v1/acme/mcp", headers, disconnect=True)
    assert answered.status is None
    assert 'method="POST",route="mcp",status="499"} 1.0' in app.services.metrics.exposition()


async def test_a_method_http_does_not_define_is_counted_as_other(
    client: httpx.AsyncClient,
) -> None:
    """A client cannot add metric series by inventing methods: they all count as "other"."""
    for invented in ("BREW", "PROPFIND", "X-ANYTHING"):
        await client.request(invented, "/healthz")
    response = await client.get("/metrics")
    assert 'method="other",route="/healthz"' in response.text
    assert "BREW" not in response.text
    assert "PROPFIND" not in response.text


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
    """MCP calls for any tenant, and probes of odd paths, leave no path in /metrics, and no
    tenant key but an active company's, as its company label (metrics.py)."""
    await client.post("/v1/acme/mcp", json=INITIALIZE)
    await client.post("/v1/secret-tenant-42/mcp", json=INITIALIZE)
    await client.get("/probe-for-admin-panel")
    text = (await client.get("/metrics")).text
    assert 'route="mcp",status="200"' in text
    assert 'route="mcp",status="404"' in text
    assert 'company="acme",route="mcp",status="200"' in text
    assert 'company="unknown",route="mcp",status="404"' in text
    assert text.count("acme") == text.count('company="acme"')
    for leaked in ("secret-tenant-42", "probe-for-admin-panel"):
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


async def test_the_access_log_names_the_client_as_the_trusted_proxies_tell_it(
    make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]
) -> None:
    """Behind a trusted proxy the line names the address it forwarded; from any other peer,
    or when the forwarded value is no address (a token, a query), the peer itself: never
    the header's text."""
    # httpx's ASGI transport connects from 127.0.0.1.
    settings = make_settings(access_log=True, trusted_proxies=["127.0.0.1/32"])
    async with serving(settings) as client:
        await client.get("/healthz", headers={"X-Forwarded-For": "198.51.100.23, 127.0.0.1"})
        await client.get("/healthz", headers={"X-Forwarded-For": "fdat_SECRET?code=SECRET"})
    untrusting = make_settings(access_log=True)
    async with serving(untrusting) as client:
        await client.get("/healthz", headers={"X-Forwarded-For": "198.51.100.23"})
    stderr = capsys.readouterr().err
    assert [line["client"] for line in access_lines(stderr)] == [
        "198.51.100.23",
        "127.0.0.1",
        "127.0.0.1",
    ]
    assert "SECRET" not in stderr


async def test_refused_requests_are_in_the_access_log(
    make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused Host or Origin is logged like any request, with its status and id."""
    settings = make_settings(access_log=True, cors_origins=["https://app.example"])
    async with serving(settings) as client:
        await client.get("/healthz", headers={"Host": "attacker.example", "X-Request-Id": "t-1"})
        await client.post(
            "/v1/acme/mcp",
            json=INITIALIZE,
            headers={"Origin": "https://evil.example", "X-Request-Id": "t-2"},
        )
    lines = access_lines(capsys.readouterr().err)
    assert [(line["request_id"], line["path"], line["status"]) for line in lines] == [
        ("t-1", "/healthz", 400),
        ("t-2", "/v1/acme/mcp", 403),
    ]


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
