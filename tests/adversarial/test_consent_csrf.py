"""Consent page CSRF and framing (DESIGN: consent page). Already proven in
tests/oauth/test_consent_and_login.py: consent without the cookie or with another
browser's, tampered and foreign-key flows, the login replayed after completion, and the
consent page's own headers. Here: replays of a finished consent, cross-site form tricks,
and anti-framing on every page a sign-in can show."""

from __future__ import annotations

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.oauth.flow import COOKIE_NAME
from tests.adversarial.conftest import snapshot
from tests.oauth import flows

pytestmark = pytest.mark.anyio


def assert_refused(response: httpx.Response) -> None:
    """Refused without going anywhere: a 4xx, no Location, no new sign-in cookie."""
    assert 400 <= response.status_code < 500, response.status_code
    assert "location" not in response.headers
    assert COOKIE_NAME not in response.headers.get("set-cookie", "")


def assert_unframeable(response: httpx.Response) -> None:
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "no-store" in response.headers["cache-control"]


async def consent_flow(client: httpx.AsyncClient) -> str:
    client_id = await flows.register(client)
    return flows.flow_of(await flows.consent_page(client, client_id, flows.Pkce.new()))


async def test_a_finished_consent_cannot_be_replayed(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Posting a finished consent again from the same browser is refused; no code is issued."""
    flow = await consent_flow(client)
    allowed = await flows.decide(client, flow)
    assert flows.redirect_params(await flows.dev_login(client, allowed))["code"]
    before = await snapshot(app)
    for decision in ("allow", "deny"):
        assert_refused(await flows.decide(client, flow, decision))
    assert await snapshot(app) == before


async def test_cross_site_form_tricks_are_refused(client: httpx.AsyncClient) -> None:
    """text/plain, query-string, GET and multipart consents are never read as a decision."""
    flow = await consent_flow(client)
    path = flows.oauth_path("consent")
    attempts = [
        await client.post(
            path,
            content=f"flow={flow}&decision=allow".encode(),
            headers={"content-type": "text/plain"},
        ),
        await client.post(
            path, params={"flow": flow, "decision": "allow"}, headers=flows.FORM, content=b""
        ),
        await client.get(path, params={"flow": flow, "decision": "allow"}),
        await client.post(path, files={"flow": (None, flow), "decision": (None, "allow")}),
    ]
    for response in attempts:
        assert_refused(response)
    # Control: the browser's own form post is still accepted.
    assert (await flows.decide(client, flow)).status_code == 303


async def test_every_sign_in_page_refuses_to_be_framed(client: httpx.AsyncClient) -> None:
    """Every page a sign-in shows carries DENY, frame-ancestors 'none' and no-store."""
    client_id = await flows.register(client)
    consent = await flows.consent_page(client, client_id, flows.Pkce.new())
    allowed = await flows.decide(client, flows.flow_of(consent))
    login = await client.get(allowed.headers["location"])
    problem = await client.post(
        flows.oauth_path("login"),
        data={"flow": flows.form_of(login.text).inputs["flow"], "email": "not an email"},
        headers=flows.FORM,
    )
    expired = await flows.decide(client, "forged.flow")
    unknown = await flows.authorize(client, flows.authorize_params("fdc_nobody", flows.Pkce.new()))
    no_signin = await client.get("/v1/acme/oauth/authorize")
    pages = {
        "consent": (consent, 200),
        "login": (login, 200),
        "problem": (problem, 200),
        "expired": (expired, 400),
        "unknown": (unknown, 400),
        "no-signin": (no_signin, 404),
    }
    for name, (response, status) in pages.items():
        assert response.status_code == status, name
        assert_unframeable(response)
