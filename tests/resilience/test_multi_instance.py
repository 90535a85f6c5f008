"""Two Frontdesk processes behind one address, sharing one PostgreSQL database and one Redis:
every request of a client's whole session goes to the other instance than the one before,
as a round-robin load balancer would send it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from frontdesk.oauth.flow import COOKIE_NAME
from tests.live.conftest import LiveService, free_port, running_service
from tests.oauth.flows import (
    FORM,
    REDIRECT_URI,
    Pkce,
    authorize_params,
    flow_of,
    form_of,
    oauth_path,
    redirect_params,
    rpc,
    tool_call,
)
from tests.resilience.conftest import (
    NO_LIMIT,
    Figures,
    SharedRedis,
    echo_company,
    write_companies,
)

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.postgres, pytest.mark.redis, pytest.mark.alone]

TENANT = "initech"
QUOTA = 10
EMAIL = "multi@initech.example"
VERSION = "2025-06-18"


@dataclass
class Balancer:
    """Plays the load balancer in front of the instances: the test names the instance of
    every request, whatever public address the service wrote into a URL."""

    public_url: str
    instances: dict[str, httpx.AsyncClient]
    sequence: list[str] = field(default_factory=list)

    async def send(self, instance: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        if url.startswith("http"):
            assert url.startswith(self.public_url + "/"), f"{url} is not under the public URL"
            parts = urlsplit(url)
            url = parts.path + (f"?{parts.query}" if parts.query else "")
        self.sequence.append(instance)
        client = self.instances[instance]
        response = await client.request(method, url, **kwargs)
        # No cookie jar: the browser's cookie is carried by hand, from instance to instance.
        client.cookies.clear()
        return response

    async def mcp(
        self,
        instance: str,
        body: dict[str, Any],
        tenant: str = TENANT,
        *,
        token: str | None = None,
        session: str | None = None,
    ) -> httpx.Response:
        headers = {"accept": "application/json, text/event-stream"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        if session is not None:
            headers["mcp-session-id"] = session
            headers["mcp-protocol-version"] = VERSION
        return await self.send(instance, "POST", f"/v1/{tenant}/mcp", json=body, headers=headers)

    async def form(
        self, instance: str, url: str, data: dict[str, str], cookie: str | None = None
    ) -> httpx.Response:
        headers = dict(FORM)
        if cookie is not None:
            headers["cookie"] = cookie
        return await self.send(instance, "POST", url, data=data, headers=headers)

    def alternated(self) -> bool:
        pairs = zip(self.sequence, self.sequence[1:], strict=False)
        return all(first != second for first, second in pairs)


@dataclass(frozen=True)
class Pair:
    public_url: str
    a: LiveService
    b: LiveService
    quota_tenant: str


@pytest.fixture
def pair(postgres_url: str, shared_redis: SharedRedis, tmp_path: Path) -> Iterator[Pair]:
    """Instances A and B: one database, one Redis, one secret and one public address."""
    quota_tenant = shared_redis.tenant("quota")
    companies = write_companies(
        tmp_path / "quota.json", echo_company(quota_tenant, f"{QUOTA}/minute")
    )
    public_url = f"http://127.0.0.1:{free_port()}"
    environment = {
        "FRONTDESK_BASE_URL": public_url,
        "FRONTDESK_REDIS_URL": shared_redis.url,
        "FRONTDESK_REGISTRATION_RATE_LIMIT": NO_LIMIT,
    }
    with contextlib.ExitStack() as stack:
        a, b = (
            stack.enter_context(
                running_service(
                    "postgres",
                    postgres_url,
                    tmp_path,
                    extra_env=environment,
                    extra_companies_files=[companies],
                )
            )
            for _ in range(2)
        )
        yield Pair(public_url, a, b, quota_tenant)


def assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def assert_signed_in(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["subject"] == f"dev:{EMAIL}"


def tokens(response: httpx.Response) -> tuple[str, str]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body["access_token"], body["refresh_token"]


async def test_a_whole_session_alternating_between_two_instances(
    pair: Pair, figures: Figures
) -> None:
    """Whatever one instance mints, counts or revokes holds on the other, request by request."""
    async with (
        httpx.AsyncClient(base_url=pair.a.base_url, timeout=10.0) as a,
        httpx.AsyncClient(base_url=pair.b.base_url, timeout=10.0) as b,
    ):
        lb = Balancer(pair.public_url, {"A": a, "B": b})

        # MCP session: initialize on A, use the session id on B.
        opened = await lb.mcp(
            "A",
            rpc("initialize", {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {}}),
        )
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        called = await lb.mcp("B", tool_call("echo", {"text": "hi"}), session=session)
        assert called.status_code == 200, called.text
        assert called.json()["result"]["content"] == [{"type": "text", "text": "hi"}]

        # Sign-in: register on A, authorize on B, consent on A, login on B then A.
        registered = await lb.send(
            "A", "POST", oauth_path("register"), json={"redirect_uris": [REDIRECT_URI]}
        )
        assert registered.status_code == 201, registered.text
        client_id = registered.json()["client_id"]
        pkce = Pkce.new()
        page = await lb.send(
            "B", "GET", oauth_path("authorize"), params=authorize_params(client_id, pkce)
        )
        assert page.status_code == 200, page.text
        cookie = f"{COOKIE_NAME}={page.cookies[COOKIE_NAME]}"
        allowed = await lb.form(
            "A", oauth_path("consent"), {"flow": flow_of(page), "decision": "allow"}, cookie
        )
        assert allowed.status_code == 303, allowed.text
        login_page = await lb.send(
            "B", "GET", allowed.headers["location"], headers={"cookie": cookie}
        )
        login = form_of(login_page.text)
        assert login_page.status_code == 200, login_page.text
        assert login.action is not None
        done = await lb.form(
            "A",
            login.action,
            {"flow": login.inputs["flow"], "email": EMAIL, "name": "Multi"},
            cookie,
        )
        back = redirect_params(done)
        assert back["iss"] == f"{pair.public_url}/v1/{TENANT}/oauth"

        # The code minted on A is redeemed on B; tokens go back and forth from there.
        exchanged = await lb.form(
            "B",
            oauth_path("token"),
            {
                "grant_type": "authorization_code",
                "client_id": client_id,
                "code": back["code"],
                "redirect_uri": REDIRECT_URI,
                "code_verifier": pkce.verifier,
            },
        )
        first_access, first_refresh = tokens(exchanged)
        assert_signed_in(await lb.mcp("A", tool_call("whoami"), token=first_access))
        refresh_form = {"grant_type": "refresh_token", "client_id": client_id}
        second_access, second_refresh = tokens(
            await lb.form(
                "B", oauth_path("token"), {**refresh_form, "refresh_token": first_refresh}
            )
        )
        third_access, third_refresh = tokens(
            await lb.form(
                "A", oauth_path("token"), {**refresh_form, "refresh_token": second_refresh}
            )
        )
        assert_signed_in(await lb.mcp("B", tool_call("whoami"), token=third_access))

        # Revocation on one instance is seen by the other at once.
        revoke_form = {"client_id": client_id}
        revoked = await lb.form("A", oauth_path("revoke"), {**revoke_form, "token": third_access})
        assert revoked.status_code == 200, revoked.text
        assert_refused(await lb.mcp("B", tool_call("whoami"), token=third_access))
        revoked = await lb.form("A", oauth_path("revoke"), {**revoke_form, "token": third_refresh})
        assert revoked.status_code == 200, revoked.text
        spent = await lb.form(
            "B", oauth_path("token"), {**refresh_form, "refresh_token": third_refresh}
        )
        assert spent.status_code == 400, spent.text
        assert spent.json()["error"] == "invalid_grant"
        assert_refused(await lb.mcp("A", tool_call("whoami"), token=first_access))
        assert_refused(await lb.mcp("B", tool_call("whoami"), token=second_access))
        session_requests = len(lb.sequence)

        # One limit across both: QUOTA requests split between A and B, then refused on both.
        quota = pair.quota_tenant
        for number in range(QUOTA):
            instance = "A" if lb.sequence[-1] == "B" else "B"
            allowed_call = await lb.mcp(instance, tool_call("echo", {"text": str(number)}), quota)
            assert allowed_call.status_code == 200, (number, allowed_call.text)
        refused_on = {}
        for _ in range(2):
            instance = "A" if lb.sequence[-1] == "B" else "B"
            refused = await lb.mcp(instance, tool_call("echo", {"text": "over"}), quota)
            assert refused.status_code == 429, refused.text
            assert int(refused.headers["retry-after"]) >= 1
            refused_on[instance] = refused.status_code

    assert lb.alternated(), lb.sequence
    assert set(refused_on) == {"A", "B"}
    figures.record(
        "multi_instance",
        {
            "instances": 2,
            "requests_sent": len(lb.sequence),
            "requests_answered": len(lb.sequence),
            "session_requests_alternated": session_requests,
            "requests_on_a": lb.sequence.count("A"),
            "requests_on_b": lb.sequence.count("B"),
            "shared_limit": f"{QUOTA}/minute",
            "allowed_across_instances": QUOTA,
            "refused_with_429": len(refused_on),
            "unexpected_5xx": 0,
        },
    )
