"""Driving customer sign-in through the in-process app, so each test states only what it proves.

The ``httpx`` client plays both the MCP client and the customer's browser: it keeps the
cookie that binds a sign-in to the browser, so the consent and login steps work as they
would in a real one. Redirects are never followed: each step's 303 is checked and read.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from sqlalchemy import Table, update

from frontdesk.app import Frontdesk
from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.oauth.remembered import REMEMBERED_COOKIE
from tests.conftest import BASE_URL
from tests.support.jsonrpc import request
from tests.support.jsonrpc import tool_call as tool_call

Json = dict[str, Any]
Params = Mapping[str, str] | Sequence[tuple[str, str]]

TENANT = "initech"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
CLIENT_NAME = "Test Assistant"
FORM = {"content-type": "application/x-www-form-urlencoded"}


def issuer(tenant: str = TENANT) -> str:
    return f"{BASE_URL}/v1/{tenant}/oauth"


def mcp_url(tenant: str = TENANT) -> str:
    return f"{BASE_URL}/v1/{tenant}/mcp"


def oauth_path(endpoint: str, tenant: str = TENANT) -> str:
    return f"/v1/{tenant}/oauth/{endpoint}"


@dataclass(frozen=True, slots=True)
class Pkce:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        return cls(verifier, challenge)


@dataclass(frozen=True, slots=True)
class SignIn:
    """A finished sign-in: the code the client received, and what it needs to redeem it."""

    client_id: str
    code: str
    state: str | None
    iss: str
    pkce: Pkce
    redirect_uri: str
    tenant: str


@dataclass(frozen=True, slots=True)
class Tokens:
    access: str
    refresh: str
    scope: str
    client_id: str
    tenant: str


# Registration ----------------------------------------------------------------------------


async def register_response(
    client: httpx.AsyncClient, document: Any, tenant: str = TENANT
) -> httpx.Response:
    return await client.post(oauth_path("register", tenant), json=document)


async def register(
    client: httpx.AsyncClient,
    tenant: str = TENANT,
    *,
    redirect_uris: Sequence[str] = (REDIRECT_URI,),
    client_name: str | None = CLIENT_NAME,
) -> str:
    """Register a public client; its client id."""
    document: Json = {"redirect_uris": list(redirect_uris)}
    if client_name is not None:
        document["client_name"] = client_name
    response = await register_response(client, document, tenant)
    assert response.status_code == 201, response.text
    client_id: str = response.json()["client_id"]
    return client_id


# Authorize, consent, login ---------------------------------------------------------------


def authorize_params(
    client_id: str,
    pkce: Pkce,
    *,
    redirect_uri: str = REDIRECT_URI,
    scope: str | None = None,
    state: str | None = "client-state",
    resource: str | None = None,
) -> dict[str, str]:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
    }
    optional = {"scope": scope, "state": state, "resource": resource}
    params.update({name: value for name, value in optional.items() if value is not None})
    return params


async def authorize(
    client: httpx.AsyncClient, params: Params, tenant: str = TENANT
) -> httpx.Response:
    pairs = tuple(params.items()) if isinstance(params, Mapping) else tuple(params)
    return await client.get(oauth_path("authorize", tenant), params=pairs)


class _Inputs(HTMLParser):
    """The named <input> values of a page and the action of its first form."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: dict[str, str] = {}
        self.action: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action")
        elif tag == "input" and values.get("name"):
            self.inputs[values["name"]] = values.get("value", "")


def form_of(page: str) -> _Inputs:
    parser = _Inputs()
    parser.feed(page)
    parser.close()
    return parser


def flow_of(response: httpx.Response) -> str:
    """The sealed flow in the hidden input of a consent or login page."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return form_of(response.text).inputs["flow"]


async def consent_page(
    client: httpx.AsyncClient,
    client_id: str,
    pkce: Pkce,
    tenant: str = TENANT,
    *,
    redirect_uri: str = REDIRECT_URI,
    scope: str | None = None,
    state: str | None = "client-state",
) -> httpx.Response:
    """The consent page for a valid authorize request; it binds the browser with a cookie.

    Asked as a browser that remembers no customer: one that does skips the page for a
    client its customer allowed before (oauth.remembered)."""
    client.cookies.delete(REMEMBERED_COOKIE)
    params = authorize_params(client_id, pkce, redirect_uri=redirect_uri, scope=scope, state=state)
    response = await authorize(client, params, tenant)
    assert response.status_code == 200, response.headers.get("location", response.text)
    return response


async def decide(
    client: httpx.AsyncClient,
    flow: str,
    decision: str = "allow",
    tenant: str = TENANT,
    headers: Mapping[str, str] | None = None,
) -> httpx.Response:
    """Submit the consent form as the customer's browser does."""
    return await client.post(
        oauth_path("consent", tenant),
        data={"flow": flow, "decision": decision},
        headers={**FORM, **(headers or {})},
    )


async def dev_login(
    client: httpx.AsyncClient,
    consent_allowed: httpx.Response,
    *,
    email: str = "peter@initech.example",
    name: str = "Peter Gibbons",
) -> httpx.Response:
    """Follow the consent's redirect to the dev login form and submit it."""
    assert consent_allowed.status_code == 303, consent_allowed.text
    form = await client.get(consent_allowed.headers["location"])
    page = form_of(form.text)
    assert form.status_code == 200, form.text
    assert page.action is not None
    return await client.post(
        page.action,
        data={"flow": page.inputs["flow"], "email": email, "name": name},
        headers=FORM,
    )


def redirect_params(response: httpx.Response, redirect_uri: str = REDIRECT_URI) -> dict[str, str]:
    """The query a 303 back to the client's redirect URI carries, one value per name."""
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    base, _, query = location.partition("?")
    assert base == redirect_uri, location
    parsed = parse_qs(query, keep_blank_values=True, strict_parsing=True)
    assert all(len(values) == 1 for values in parsed.values()), location
    return {name: values[0] for name, values in parsed.items()}


def location_path(response: httpx.Response) -> str:
    assert response.status_code == 303, response.text
    return urlsplit(response.headers["location"]).path


async def sign_in(
    client: httpx.AsyncClient,
    tenant: str = TENANT,
    *,
    client_id: str | None = None,
    scope: str | None = None,
    state: str | None = "client-state",
    email: str = "peter@initech.example",
    name: str = "Peter Gibbons",
    redirect_uri: str = REDIRECT_URI,
    remembered: bool = False,
) -> SignIn:
    """Run authorize → consent (Allow) → dev login; the code the client is sent back with.

    Each sign-in starts without the browser's remembered customer, so tests that sign many
    customers in through one client get the consent page every time (a remembered
    customer's consent never covers another's: oauth.completion). With ``remembered``,
    a customer who allowed the client before goes straight to the login."""
    if client_id is None:
        client_id = await register(client, tenant, redirect_uris=[redirect_uri])
    if not remembered:
        client.cookies.delete(REMEMBERED_COOKIE)
    pkce = Pkce.new()
    params = authorize_params(client_id, pkce, redirect_uri=redirect_uri, scope=scope, state=state)
    page = await authorize(client, params, tenant)
    if page.status_code == 303:
        # This browser's customer allowed the client before: no consent page, straight on to
        # the login (oauth.remembered).
        allowed = page
    else:
        allowed = await decide(client, flow_of(page), tenant=tenant)
    back = redirect_params(await dev_login(client, allowed, email=email, name=name), redirect_uri)
    assert back.get("state") == state
    return SignIn(
        client_id, back["code"], back.get("state"), back["iss"], pkce, redirect_uri, tenant
    )


# Token and revocation --------------------------------------------------------------------


async def token_request(
    client: httpx.AsyncClient,
    data: Params,
    tenant: str = TENANT,
    *,
    headers: Mapping[str, str] | None = None,
) -> httpx.Response:
    """POST a token request; pairs (rather than a mapping) may repeat a name."""
    pairs = list(data.items()) if isinstance(data, Mapping) else list(data)
    return await client.post(
        oauth_path("token", tenant), content=urlencode(pairs), headers={**FORM, **(headers or {})}
    )


def code_form(signed_in: SignIn, **overrides: str) -> dict[str, str]:
    form = {
        "grant_type": "authorization_code",
        "client_id": signed_in.client_id,
        "code": signed_in.code,
        "redirect_uri": signed_in.redirect_uri,
        "code_verifier": signed_in.pkce.verifier,
    }
    form.update(overrides)
    return form


async def exchange(
    client: httpx.AsyncClient, signed_in: SignIn, **overrides: str
) -> httpx.Response:
    return await token_request(client, code_form(signed_in, **overrides), signed_in.tenant)


def tokens_of(response: httpx.Response, client_id: str, tenant: str = TENANT) -> Tokens:
    assert response.status_code == 200, response.text
    body = response.json()
    return Tokens(body["access_token"], body["refresh_token"], body["scope"], client_id, tenant)


async def obtain_tokens(
    client: httpx.AsyncClient,
    tenant: str = TENANT,
    *,
    client_id: str | None = None,
    scope: str | None = None,
    email: str = "peter@initech.example",
    name: str = "Peter Gibbons",
) -> Tokens:
    """A full sign-in and code exchange: the pair the client ends up with."""
    signed_in = await sign_in(
        client, tenant, client_id=client_id, scope=scope, email=email, name=name
    )
    return tokens_of(await exchange(client, signed_in), signed_in.client_id, tenant)


async def refresh(
    client: httpx.AsyncClient, tokens: Tokens, refresh_token: str | None = None, **extra: str
) -> httpx.Response:
    form = {
        "grant_type": "refresh_token",
        "client_id": tokens.client_id,
        "refresh_token": refresh_token or tokens.refresh,
        **extra,
    }
    return await token_request(client, form, tokens.tenant)


async def revoke(
    client: httpx.AsyncClient, token: str, client_id: str, tenant: str = TENANT
) -> httpx.Response:
    return await client.post(
        oauth_path("revoke", tenant), data={"token": token, "client_id": client_id}, headers=FORM
    )


# MCP -------------------------------------------------------------------------------------

# The sign-in tests' name for a JSON-RPC request (tests/support/jsonrpc.py).
rpc = request


async def mcp(
    client: httpx.AsyncClient,
    body: Json | list[Json],
    tenant: str = TENANT,
    *,
    token: str | None = None,
    authorization: str | None = None,
) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if authorization is not None:
        headers["authorization"] = authorization
    return await client.post(f"/v1/{tenant}/mcp", json=body, headers=headers)


async def whoami(
    client: httpx.AsyncClient, token: str | None, tenant: str = TENANT
) -> httpx.Response:
    return await mcp(client, tool_call("whoami"), tenant, token=token)


async def whoami_result(client: httpx.AsyncClient, token: str, tenant: str = TENANT) -> Json:
    """The structured result of ``whoami`` for a token that must be accepted."""
    response = await whoami(client, token, tenant)
    assert response.status_code == 200, response.text
    result: Json = response.json()["result"]
    assert result["isError"] is False, result
    structured: Json = result["structuredContent"]
    return structured


# The app's own state ---------------------------------------------------------------------


async def expire(app: Frontdesk, table: Table) -> None:
    """Move every row's ``expires_at`` of ``table`` into the past."""
    past = datetime.now(UTC) - timedelta(minutes=1)
    database = app.services.database
    async with database.engine.begin() as connection:
        await connection.execute(update(table).values(expires_at=past))
    # A change made beside the app, as by another instance: on PostgreSQL it reaches the
    # tokens this app keeps in memory with the notice, which this waits for.
    if database.grant_changes is not None:
        await database.grant_changes.caught_up()


async def add_companies(app: Frontdesk, directory: Path, text: str) -> None:
    """Apply a companies file next to the test companies, as an operator would."""
    path = directory / "more-companies.yaml"
    path.write_text(text, encoding="utf-8")
    await apply_companies(app.services.companies, read_companies_file(path))
    app.services.registry.forget()
