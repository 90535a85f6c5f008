"""Request bodies of the OAuth endpoints, read and checked at the edge: form-urlencoded
bodies (RFC 6749 3.1, interface 2.5/2.7) parsed into pydantic models, and the client id a client
authenticates with (interface 4.5: the HTTP Basic username or ``client_id`` in the form)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Annotated, Literal, TypeVar
from urllib.parse import parse_qsl, unquote

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from starlette.requests import Request

from frontdesk.oauth.errors import InvalidClient, InvalidRequest, UnsupportedGrantType

MAX_FORM_BYTES = 16 * 1024
GRANT_TYPES = ("authorization_code", "refresh_token")

Value = Annotated[str, Field(min_length=1)]


class Form(BaseModel):
    # RFC 6749 3.1: parameters the server does not understand are ignored.
    # client_id is read from the raw form by client_id_of, before the request's own checks.
    model_config = ConfigDict(extra="ignore", frozen=True)


class AuthorizationCodeRequest(Form):
    grant_type: Literal["authorization_code"]
    code: Value
    redirect_uri: Value
    code_verifier: Value
    resource: Value | None = None


class RefreshTokenRequest(Form):
    grant_type: Literal["refresh_token"]
    refresh_token: Value
    scope: str | None = None
    resource: Value | None = None


TokenRequest = Annotated[
    AuthorizationCodeRequest | RefreshTokenRequest, Field(discriminator="grant_type")
]
_TOKEN_REQUEST: TypeAdapter[AuthorizationCodeRequest | RefreshTokenRequest] = TypeAdapter(
    TokenRequest
)


class RevocationRequest(Form):
    token: Value
    token_type_hint: str | None = None


FormT = TypeVar("FormT", bound=Form)


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def bounded_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise InvalidRequest("the request body is too large")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise InvalidRequest("the request body is too large")
    return body


# Every parameter a form here is read for: the token and revocation requests, client
# authentication, and the consent and development login pages' own forms.
READ_PARAMETERS = frozenset(
    {
        *AuthorizationCodeRequest.model_fields,
        *RefreshTokenRequest.model_fields,
        *RevocationRequest.model_fields,
        *("client_id", "flow", "decision", "email", "name", "assertion"),
    }
)


async def read_form(request: Request, limit: int = MAX_FORM_BYTES) -> dict[str, str]:
    """A form-urlencoded body of at most ``limit`` bytes. RFC 6749 3.1 and 3.2: a parameter
    that is read, given twice, is refused ("MUST NOT be included more than once"); any other
    is ignored, repeated or not ("MUST ignore unrecognized request parameters")."""
    if media_type(request) != "application/x-www-form-urlencoded":
        raise InvalidRequest("the body must be application/x-www-form-urlencoded")
    body = await bounded_body(request, limit)
    try:
        pairs = parse_qsl(
            body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("the body is not valid form-urlencoded UTF-8") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form and name in READ_PARAMETERS:
            raise InvalidRequest(f"{name} is given more than once")
        form.setdefault(name, value)
    return form


def token_request(form: dict[str, str]) -> AuthorizationCodeRequest | RefreshTokenRequest:
    grant_type = form.get("grant_type")
    if not grant_type:
        raise InvalidRequest("grant_type is required")
    if grant_type not in GRANT_TYPES:
        raise UnsupportedGrantType("grant_type must be authorization_code or refresh_token")
    try:
        return _TOKEN_REQUEST.validate_python(form)
    except ValidationError as error:
        raise _invalid(error) from None


def parse(model: type[FormT], form: dict[str, str]) -> FormT:
    try:
        return model.model_validate(form)
    except ValidationError as error:
        raise _invalid(error) from None


def _invalid(error: ValidationError) -> InvalidRequest:
    problem = error.errors()[0]
    # The discriminated union puts the grant type first in the location.
    name = str(problem["loc"][-1]) if problem["loc"] else "body"
    if problem["type"] == "missing" or problem["type"] == "string_too_short":
        return InvalidRequest(f"{name} is required")
    return InvalidRequest(f"{name} is malformed")


def client_id_of(request: Request, form: Mapping[str, str]) -> str:
    """The client id, from HTTP Basic (as the username) or the form (interface 4.5). Read from
    the raw form: client authentication comes before the request's own checks
    (RFC 7009 2.2.1)."""
    from_header = _basic_username(request.headers.get("authorization"))
    from_form = form.get("client_id") or None
    if from_header is not None and from_form is not None and from_header != from_form:
        raise InvalidRequest("client_id differs between the Authorization header and the form")
    client_id = from_header or from_form
    if not client_id:
        raise InvalidClient("client_id is required (HTTP Basic username or form field)")
    return client_id


def _basic_username(header: str | None) -> str | None:
    """The client id from ``Authorization: Basic``; public clients have no password, and a
    password sent anyway is ignored (clients registered asking for a secret method are
    public too: oauth.register)."""
    if header is None:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise InvalidClient("the Authorization header is malformed") from None
    username, _, _password = decoded.partition(":")
    # RFC 6749 2.3.1: the client id is form-urlencoded before it is put in the header.
    return unquote(username.replace("+", " ")) or None
