"""Per-tool scopes through the in-process app: what a company offers, what the consent
page lets the customer untick, the step-up challenge a call outside the grant gets, and a
grant narrowed afterwards (the account page's form) that never widens again."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.conftest import BASE_URL
from tests.oauth import flows
from tests.oauth.test_account_page import SAME_ORIGIN, account_path, signed_in_page

# On both databases: on PostgreSQL a narrowed grant must reach the tokens kept in memory.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

TENANT = "bistro"
EMAIL = "peter@initech.example"
# The service's scopes, then the tools' own in the catalog's order (by tool name).
OFFERED = ["profile", "email", "orders:cancel", "orders:read"]
BISTRO = f"""
companies:
  - tenant_key: {TENANT}
    name: Bistro
    signin:
      login: {{type: dev}}
    tools:
      - name: whoami
        description: Says who is asking; open to any grant.
        access: personal
        annotations:
          {{title: Who am I, readOnlyHint: true, destructiveHint: false, idempotentHint: true,
          openWorldHint: false}}
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
      - name: order_status
        description: Reads the customer's orders.
        access: personal
        scope: orders:read
        annotations:
          {{title: My orders, readOnlyHint: true, destructiveHint: false, idempotentHint: true,
          openWorldHint: false}}
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
      - name: cancel_order
        description: Cancels one of the customer's orders.
        access: personal
        scope: orders:cancel
        annotations:
          {{title: Cancel my order, readOnlyHint: false, destructiveHint: true,
          idempotentHint: true, openWorldHint: false}}
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
"""
STEP_UP = re.compile(
    r'^Bearer resource_metadata="[^"]+", error="insufficient_scope",'
    r' error_description="This tool needs the scope (?P<needed>[^"]+)", scope="(?P<scope>[^"]+)"$'
)


@pytest.fixture(autouse=True)
async def bistro(app: Frontdesk, tmp_path: Path) -> None:
    await flows.add_companies(app, tmp_path, BISTRO)


async def call(client: httpx.AsyncClient, tool: str, token: str | None) -> httpx.Response:
    return await flows.mcp(client, flows.tool_call(tool), TENANT, token=token)


async def signed_in(
    client: httpx.AsyncClient, *, untick: tuple[str, ...] = (), scope: str | None = None
) -> flows.Tokens:
    """A sign-in through the consent page's own form, with ``untick`` unticked."""
    client_id = await flows.register(client, TENANT, redirect_uris=[flows.REDIRECT_URI])
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce, TENANT, scope=scope)
    form = dict(flows.form_of(page.text).inputs)
    for item in untick:
        del form[f"scope:{item}"]
    allowed = await client.post(
        flows.oauth_path("consent", TENANT), data={**form, "decision": "allow"}, headers=flows.FORM
    )
    back = flows.redirect_params(await flows.dev_login(client, allowed, email=EMAIL))
    sign_in = flows.SignIn(
        client_id, back["code"], back["state"], back["iss"], pkce, flows.REDIRECT_URI, TENANT
    )
    return flows.tokens_of(await flows.exchange(client, sign_in), client_id, TENANT)


def step_up_of(response: httpx.Response) -> tuple[str, list[str]]:
    """The scope a step-up challenge says is needed, and the scopes it asks for; the result
    carries the same challenge."""
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    found = STEP_UP.match(challenge)
    assert found is not None, challenge
    result: dict[str, Any] = response.json()["result"]
    assert result["isError"] is True
    assert result["_meta"]["mcp/www_authenticate"] == [challenge]
    return found["needed"], found["scope"].split()


def answered(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    assert result["isError"] is False, result
    return result


async def test_the_company_offers_its_tools_scopes_beside_the_services(
    client: httpx.AsyncClient,
) -> None:
    """Both metadata documents and a guest's challenge name every scope it offers."""
    server = await client.get(f"/.well-known/oauth-authorization-server/v1/{TENANT}/oauth")
    assert server.json()["scopes_supported"] == OFFERED
    resource = await client.get(f"/.well-known/oauth-protected-resource/v1/{TENANT}/mcp")
    assert resource.json()["scopes_supported"] == OFFERED
    guest = await call(client, "cancel_order", None)
    assert guest.status_code == 401
    assert guest.headers["www-authenticate"].endswith(f'scope="{" ".join(OFFERED)}"')
    # Each tool's securitySchemes name the scope of its own it needs (OpenAI Apps SDK).
    listed = await flows.mcp(client, flows.rpc("tools/list"), TENANT)
    schemes = {tool["name"]: tool["securitySchemes"] for tool in listed.json()["result"]["tools"]}
    assert schemes["cancel_order"] == [
        {"type": "noauth"},
        {"type": "oauth2", "scopes": ["profile", "email", "orders:cancel"]},
    ]
    assert schemes["whoami"][1] == {"type": "oauth2", "scopes": ["profile", "email"]}
    # A company without tool scopes offers what it always did.
    initech = await client.get("/.well-known/oauth-authorization-server/v1/initech/oauth")
    assert initech.json()["scopes_supported"] == ["profile", "email"]


async def test_the_consent_page_shows_each_scope_with_its_tools_ticked(
    client: httpx.AsyncClient,
) -> None:
    client_id = await flows.register(client, TENANT, redirect_uris=[flows.REDIRECT_URI])
    page = await flows.consent_page(client, client_id, flows.Pkce.new(), TENANT)
    inputs = flows.form_of(page.text).inputs
    assert inputs["tool_scopes"] == "orders:cancel orders:read"
    assert inputs["scope:orders:read"] == inputs["scope:orders:cancel"] == "on"
    assert page.text.count(" checked>") == 2
    assert "My orders <code>orders:read</code>" in page.text
    assert "Cancel my order <code>orders:cancel</code>" in page.text
    # The tool open to any grant is listed as before, not as a choice.
    assert "<li>Who am I</li>" in page.text


async def test_an_unticked_scope_is_not_granted_and_its_tool_asks_for_it(
    client: httpx.AsyncClient,
) -> None:
    """The grant gets only what stayed ticked; the tool behind the unticked scope answers
    with the step-up challenge naming it, the others answer as before."""
    tokens = await signed_in(client, untick=("orders:cancel",))
    assert tokens.scope == "profile email orders:read"
    assert answered(await call(client, "whoami", tokens.access))
    mine = answered(await call(client, "order_status", tokens.access))["structuredContent"]
    assert mine["scopes"] == ["email", "orders:read", "profile"]
    needed, asked = step_up_of(await call(client, "cancel_order", tokens.access))
    assert needed == "orders:cancel"
    assert asked == ["profile", "email", "orders:read", "orders:cancel"]  # held, then needed


async def test_a_client_asking_only_for_what_the_customer_unticks_gets_nothing(
    client: httpx.AsyncClient,
) -> None:
    client_id = await flows.register(client, TENANT, redirect_uris=[flows.REDIRECT_URI])
    page = await flows.consent_page(
        client, client_id, flows.Pkce.new(), TENANT, scope="orders:cancel"
    )
    form = dict(flows.form_of(page.text).inputs)
    del form["scope:orders:cancel"]
    denied = await client.post(
        flows.oauth_path("consent", TENANT), data={**form, "decision": "allow"}, headers=flows.FORM
    )
    back = flows.redirect_params(denied)
    assert back["error"] == "access_denied"


async def test_the_consent_form_cannot_widen_what_the_client_asked_for(
    client: httpx.AsyncClient,
) -> None:
    """A scope the client did not ask for stays out, whatever the form says."""
    client_id = await flows.register(client, TENANT, redirect_uris=[flows.REDIRECT_URI])
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce, TENANT, scope="orders:read")
    form = {
        **flows.form_of(page.text).inputs,
        "tool_scopes": "orders:read orders:cancel",
        "scope:orders:cancel": "on",
        "decision": "allow",
    }
    allowed = await client.post(flows.oauth_path("consent", TENANT), data=form, headers=flows.FORM)
    back = flows.redirect_params(await flows.dev_login(client, allowed, email=EMAIL))
    sign_in = flows.SignIn(
        client_id, back["code"], back["state"], back["iss"], pkce, flows.REDIRECT_URI, TENANT
    )
    tokens = flows.tokens_of(await flows.exchange(client, sign_in), client_id, TENANT)
    assert tokens.scope == "orders:read"


async def test_a_narrowed_grant_keeps_working_with_less_and_never_widens_again(
    client: httpx.AsyncClient,
) -> None:
    """On the account page the customer unticks orders:cancel: the same access token still
    reads orders and now gets the step-up challenge at cancel_order; a refresh keeps the
    narrowed scope even when it asks for more; the next sign-in asks the customer again."""
    tokens = await signed_in(client)
    assert tokens.scope == " ".join(OFFERED)
    assert answered(await call(client, "cancel_order", tokens.access))

    page = await signed_in_page(client, TENANT)
    form = flows.form_of(page).inputs
    assert form["tool_scopes"] == "orders:cancel orders:read"
    narrowed = await client.post(
        account_path(TENANT, "/narrow"),
        data={
            "csrf": form["csrf"],
            "client_id": tokens.client_id,
            "tool_scopes": form["tool_scopes"],
            "scope:orders:read": "on",
        },
        headers={**flows.FORM, **SAME_ORIGIN},
    )
    assert narrowed.status_code == 303, narrowed.text
    assert narrowed.headers["location"] == f"{BASE_URL}{account_path(TENANT)}"
    again = await client.get(account_path(TENANT))
    assert flows.form_of(again.text).inputs["tool_scopes"] == "orders:read"

    assert answered(await call(client, "order_status", tokens.access))
    needed, _ = step_up_of(await call(client, "cancel_order", tokens.access))
    assert needed == "orders:cancel"

    # A refresh asking for the scope taken back is refused (RFC 6749 6); one asking for
    # nothing in particular keeps what is left.
    widening = await flows.refresh(client, tokens, scope="orders:cancel")
    assert widening.status_code == 400, widening.text
    assert widening.json()["error"] == "invalid_scope"
    refreshed = await flows.refresh(client, tokens)
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["scope"] == "profile email orders:read"
    step_up_of(await call(client, "cancel_order", refreshed.json()["access_token"]))

    # What the customer allowed this client is narrowed too: asking for it again shows the
    # consent page, even to the browser that remembers the customer.
    again_page = await flows.authorize(
        client,
        flows.authorize_params(tokens.client_id, flows.Pkce.new(), redirect_uri=flows.REDIRECT_URI),
        TENANT,
    )
    assert again_page.status_code == 200, again_page.headers.get("location")
    assert "scope:orders:cancel" in again_page.text


async def test_narrowing_to_nothing_is_refused(client: httpx.AsyncClient) -> None:
    tokens = await signed_in(client, scope="orders:cancel")
    assert tokens.scope == "orders:cancel"
    page = await signed_in_page(client, TENANT)
    form = flows.form_of(page).inputs
    refused = await client.post(
        account_path(TENANT, "/narrow"),
        data={"csrf": form["csrf"], "client_id": tokens.client_id, "tool_scopes": "orders:cancel"},
        headers={**flows.FORM, **SAME_ORIGIN},
    )
    assert refused.status_code == 400
    assert "Remove access" in refused.text
    assert answered(await call(client, "cancel_order", tokens.access))
