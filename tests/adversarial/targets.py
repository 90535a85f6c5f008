"""The parsers bad input meets first, as plain functions of bytes that raise AssertionError
when a rule breaks: shared by the hypothesis tests and the coverage-guided fuzz run.

Each target accepts any bytes. Anything but a clean refusal (the error the contract
answers with) or a result the rest of the service can carry is a failure: an unexpected
exception type, a result that cannot be sent back, a redirect URI that is not one.
"""

from __future__ import annotations

import ipaddress
import re
import string
import unicodedata
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.requests import Request

from frontdesk.config import MAX_BATCH
from frontdesk.oauth.errors import (
    InvalidClientMetadata,
    InvalidRedirectUri,
    InvalidRequest,
    OAuthError,
)
from frontdesk.oauth.forms import MAX_FORM_BYTES, READ_PARAMETERS, read_form
from frontdesk.oauth.register import MAX_REDIRECT_URIS, RegistrationRequest, parse_registration
from frontdesk.protocol.errors import InvalidRequest as RpcInvalidRequest
from frontdesk.protocol.errors import ParseError, RpcError
from frontdesk.protocol.jsonrpc import failure, parse_body, success

FORM_CONTENT_TYPE = b"application/x-www-form-urlencoded"

# RFC 3986 2.2-2.3: the characters a URI may hold; anything else is not a URI.
URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
_REDIRECT_SHAPE = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^/?#\[\]@:]+)"
    r"(?::(?P<port>[0-9]*))?"
    r"(?P<rest>[/?][^#]*)?\Z"
)
MAX_REDIRECT_URI = 2000


def acceptable_redirect_uri(uri: str) -> bool:
    """interface 2.3 and DESIGN, stated independently of the implementation: an absolute URI of
    RFC 3986 characters, https, or http on a loopback host; no userinfo, no fragment."""
    if not uri or len(uri) > MAX_REDIRECT_URI or not set(uri) <= URI_CHARACTERS:
        return False
    shape = _REDIRECT_SHAPE.match(uri)
    if shape is None:
        return False
    port = shape["port"]
    if port and int(port) > 65535:
        return False
    host = shape["host"].lower()
    if host.startswith("["):
        try:
            if ipaddress.ip_address(host[1:-1]).version != 6:
                return False
        except ValueError:
            return False
    scheme = shape["scheme"].lower()
    if scheme == "https":
        return True
    return scheme == "http" and _loopback(host)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# JSON-RPC envelopes (interface 2.9, 2.10) ----------------------------------------------------


def jsonrpc(data: bytes) -> None:
    """parse_body either refuses with a 400 error or yields messages we can answer."""
    try:
        body = parse_body(data)
    except (ParseError, RpcInvalidRequest) as error:
        _check_refusal(error)
        return
    assert 1 <= len(body.messages) <= MAX_BATCH
    assert body.is_batch or len(body.messages) == 1
    for message in body.messages:
        assert type(message.method) is str
        assert message.method
        assert type(message.params) is dict
        assert message.is_notification == (message.id is None)
        assert message.id is None or type(message.id) in (int, str)
        # Every accepted id can be sent back in a reply.
        orjson.dumps(success(message.id, {}))


def _check_refusal(error: RpcError) -> None:
    """A 400 whose envelope can be sent: a valid id or none, an integer code, a message."""
    assert error.status == 400
    request_id = error.request_id
    assert request_id is None or type(request_id) in (int, str)
    envelope = orjson.loads(orjson.dumps(failure(request_id, error)))
    assert envelope["jsonrpc"] == "2.0"
    assert type(envelope["error"]["code"]) is int
    assert type(envelope["error"]["message"]) is str


# Forms (token, revoke, consent, login) --------------------------------------------------


def run_to_completion(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (its only awaits are answered at once)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError("the coroutine suspended")


def form_request(body: bytes, content_type: bytes = FORM_CONTENT_TYPE) -> Request:
    """A Starlette request whose body arrives in one message, as an ASGI server sends it."""
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/initech/oauth/token",
        "headers": [(b"content-type", content_type)],
        "query_string": b"",
    }
    return Request(scope, receive)


def form(data: bytes) -> None:
    """The form parser either refuses with invalid_request or yields one UTF-8 value a name."""
    try:
        parsed = run_to_completion(read_form(form_request(data)))
    except InvalidRequest as error:
        refusal: OAuthError = error
    else:
        _check_form(data, parsed)
        return
    assert (refusal.status, refusal.error) == (400, "invalid_request")


def _check_form(data: bytes, parsed: Any) -> None:
    assert len(data) <= MAX_FORM_BYTES
    assert isinstance(parsed, dict)
    for name, value in parsed.items():
        assert type(name) is str
        assert type(value) is str
        # Values reach hashing and PostgreSQL: each must be real text.
        name.encode("utf-8")
        value.encode("utf-8")
    # The body was ASCII, and no parameter the endpoints read was given twice (RFC 6749
    # 3.1); unrecognised ones are ignored, repeated or not (3.2), and the first value kept.
    assert data.isascii()
    given = parse_qsl(data.decode("ascii"), keep_blank_values=True)
    names = [name for name, _ in given]
    assert {*names} == parsed.keys()
    assert all(names.count(name) == 1 for name in parsed if name in READ_PARAMETERS)


# Registration (interface 2.3) ----------------------------------------------------------------

# Unicode categories a client_name may not hold (oauth/client_names.py).
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


def registration_document(document: object) -> bool:
    """parse_registration refuses with a 400 error or accepts only what interface 2.3 allows;
    True when the registration was accepted."""
    try:
        request = parse_registration(document, [])
    except (InvalidClientMetadata, InvalidRedirectUri) as error:
        refusal: OAuthError = error
    else:
        _check_registration(document, request)
        return True
    assert refusal.status == 400
    return False


def _check_registration(document: object, request: RegistrationRequest) -> None:
    assert isinstance(document, dict)
    assert 1 <= len(request.redirect_uris) <= MAX_REDIRECT_URIS
    for uri in request.redirect_uris:
        assert acceptable_redirect_uri(uri), uri
    name = request.client_name
    if name is not None:
        assert 0 < len(name) <= 200
        # Nothing a consent page would not show as itself: no control, format (bidi,
        # zero-width), private-use, surrogate or line/paragraph separator character.
        assert not any(unicodedata.category(char) in _HIDDEN for char in name), name
        assert name == name.strip()
        name.encode("utf-8")
    # Whatever method was asked for, it was one a client could mean (a string); the
    # client is registered public whatever it was (RFC 7591 3.2.1, oauth/register.py).
    method = document.get("token_endpoint_auth_method")
    assert method is None or isinstance(method, str)
    # What is stored must serialise as the JSON it came from.
    orjson.dumps(request.redirect_uris)


def registration(data: bytes) -> None:
    """A registration body: not JSON is refused by the route; any JSON meets the validator."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    registration_document(document)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "jsonrpc": jsonrpc,
    "form": form,
    "registration": registration,
}
