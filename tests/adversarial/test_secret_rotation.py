"""Secret rotation (DESIGN: the first key signs, all verify). One browser and one MCP
client keep talking while the operator rolls keys across instances that share the
database: [old] → [new, old] → [new]. tests/protocol/test_sessions.py proves the session
half on one app per key set and tests/oauth/test_flow.py the flow half without HTTP; this
carries sign-ins in progress, sessions and tokens through the whole rotation."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.web.asgi import Receive, Scope, Send
from tests.conftest import BASE_URL, TEST_SECRET, start_app
from tests.oauth import flows

pytestmark = pytest.mark.anyio

OLD = TEST_SECRET
NEW = "rotated-in-secret-key-that-is-long-enough-9876543210"


class Switch:
    """One address whose instance the test changes, as a load balancer would."""

    def __init__(self) -> None:
        self.app: Frontdesk | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        await self.app(scope, receive, send)


@pytest.fixture
async def instances(
    make_settings: Callable[..., Settings],
) -> AsyncIterator[dict[str, Frontdesk]]:
    """Three instances on one database: before, during and after the rotation."""
    async with contextlib.AsyncExitStack() as stack:
        apps: dict[str, Frontdesk] = {}
        for name, keys in (("before", [OLD]), ("during", [NEW, OLD]), ("after", [NEW])):
            app = await start_app(make_settings(secret_keys=keys))
            stack.push_async_callback(app.services.stop)
            apps[name] = app
        yield apps


async def test_work_in_progress_survives_adding_a_key_and_ends_with_the_old_one(
    instances: dict[str, Frontdesk],
) -> None:
    """Old-key sessions and flows work after a new key is added, and end with the old key."""
    switch = Switch()
    transport = httpx.ASGITransport(app=switch, client=("203.0.113.10", 40003))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        switch.app = instances["before"]
        tokens = await flows.obtain_tokens(client)
        initialized = await flows.mcp(client, flows.rpc("initialize", {}))
        old_session = initialized.headers["mcp-session-id"]
        client_id = await flows.register(client)
        finishing = flows.flow_of(await flows.consent_page(client, client_id, flows.Pkce.new()))

        async def ping(session_id: str) -> int:
            response = await client.post(
                "/v1/initech/mcp", json=flows.rpc("ping"), headers={"mcp-session-id": session_id}
            )
            return response.status_code

        # A new first key: everything made under the old one still works...
        switch.app = instances["during"]
        assert await ping(old_session) == 200
        allowed = await flows.decide(client, finishing)
        back = flows.redirect_params(await flows.dev_login(client, allowed))
        assert back["code"].startswith("fdac_")
        # ...and what is made now is signed with the new key.
        new_session = (await flows.mcp(client, flows.rpc("initialize", {}))).headers[
            "mcp-session-id"
        ]
        unfinished = flows.flow_of(await flows.consent_page(client, client_id, flows.Pkce.new()))
        switch.app = instances["before"]
        assert await ping(new_session) == 404

        # The old key removed: what it signed is refused; the new key's work goes on.
        switch.app = instances["after"]
        assert await ping(old_session) == 404
        assert await ping(new_session) == 200
        assert (await flows.decide(client, unfinished)).status_code == 303
        stale = flows.flow_of(await flows.consent_page(client, client_id, flows.Pkce.new()))
        switch.app = instances["before"]
        refused = await flows.decide(client, stale)
        assert refused.status_code == 400
        assert "location" not in refused.headers

        # Tokens are stored as digests, not signed: they outlive every key.
        switch.app = instances["after"]
        assert (await flows.whoami_result(client, tokens.access))["guest"] is False
        assert (await flows.refresh(client, tokens)).status_code == 200


async def test_a_sign_in_sealed_under_a_removed_key_is_refused_at_every_step(
    instances: dict[str, Frontdesk],
) -> None:
    """Consent, the login form and the login post all refuse a flow whose key is gone."""
    switch = Switch()
    transport = httpx.ASGITransport(app=switch, client=("203.0.113.10", 40003))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        switch.app = instances["before"]
        client_id = await flows.register(client)
        flow = flows.flow_of(await flows.consent_page(client, client_id, flows.Pkce.new()))
        allowed = await flows.decide(client, flow)
        switch.app = instances["after"]
        steps = [
            await flows.decide(client, flow),
            await client.get(allowed.headers["location"]),
            await client.post(
                flows.oauth_path("login"),
                data={"flow": flow, "email": "late@initech.example"},
                headers=flows.FORM,
            ),
        ]
        for response in steps:
            assert response.status_code == 400
            assert "location" not in response.headers
