"""The customer's own page in a real browser (Chromium), against Frontdesk running as a real
process: the customer connects an assistant, signs in to their page with the dev login,
sees the assistant there, removes it, and the assistant's next call is refused."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ClientRedirectUri, OffLoopback, artifact
from tests.browser.oauth_client import OAuthClient, mcp_status, register_client
from tests.live.conftest import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "initech"
CLIENT_NAME = "Account Page Assistant"
EMAIL = "joanna@example.com"


def connect(page: Page, client: OAuthClient, redirect_uri: ClientRedirectUri) -> str:
    """Allow the client and sign in as EMAIL; the access token the client receives."""
    authorization = client.authorization()
    page.goto(authorization.url)
    page.get_by_role("button", name="Allow").click()
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))
    arrived = redirect_uri.next_redirect()
    tokens = client.exchange(arrived.query["code"], authorization.verifier)
    access: str = tokens["access_token"]
    return access


def test_customer_signs_in_to_their_page_and_cuts_off_an_assistant(
    page: Page,
    signin_service: LiveService,
    redirect_uri: ClientRedirectUri,
    off_loopback: OffLoopback,
) -> None:
    """Dev login → the page lists the assistant → Remove access → its next call is 401."""
    client = register_client(signin_service, TENANT, redirect_uri.url, CLIENT_NAME)
    access = connect(page, client, redirect_uri)
    assert client.whoami(access)["subject"] == f"dev:{EMAIL}"

    account = f"{signin_service.base_url}/v1/{TENANT}/account"
    page.goto(account)
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Assistants connected to your Initech account"
    )
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to Initech")
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_role("button", name="Sign in").click()

    page.wait_for_url(account)
    expect(page.get_by_text(f"Signed in as {EMAIL}")).to_be_visible()
    expect(page.get_by_role("heading", level=2)).to_have_text([CLIENT_NAME])
    expect(page.get_by_text("is not verified")).to_be_visible()
    expect(page.get_by_text("Last used")).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=artifact("account-390.png"), full_page=True)

    page.get_by_role("button", name=f"Remove access for {CLIENT_NAME}").click()

    page.wait_for_url(account)
    expect(page.get_by_text("No assistant can use your account.")).to_be_visible()
    expect(page.get_by_role("heading", level=2)).to_have_count(0)
    assert mcp_status(signin_service, TENANT, access) == 401
    assert off_loopback.urls == []
