"""What an OAuth client does over HTTP around the browser: register, build the authorize
URL (PKCE S256 and state), exchange the code, and call a tool with the access token."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.live.conftest import LiveService

TIMEOUT = 15.0


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class OAuthClient:
    """A client registered at one company of a running service."""

    service: LiveService
    tenant_key: str
    client_id: str
    redirect_uri: str

    @property
    def issuer(self) -> str:
        return f"{self.service.base_url}/v1/{self.tenant_key}/oauth"

    def authorization(self, scope: str = "profile email") -> Authorization:
        return Authorization(self, scope)

    def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        """The token response for a code; fails the test unless it is 200."""
        response = httpx.post(
            f"{self.issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect_uri,
                "code_verifier": verifier,
                "client_id": self.client_id,
            },
            timeout=TIMEOUT,
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def whoami(self, access_token: str) -> dict[str, Any]:
        """The whoami tool's structured answer for this token; fails unless the call is 200."""
        response = httpx.post(
            self.service.mcp_url(self.tenant_key),
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}},
            },
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=TIMEOUT,
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["result"]
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured


@dataclass(frozen=True)
class Authorization:
    """One authorize request: a fresh PKCE verifier and state."""

    client: OAuthClient
    scope: str
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    @property
    def url(self) -> str:
        query = {
            "response_type": "code",
            "client_id": self.client.client_id,
            "redirect_uri": self.client.redirect_uri,
            "code_challenge": _challenge(self.verifier),
            "code_challenge_method": "S256",
            "scope": self.scope,
            "state": self.state,
            "resource": self.client.service.mcp_url(self.client.tenant_key),
        }
        return f"{self.client.issuer}/authorize?{urlencode(query)}"


def register_client(
    service: LiveService, tenant_key: str, redirect_uri: str, client_name: str
) -> OAuthClient:
    """Dynamic client registration (interface 4.4); fails the test unless it is 201."""
    response = httpx.post(
        f"{service.base_url}/v1/{tenant_key}/oauth/register",
        json={"redirect_uris": [redirect_uri], "client_name": client_name},
        timeout=TIMEOUT,
    )
    assert response.status_code == 201, response.text
    return OAuthClient(service, tenant_key, response.json()["client_id"], redirect_uri)


def mcp_status(service: LiveService, tenant_key: str, access_token: str) -> int:
    """The MCP endpoint's status for a tools/list with this access token."""
    response = httpx.post(
        service.mcp_url(tenant_key),
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {access_token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=TIMEOUT,
    )
    return response.status_code
