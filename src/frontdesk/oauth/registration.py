"""Dynamic client registration (RFC 7591, SPEC 2.3/2.4): public clients only."""

from __future__ import annotations

import ipaddress
import re
import string
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from frontdesk.oauth.credentials import Kind, mint
from frontdesk.oauth.errors import InvalidClientMetadata, InvalidRedirectUri
from frontdesk.store.clients import Client, ClientRepository

LOOPBACK_NAMES = frozenset({"localhost"})
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
# RFC 3986 2.2-2.3: every character a URI may hold. Anything else (a quote, a backslash,
# a caret, non-ASCII) is not a URI: the Location header would carry it re-encoded, so the
# browser would go somewhere other than what was registered and shown on the consent page.
URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
# RFC 3986 3.2.2-3.2.3: a bracketed IP literal or a name, then an optional port. urlsplit
# reads "evil.example[::1]" or "[::1]evil" as the loopback host ::1; browsers refuse both.
HOST_AND_PORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\[\]:]*)(:[0-9]*)?\Z")


class RegistrationRequest(BaseModel):
    # Real clients send more (logo_uri, scope, grant_types, ...): tolerated, and kept
    # only where we understand it.
    model_config = ConfigDict(extra="allow")

    redirect_uris: list[str] = Field(min_length=1, max_length=MAX_REDIRECT_URIS)
    client_name: str | None = Field(default=None, max_length=200)
    token_endpoint_auth_method: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_redirect_uri(uri: str) -> None:
    """https anywhere, http only on a loopback host; no fragment, no credentials."""
    if len(uri) > MAX_URI_LENGTH or not URI_CHARACTERS.issuperset(uri):
        raise InvalidRedirectUri(f"redirect URI is malformed: {uri[:100]!r}")
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        parts.port  # noqa: B018 -- raises ValueError on a malformed port
    except ValueError:
        raise InvalidRedirectUri(f"redirect URI is malformed: {uri[:100]!r}") from None
    if not HOST_AND_PORT.match(parts.netloc.rpartition("@")[2]):
        raise InvalidRedirectUri(f"redirect URI is malformed: {uri[:100]!r}")
    if parts.scheme not in ("https", "http") or not host:
        raise InvalidRedirectUri(f"redirect URI must be https (or http on loopback): {uri!r}")
    if parts.scheme == "http" and not is_loopback(host):
        raise InvalidRedirectUri(f"http redirect URIs must be on a loopback host: {uri!r}")
    if parts.fragment or "#" in uri:
        raise InvalidRedirectUri(f"redirect URI must not have a fragment: {uri!r}")
    if parts.username is not None or parts.password is not None:
        raise InvalidRedirectUri(f"redirect URI must not carry credentials: {uri!r}")


def parse_registration(document: Any) -> RegistrationRequest:
    if not isinstance(document, dict):
        raise InvalidClientMetadata("the registration must be a JSON object")
    try:
        request = RegistrationRequest.model_validate(document)
    except ValidationError as error:
        problem = error.errors()[0]
        field = ".".join(str(part) for part in problem["loc"]) or "body"
        if problem["loc"] and problem["loc"][0] == "redirect_uris":
            raise InvalidRedirectUri(f"{field}: {problem['msg']}") from None
        raise InvalidClientMetadata(f"{field}: {problem['msg']}") from None
    for uri in request.redirect_uris:
        check_redirect_uri(uri)
    if request.client_name is not None and any(
        ord(char) < 0x20 or ord(char) == 0x7F for char in request.client_name
    ):
        # Shown on the consent page, and PostgreSQL cannot store a NUL.
        raise InvalidClientMetadata("client_name must not hold control characters")
    if request.token_endpoint_auth_method not in (None, "none"):
        raise InvalidClientMetadata("clients are public: token_endpoint_auth_method must be none")
    if request.grant_types is not None and not set(request.grant_types) <= {
        "authorization_code",
        "refresh_token",
    }:
        raise InvalidClientMetadata("grant_types may hold authorization_code and refresh_token")
    if request.response_types is not None and set(request.response_types) != {"code"}:
        raise InvalidClientMetadata('response_types must be ["code"]')
    return request


async def register(
    clients: ClientRepository, tenant_key: str, request: RegistrationRequest
) -> dict[str, Any]:
    now = datetime.now(UTC)
    client = Client(
        client_id=mint(Kind.CLIENT),
        tenant_key=tenant_key,
        client_name=request.client_name,
        redirect_uris=list(request.redirect_uris),
        metadata={},
        created_at=now,
    )
    await clients.add(client)
    response: dict[str, Any] = {
        "client_id": client.client_id,
        "client_id_issued_at": int(now.timestamp()),
        "redirect_uris": client.redirect_uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    if client.client_name is not None:
        response["client_name"] = client.client_name
    return response
