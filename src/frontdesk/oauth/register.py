"""``POST /v1/{tenantKey}/oauth/register``: dynamic client registration (RFC 7591, SPEC 2.3,
2.4, 4.4). Clients are public.

As lenient as RFC 7591 3.2.1 allows: the server registers the client with the values it
supports and answers with them. A client asking for a secret method (Claude's connector
sends ``client_secret_post``) is registered as public and told ``none``; grant and response
types that include ours are answered with ours; metadata we do not use is ignored, and a
name with control characters is cleaned rather than refused. What the contract refuses is
refused: no redirect URI, or one that breaks the redirect rules (oauth.redirects).
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import Any

import orjson
import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.credentials import Kind, mint
from frontdesk.oauth.errors import InvalidClientMetadata, InvalidRedirectUri
from frontdesk.oauth.forms import bounded_body, media_type
from frontdesk.oauth.redirects import check_redirect_uri
from frontdesk.oauth.rendering import JSON, NO_STORE
from frontdesk.ratelimit import RateLimit, parse_rate_limit
from frontdesk.store.clients import Client

log = structlog.get_logger(__name__)

MAX_REGISTRATION_BYTES = 64 * 1024
# The contract sets no upper bound; this many covers every client seen, and bounds what one
# registration stores.
MAX_REDIRECT_URIS = 20
MAX_CLIENT_NAME = 200
# Unicode categories that are not shown as themselves: controls (C0, C1), formatting
# (bidirectional overrides, zero-width characters), line and paragraph separators,
# surrogates and unassigned code points.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
GRANT_TYPES = ["authorization_code", "refresh_token"]
RESPONSE_TYPES = ["code"]


class RegistrationRequest(BaseModel):
    # Real clients send more (logo_uri, scope, software_id, ...): ignored (RFC 7591 2).
    model_config = ConfigDict(extra="ignore")

    redirect_uris: list[str] = Field(min_length=1, max_length=MAX_REDIRECT_URIS)
    client_name: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None

    @field_validator("client_name", mode="before")
    @classmethod
    def _printable_name(cls, value: object) -> str | None:
        """A name is shown on the consent page: control and formatting characters go (a
        right-to-left override would make "Claude" read backwards there; PostgreSQL cannot
        store a NUL either), and so does a name that is not a string."""
        if not isinstance(value, str):
            return None
        cleaned = "".join(
            char for char in value if unicodedata.category(char) not in HIDDEN_CATEGORIES
        )
        return cleaned.strip()[:MAX_CLIENT_NAME] or None


def parse_registration(document: Any, private_schemes: list[str]) -> RegistrationRequest:
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
    for index, uri in enumerate(request.redirect_uris):
        try:
            check_redirect_uri(uri, private_schemes)
        except InvalidRedirectUri as refused:
            raise InvalidRedirectUri(f"redirect_uris[{index}]: {refused.description}") from None
    # RFC 7591 2.1: a client may list more than we support; it must be able to use ours.
    if request.grant_types is not None and "authorization_code" not in request.grant_types:
        raise InvalidClientMetadata(
            "grant_types must include authorization_code (the only way to sign in here)"
        )
    if request.response_types is not None and "code" not in request.response_types:
        raise InvalidClientMetadata('response_types must include "code"')
    return request


class Registration:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services
        self._limit: RateLimit = parse_rate_limit(services.settings.registration_rate_limit)

    async def register(self, request: Request) -> Response:
        services = self._services
        signin = await services.signin_company(request)
        await services.limit(self._limit, "register", services.address(request))
        if media_type(request) != "application/json":
            raise InvalidClientMetadata("the registration must be sent as application/json")
        body = await bounded_body(request, MAX_REGISTRATION_BYTES)
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise InvalidClientMetadata("the registration is not valid JSON") from None
        registration = parse_registration(document, signin.setup.native_redirect_schemes)
        now = datetime.now(UTC)
        client = Client(
            client_id=mint(Kind.CLIENT),
            tenant_key=signin.tenant_key,
            client_name=registration.client_name,
            redirect_uris=list(registration.redirect_uris),
            metadata={},
            created_at=now,
        )
        await services.clients.register(client)
        log.info("client_registered", tenant=signin.tenant_key, client_id=client.client_id)
        answer: dict[str, Any] = {
            "client_id": client.client_id,
            "client_id_issued_at": int(now.timestamp()),
            "redirect_uris": client.redirect_uris,
            # RFC 7591 3.2.1: what was registered, whatever was asked for.
            "token_endpoint_auth_method": "none",
            "grant_types": GRANT_TYPES,
            "response_types": RESPONSE_TYPES,
        }
        if client.client_name is not None:
            answer["client_name"] = client.client_name
        return JSON(answer, status_code=201, headers=NO_STORE)
