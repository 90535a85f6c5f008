"""The consent page and the dev login in a real browser (Chromium), against Frontdesk running
as a real process: the customer clicks through, and the client's loopback redirect URI
receives the answer."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ClientRedirectUri, OffLoopback, artifact
from tests.browser.oauth_client import OAuthClient, register_client
from tests.live.conftest import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "initech"
CLIENT_NAME = "Browser Test Assistant"
EMAIL = "grace@example.com"
NAME = "Grace Brewster"
WHOAMI = "whoami \u26a0 can change or delete things"


@pytest.fixture
def client(signin_service: LiveService, redirect_uri: ClientRedirectUri) -> OAuthClient:
    return register_client(signin_service, TENANT, redirect_uri.url, CLIENT_NAME)


def test_customer_allows_signs_in_and_the_client_gets_a_working_code(
    page: Page, client: OAuthClient, redirect_uri: ClientRedirectUri, off_loopback: OffLoopback
) -> None:
    """Consent shows company, client and scopes; Allow + dev login bring code, state, iss."""
    authorization = client.authorization()
    page.goto(authorization.url)

    expect(page).to_have_title(f"Allow {CLIENT_NAME}? · Initech")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Allow {CLIENT_NAME} to use your Initech account?"
    )
    # whoami, Initech's personal tool, is described by no annotations: by MCP's defaults it
    # may change or delete, so the page says so.
    expect(page.get_by_role("listitem")).to_have_text(
        [
            f"use these Initech's tools as you: {WHOAMI}",
            WHOAMI,
            "see your name",
            "see your email address",
        ]
    )
    redirect_host = client.redirect_uri.split("/")[2]
    expect(page.get_by_text(f"then return to {redirect_host}")).to_be_visible()
    page.screenshot(path=artifact("consent.png"), full_page=True)

    page.get_by_role("button", name="Allow").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to Initech")
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Name").fill(NAME)
    page.get_by_role("button", name="Sign in").click()

    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))
    expect(page.locator("body")).to_have_text("done")
    arrived = redirect_uri.next_redirect()
    assert set(arrived.query) == {"code", "state", "iss"}
    assert arrived.query["state"] == authorization.state
    assert arrived.query["iss"] == client.issuer

    tokens = client.exchange(arrived.query["code"], authorization.verifier)
    assert tokens["token_type"] == "Bearer"
    assert tokens["scope"] == "profile email"
    assert client.whoami(tokens["access_token"]) == {
        "guest": False,
        "subject": f"dev:{EMAIL}",
        "email": EMAIL,
        "name": NAME,
        "scopes": ["email", "profile"],
    }
    assert off_loopback.urls == []


def test_customer_denies_and_the_client_gets_access_denied(
    page: Page, client: OAuthClient, redirect_uri: ClientRedirectUri
) -> None:
    """Deny on the consent page sends the browser to the client with access_denied and state."""
    authorization = client.authorization(scope="email")
    page.goto(authorization.url)
    expect(page.get_by_role("listitem")).to_have_text(
        [f"use these Initech's tools as you: {WHOAMI}", WHOAMI, "see your email address"]
    )

    page.get_by_role("button", name="Deny").click()

    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))
    expect(page.locator("body")).to_have_text("done")
    arrived = redirect_uri.next_redirect()
    assert arrived.query["error"] == "access_denied"
    assert arrived.query["state"] == authorization.state
    assert arrived.query["iss"] == client.issuer
    assert "code" not in arrived.query
