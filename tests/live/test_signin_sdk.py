"""Customer sign-in driven by the MCP Python SDK's own OAuth client (``OAuthClientProvider``)
against Frontdesk running as a real process: the SDK discovers, registers, authorizes,
exchanges, refreshes and retries by itself; only the customer's browser is played here."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.live.conftest import LiveService
from tests.live.customer_browser import SIGNED_IN_AS, CustomerBrowser, Step
from tests.support.https_documents import HttpsDocuments

pytestmark = pytest.mark.live

TENANT = "initech"
CLIENT_NAME = "Frontdesk SDK tests"
DOCUMENT_CLIENT_NAME = "Frontdesk SDK tests (metadata document)"
# Never requested: the played browser reads the redirect to it instead of following it.
REDIRECT_URI = "http://127.0.0.1:33418/callback"
SECURITY_SCHEMES = [{"type": "noauth"}, {"type": "oauth2", "scopes": ["profile", "email"]}]
TIMEOUT = 30.0


class MemoryStorage:
    """The SDK's TokenStorage, kept in memory so tests can read and tamper with it."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class DevLoginBrowser:
    """The SDK's redirect and callback handlers: ``open`` plays the customer's browser (Allow
    on the consent page, then the dev login) and ``callback`` hands the SDK the code."""

    browser: CustomerBrowser = field(default_factory=CustomerBrowser)
    redirect: httpx.URL | None = None

    @property
    def steps(self) -> list[Step]:
        return self.browser.steps

    @property
    def consent_pages(self) -> list[str]:
        return self.browser.consent_pages

    async def open(self, authorize_url: str) -> None:
        self.redirect = await self.browser.sign_in(authorize_url)

    async def callback(self) -> AuthorizationCodeResult:
        assert self.redirect is not None
        params = self.redirect.params
        return AuthorizationCodeResult(
            code=params["code"], state=params.get("state"), iss=params.get("iss")
        )


@dataclass
class SdkSession:
    """A connected SDK client whose OAuth provider, storage and traffic the test can see."""

    client: Client
    provider: OAuthClientProvider
    storage: MemoryStorage
    browser: DevLoginBrowser
    traffic: list[Step]

    @property
    def tokens(self) -> OAuthToken:
        assert self.storage.tokens is not None
        return self.storage.tokens

    @property
    def client_id(self) -> str:
        assert self.storage.client_info is not None
        return self.storage.client_info.client_id


@contextlib.asynccontextmanager
async def sdk_session(
    service: LiveService, client_metadata_url: str | None = None
) -> AsyncIterator[SdkSession]:
    """The SDK connected as a guest to initech, ready to sign a customer in when challenged.

    With ``client_metadata_url`` the SDK uses it as its client id where the authorization
    server says it supports metadata documents, and registers otherwise.
    """
    storage = MemoryStorage()
    browser = DevLoginBrowser()
    provider = OAuthClientProvider(
        service.mcp_url(TENANT),
        OAuthClientMetadata(redirect_uris=[AnyUrl(REDIRECT_URI)], client_name=CLIENT_NAME),
        storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
        client_metadata_url=client_metadata_url,
    )
    traffic: list[Step] = []

    async def record(response: httpx2.Response) -> None:
        request = response.request
        traffic.append(Step(request.method, request.url.path, response.status_code))

    async with (
        httpx2.AsyncClient(
            auth=provider, timeout=TIMEOUT, event_hooks={"response": [record]}
        ) as http,
        Client(streamable_http_client(service.mcp_url(TENANT), http_client=http)) as client,
    ):
        yield SdkSession(client, provider, storage, browser, traffic)


@contextlib.asynccontextmanager
async def signed_in(
    service: LiveService, client_metadata_url: str | None = None
) -> AsyncIterator[SdkSession]:
    """An SDK session whose first whoami signed the customer in."""
    async with sdk_session(service, client_metadata_url) as session:
        first = await session.client.call_tool("whoami", {})
        assert first.structured_content == SIGNED_IN_AS, first
        yield session


def assert_in_order(traffic: Sequence[Step], expected: Sequence[Step]) -> None:
    """Every expected step happened, in this order (other requests may come in between)."""
    remaining = iter(traffic)
    for step in expected:
        assert any(seen == step for seen in remaining), (
            f"{step} missing (in order) from:\n" + "\n".join(map(str, traffic))
        )


def whoami_call() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}},
    }


async def call_whoami(http: httpx.AsyncClient, service: LiveService, token: str) -> httpx.Response:
    """whoami over plain HTTP with a bearer token, outside any SDK session."""
    return await http.post(
        service.mcp_url(TENANT), json=whoami_call(), headers={"Authorization": f"Bearer {token}"}
    )


def oauth_url(service: LiveService, endpoint: str) -> str:
    return f"{service.base_url}/v1/{TENANT}/oauth/{endpoint}"


async def test_sdk_signs_in_on_a_personal_tool_and_retries_as_the_customer(
    live_service: LiveService,
) -> None:
    """whoami as a guest → 401 → the SDK discovers, registers, authorizes, exchanges, retries."""
    async with sdk_session(live_service) as session:
        result = await session.client.call_tool("whoami", {})

    assert not result.is_error
    assert result.structured_content == SIGNED_IN_AS
    mcp = f"/v1/{TENANT}/mcp"
    oauth = f"/v1/{TENANT}/oauth"
    first_challenge = session.traffic.index(Step("POST", mcp, 401))
    assert not any(oauth in step.path for step in session.traffic[:first_challenge])
    assert_in_order(
        session.traffic[first_challenge:],
        [
            Step("POST", mcp, 401),
            Step("GET", f"/.well-known/oauth-protected-resource{mcp}", 200),
            Step("GET", f"/.well-known/oauth-authorization-server{oauth}", 200),
            Step("POST", f"{oauth}/register", 201),
            Step("POST", f"{oauth}/token", 200),
            Step("POST", mcp, 200),
        ],
    )
    assert session.browser.steps == [
        Step("GET", f"{oauth}/authorize", 200),
        Step("POST", f"{oauth}/consent", 303),
        Step("GET", f"{oauth}/login", 200),
        Step("POST", f"{oauth}/login", 303),
    ]
    [consent_page] = session.browser.consent_pages
    assert CLIENT_NAME in consent_page
    assert "Initech" in consent_page
    redirect = session.browser.redirect
    assert redirect is not None
    assert str(redirect.copy_with(query=None)) == REDIRECT_URI
    assert redirect.params["iss"] == f"{live_service.base_url}{oauth}"
    assert redirect.params["state"]
    assert session.storage.client_info is not None
    assert session.storage.client_info.token_endpoint_auth_method == "none"
    assert session.storage.client_info.client_name == CLIENT_NAME
    assert session.tokens.token_type == "Bearer"
    assert session.tokens.refresh_token is not None
    assert session.tokens.expires_in == 3600


async def test_sdk_refreshes_an_expired_token_and_the_spent_refresh_token_is_refused(
    live_service: LiveService,
) -> None:
    """An expired token is refreshed with no new sign-in; the spent refresh token is refused."""
    async with signed_in(live_service) as session:
        before = session.tokens
        # What the SDK sees an hour later: its record of the token's expiry has passed.
        session.provider.context.token_expiry_time = time.time() - 1
        since = len(session.traffic)
        result = await session.client.call_tool("whoami", {})
        after = session.tokens
        refresh_traffic = session.traffic[since:]

    assert result.structured_content == SIGNED_IN_AS
    # The refresh goes out before the call, and the call is never challenged.
    assert refresh_traffic[0] == Step("POST", f"/v1/{TENANT}/oauth/token", 200)
    assert [step.status for step in refresh_traffic[1:]] == [200] * (len(refresh_traffic) - 1)
    assert len(session.browser.steps) == 4, "the refresh must not open the browser again"
    assert after.refresh_token is not None
    assert after.refresh_token != before.refresh_token
    assert after.access_token != before.access_token

    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        replayed = await http.post(
            oauth_url(live_service, "token"),
            data={
                "grant_type": "refresh_token",
                "refresh_token": before.refresh_token or "",
                "client_id": session.client_id,
            },
        )
        # RFC 9700 4.14.2: the replay ends the family, so the new pair dies with it.
        after_replay = await call_whoami(http, live_service, after.access_token)

    assert replayed.status_code == 400, replayed.text
    assert replayed.json()["error"] == "invalid_grant"
    assert after_replay.status_code == 401
    assert 'error="invalid_token"' in after_replay.headers["www-authenticate"]


async def test_revoked_access_token_is_refused_and_the_sdk_signs_in_again(
    live_service: LiveService,
) -> None:
    """After POST /revoke the access token gets 401; the SDK then runs a fresh sign-in."""
    async with signed_in(live_service) as session:
        token = session.tokens.access_token
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            before = await call_whoami(http, live_service, token)
            revoked = await http.post(
                oauth_url(live_service, "revoke"),
                data={"token": token, "client_id": session.client_id},
            )
            after = await call_whoami(http, live_service, token)
        again = await session.client.call_tool("whoami", {})

    assert before.status_code == 200, before.text
    assert before.json()["result"]["structuredContent"] == SIGNED_IN_AS
    assert revoked.status_code == 200
    assert revoked.content == b""
    assert after.status_code == 401
    challenge = after.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata=" in challenge
    assert again.structured_content == SIGNED_IN_AS
    assert len(session.browser.consent_pages) == 2
    assert session.tokens.access_token != token


async def test_guest_tool_listing_offers_both_security_schemes_on_every_tool(
    live_service: LiveService,
) -> None:
    """A guest's tools/list at a company with sign-in puts noauth and oauth2 on every tool."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        listed = await http.post(
            live_service.mcp_url(TENANT), json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
    async with Client(live_service.mcp_url(TENANT)) as client:
        sdk_listing = await client.list_tools()

    assert listed.status_code == 200, listed.text
    tools = listed.json()["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["echo", "whoami"]
    for tool in tools:
        assert tool["securitySchemes"] == SECURITY_SCHEMES, tool["name"]
    # The SDK's Tool model keeps _meta, where the schemes are mirrored.
    for sdk_tool in sdk_listing.tools:
        assert sdk_tool.meta is not None
        assert sdk_tool.meta["securitySchemes"] == SECURITY_SCHEMES, sdk_tool.name


def publish_client_document(documents: HttpsDocuments, path: str) -> str:
    """A client metadata document for the SDK at ``path``; its URL is the client id."""
    client_id = documents.url(path)
    documents.serve_json(
        path,
        {
            "client_id": client_id,
            "client_name": DOCUMENT_CLIENT_NAME,
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    return client_id


async def test_sdk_signs_in_with_a_client_id_metadata_document_and_registers_nothing(
    documents_live_service: LiveService, https_documents: HttpsDocuments
) -> None:
    """With client_metadata_url the SDK's client id is that URL: no registration, one sign-in."""
    client_id = publish_client_document(https_documents, "/clients/python-sdk-signin.json")

    async with sdk_session(documents_live_service, client_id) as session:
        result = await session.client.call_tool("whoami", {})

    assert result.structured_content == SIGNED_IN_AS
    oauth = f"/v1/{TENANT}/oauth"
    assert not any(step.path == f"{oauth}/register" for step in session.traffic), session.traffic
    assert_in_order(
        session.traffic,
        [
            Step("POST", f"/v1/{TENANT}/mcp", 401),
            Step("GET", f"/.well-known/oauth-authorization-server{oauth}", 200),
            Step("POST", f"{oauth}/token", 200),
            Step("POST", f"/v1/{TENANT}/mcp", 200),
        ],
    )
    assert session.client_id == client_id
    assert https_documents.requests("/clients/python-sdk-signin.json") >= 1
    [consent_page] = session.browser.consent_pages
    assert DOCUMENT_CLIENT_NAME in consent_page
    redirect = session.browser.redirect
    assert redirect is not None
    assert str(redirect.copy_with(query=None)) == REDIRECT_URI
    assert session.tokens.refresh_token is not None


async def test_sdk_refreshes_and_revokes_as_a_client_id_metadata_document(
    documents_live_service: LiveService, https_documents: HttpsDocuments
) -> None:
    """The token and revoke endpoints take the URL client id: refresh, then revoke, both work."""
    client_id = publish_client_document(https_documents, "/clients/python-sdk-refresh.json")

    async with signed_in(documents_live_service, client_id) as session:
        before = session.tokens
        session.provider.context.token_expiry_time = time.time() - 1
        since = len(session.traffic)
        refreshed = await session.client.call_tool("whoami", {})
        after = session.tokens
        refresh_traffic = session.traffic[since:]
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            revoked = await http.post(
                oauth_url(documents_live_service, "revoke"),
                data={"token": after.refresh_token or "", "client_id": client_id},
            )
            after_revoke = await call_whoami(http, documents_live_service, after.access_token)

    assert refreshed.structured_content == SIGNED_IN_AS
    assert refresh_traffic[0] == Step("POST", f"/v1/{TENANT}/oauth/token", 200)
    assert len(session.browser.consent_pages) == 1, "the refresh must not open the browser again"
    assert after.refresh_token not in (None, before.refresh_token)
    assert revoked.status_code == 200, revoked.text
    # RFC 7009 2.1: revoking the refresh token ends the access tokens of its grant too.
    assert after_revoke.status_code == 401
