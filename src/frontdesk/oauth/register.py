"""``POST /v1/{tenantKey}/oauth/register``: dynamic client registration (RFC 7591, interface 2.3,
2.4, 4.4). Clients are public.

As lenient as RFC 7591 3.2.1 allows: the server registers the client with the values it
supports and answers with them. A client asking for a secret method (Claude's connector
sends ``client_secret_post``) is registered as public and told ``none``; grant and response
types that include ours are answered with ours; metadata we do not use is ignored, and
``null`` stands for an absent member. What the contract refuses is refused: no redirect
URI, or one that breaks the redirect rules (oauth.redirects); so is what no client could
mean: a member of the wrong type, and a name the consent page could not show as sent
(oauth.client_names).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.limits.ratelimit import RateLimit, parse_rate_limit
from frontdesk.oauth.client_names import ClientNameRefused, clean_client_name
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.credentials import Kind, mint
from frontdesk.oauth.errors import InvalidClientMetadata, InvalidRedirectUri
from frontdesk.oauth.forms import bounded_body, media_type
from frontdesk.oauth.redirects import check_redirect_uri
from frontdesk.oauth.rendering import JSON, NO_STORE
from frontdesk.store.clients import Client

log = structlog.get_logger(__name__)

MAX_REGISTRATION_BYTES = 64 * 1024
# The contract sets no upper bound; this many covers every client seen, and bounds what one
# registration stores.
MAX_REDIRECT_URIS = 20
GRANT_TYPES = ["authorization_code", "refresh_token"]
RESPONSE_TYPES = ["code"]


class RegistrationRequest(BaseModel):
    # Real clients send more (logo_uri, scope, software_id, ...): ignored (RFC 7591 2).
    model_config = ConfigDict(extra="ignore")

    redirect_uris: list[str] = Field(min_length=1, max_length=MAX_REDIRECT_URIS)
    client_name: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None
    # Any method is registered as none (RFC 7591 3.2.1), but it must be one a client
    # could have meant: a string.
    token_endpoint_auth_method: str | None = None

    @field_validator("client_name", mode="before")
    @classmethod
    def _shown_name(cls, value: object) -> str | None:
        try:
            return clean_client_name(value)
        except ClientNameRefused as refused:
            raise PydanticCustomError("client_name", str(refused)) from None


def parse_registration(document: Any, private_schemes: list[str]) -> RegistrationRequest:
    if not isinstance(document, dict):
        raise InvalidClientMetadata("the registration must be a JSON object")
    try:
        request = RegistrationRequest.model_validate(document)
    except ValidationError as error:
        problem = error.errors()[0]
        if problem["type"] == "client_name":
            raise InvalidClientMetadata(problem["msg"]) from None
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
        await services.limit(request, self._limit, "register", services.address(request))
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
