"""What /metrics counts where it happens (metrics.py): requests by company, sign-ins,
tokens, backend calls, rate limits, outages and pool use, through the in-process app; and
the bearer token that can guard /metrics."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from frontdesk.app import Frontdesk
from frontdesk.companies.catalog import ServedCompany
from frontdesk.config import Settings
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.clients import OutboundClients
from frontdesk.tools.http import HttpToolProvider
from frontdesk.tools.provider import ToolCall, ToolError
from tests.conftest import start_app
from tests.oauth.conftest import Serve
from tests.oauth.flows import (
    Pkce,
    consent_page,
    decide,
    flow_of,
    mcp,
    oauth_path,
    obtain_tokens,
    redirect_params,
    refresh,
    register,
    revoke,
    tokens_of,
    tool_call,
)

pytestmark = pytest.mark.anyio

METRICS_TOKEN = "scrape-token-0123456789abcdef"


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of an exposition, keyed by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, frozenset(labels.items())), 0.0)


async def scrape(client: httpx.AsyncClient) -> str:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    return response.text


async def test_requests_name_a_company_only_when_it_is_active(
    client: httpx.AsyncClient,
) -> None:
    """An active company's requests carry its tenant key; a made-up, inactive or malformed
    one all count as "unknown", so no caller can add series."""
    await mcp(client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "acme")
    await client.get("/v1/acme/oauth/nothing-here")
    for stranger in ("made-up-key", "dormant", "NOT A KEY"):
        await mcp(client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, stranger)
    text = await scrape(client)
    name = "frontdesk_company_request_duration_seconds_count"
    assert value(text, name, company="acme", route="mcp", status="200") == 1
    assert value(text, name, company="acme", route="other", status="404") == 1
    assert value(text, name, company="unknown", route="mcp", status="404") == 3
    assert "made-up-key" not in text
    assert "dormant" not in text
    bucket = "frontdesk_company_request_duration_seconds_bucket"
    assert value(text, bucket, company="acme", route="mcp", status="200", le="+Inf") == 1


async def test_a_sign_in_its_tokens_and_their_revocation_are_counted(
    client: httpx.AsyncClient,
) -> None:
    tokens = await obtain_tokens(client)
    tokens = tokens_of(await refresh(client, tokens), tokens.client_id)
    assert (await revoke(client, tokens.refresh, tokens.client_id)).status_code == 200
    text = await scrape(client)
    assert value(text, "frontdesk_signins_started_total", company="initech") == 1
    assert value(text, "frontdesk_signins_completed_total", company="initech") == 1
    issued = "frontdesk_tokens_issued_total"
    assert value(text, issued, company="initech", grant_type="authorization_code") == 1
    assert value(text, issued, company="initech", grant_type="refresh_token") == 1
    assert value(text, "frontdesk_tokens_revoked_total", company="initech") == 1
    assert value(text, "frontdesk_refresh_token_reuse_detected_total", company="initech") == 0


async def test_a_denied_consent_is_a_failed_sign_in(client: httpx.AsyncClient) -> None:
    client_id = await register(client)
    page = await consent_page(client, client_id, Pkce.new())
    back = redirect_params(await decide(client, flow_of(page), "deny"))
    assert back["error"] == "access_denied"
    text = await scrape(client)
    assert value(text, "frontdesk_signins_started_total", company="initech") == 1
    assert value(text, "frontdesk_signins_failed_total", company="initech", reason="denied") == 1
    assert value(text, "frontdesk_signins_completed_total", company="initech") == 0


async def test_a_reused_refresh_token_is_counted(serve: Serve) -> None:
    served = await serve()
    tokens = await obtain_tokens(served.client)
    assert (await refresh(served.client, tokens)).status_code == 200
    # The spent token again: it works once (interface 3.2), so this is reuse, and the family ends.
    assert (await refresh(served.client, tokens)).status_code == 400
    text = await scrape(served.client)
    assert value(text, "frontdesk_refresh_token_reuse_detected_total", company="initech") == 1


@pytest.mark.parametrize(
    ("tool", "outcome"),
    [("echo", "ok"), ("crash", "error"), ("refuse", "error"), ("slow", "timeout")],
)
async def test_backend_calls_are_counted_by_company_tool_and_outcome(
    client: httpx.AsyncClient, tool: str, outcome: str
) -> None:
    arguments = {"text": "hi"} if tool == "echo" else {}
    response = await mcp(client, tool_call(tool, arguments), "acme")
    assert response.status_code == 200, response.text
    text = await scrape(client)
    calls = "frontdesk_backend_calls_total"
    assert value(text, calls, company="acme", tool=tool, outcome=outcome) == 1
    assert sum(v for (n, _labels), v in samples(text).items() if n == calls) == 1
    count = "frontdesk_backend_call_duration_seconds_count"
    assert value(text, count, company="acme", tool=tool) == 1


def a_call() -> ToolCall:
    return ToolCall("acme", "lookup", {}, None, "request-1")


async def test_a_refused_address_is_a_refused_call() -> None:
    """The http provider says why it reached no backend (metrics.backend_call's outcome)."""
    outbound = OutboundClients(backend_addresses=AddressPolicy([]))
    provider = HttpToolProvider("http://127.0.0.1:9/tool", "s" * 32, outbound.for_backends())
    with pytest.raises(ToolError) as refused:
        await provider.call(a_call())
    await outbound.aclose()
    assert refused.value.outcome == "refused"


@pytest.mark.parametrize(
    ("failure", "outcome"),
    [(httpx.ConnectTimeout("slow"), "timeout"), (httpx.ConnectError("down"), "unavailable")],
)
async def test_an_unreachable_backend_is_a_timeout_or_unavailable(
    failure: httpx.HTTPError, outcome: str
) -> None:
    def fail(_request: httpx.Request) -> httpx.Response:
        raise failure

    async with httpx.AsyncClient(transport=httpx.MockTransport(fail)) as http:
        provider = HttpToolProvider("http://127.0.0.1:9/tool", "s" * 32, http)
        with pytest.raises(ToolError) as failed:
            await provider.call(a_call())
    assert failed.value.outcome == outcome


async def test_a_rate_limited_request_is_counted_by_kind_and_company(
    client: httpx.AsyncClient,
) -> None:
    """The strict company allows 3 calls a minute: the fourth is refused and counted under
    that company."""
    statuses = [
        (await mcp(client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "strict")).status_code
        for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    text = await scrape(client)
    assert value(text, "frontdesk_rate_limited_total", kind="mcp", company="strict") == 1
    # The other kinds are there from the start, at zero.
    started = frozenset({("kind", "token"), ("company", "unknown")})
    assert ("frontdesk_rate_limited_total", started) in samples(text)


async def test_an_oauth_limit_counts_the_company_and_never_a_made_up_tenant_key(
    serve: Serve,
) -> None:
    """Refusals at authorize are counted under the company the path names when it is
    active, and under "unknown" for any other key, so no caller adds series at will."""
    served = await serve(oauth_rate_limit="1/minute")
    # One sign-in allowed per address, whatever the company: the next two are refused.
    for tenant in ("initech", "initech", "no-such-company"):
        await served.client.get(oauth_path("authorize", tenant))
    text = await scrape(served.client)
    assert value(text, "frontdesk_rate_limited_total", kind="authorize", company="initech") == 1
    assert value(text, "frontdesk_rate_limited_total", kind="authorize", company="unknown") == 1
    assert not any(("company", "no-such-company") in labels for _name, labels in samples(text))


async def test_an_outage_answer_is_counted_by_cause(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def unreachable(_tenant_key: str) -> ServedCompany | None:
        raise ConnectionError("the database is down")

    monkeypatch.setattr(app.services.registry, "active", unreachable)
    response = await mcp(client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "globex")
    assert response.status_code == 503
    text = await scrape(client)
    assert value(text, "frontdesk_outage_answers_total", cause="database") == 1
    assert value(text, "frontdesk_outage_answers_total", cause="client_document") == 0


async def test_the_pools_connections_in_use_are_a_gauge(client: httpx.AsyncClient) -> None:
    text = await scrape(client)
    assert ("frontdesk_database_connections_in_use", frozenset({("pool", "engine")})) in samples(
        text
    )


async def test_metrics_need_the_token_when_one_is_set(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(metrics_token=METRICS_TOKEN)
    app = await start_app(settings)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=settings.base_url) as client:
            bare = await client.get("/metrics")
            wrong = await client.get("/metrics", headers={"authorization": "Bearer nope"})
            basic = await client.get(
                "/metrics", headers={"authorization": f"Basic {METRICS_TOKEN}"}
            )
            right = await client.get(
                "/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"}
            )
    finally:
        await app.services.stop()
    for refused in (bare, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "frontdesk_" not in refused.text
    assert right.status_code == 200
    assert "frontdesk_http_requests_total" in right.text


def test_a_short_metrics_token_is_refused(make_settings: Callable[..., Settings]) -> None:
    with pytest.raises(ValueError, match=r"(?i)metrics_token"):
        make_settings(metrics_token="short")
