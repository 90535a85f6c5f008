"""What a path no route serves is answered with: 404, in the error body of the path's
family, so a client reads the refusal as it reads any other from that family.

Every path is served under one spelling only. Starlette would otherwise answer a path
with a trailing slash (or without one) by a 307 to the other spelling, built from the
scheme the server sees: behind a proxy that ends TLS that is ``http://``, and a client
that follows it sends a token request, code and all, again in clear text. So the router
redirects nothing (``redirect_slashes`` off in ``app``) and a path off by a slash is as
unknown as any other.
"""

from __future__ import annotations

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from frontdesk.protocol.errors import INVALID_REQUEST

NO_ROUTE = "Nothing is served at this path; paths take no trailing slash"
# Paths whose errors are OAuth error objects (RFC 6749 5.2): the authorization server's
# own, and the discovery documents of it and of the protected resource.
_OAUTH_DISCOVERY = (
    "/.well-known/oauth-authorization-server/",
    "/.well-known/openid-configuration/",
    "/.well-known/oauth-protected-resource/",
)
_NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}


async def render_unrouted(request: Request, error: Exception) -> Response:
    """The 404 for a path no route matches (Starlette raises it as an HTTPException)."""
    assert isinstance(error, HTTPException)
    path = request.url.path
    family = _family(path)
    if family == "mcp":
        envelope = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": f"{NO_ROUTE} (the MCP endpoint)"},
        }
        return _json(envelope, error.status_code)
    if family in ("oauth", "admin"):
        body = {"error": "not_found", "error_description": NO_ROUTE}
        return _json(body, error.status_code, _NO_STORE)
    return PlainTextResponse(error.detail, error.status_code, headers=error.headers)


def _family(path: str) -> str | None:
    if path.startswith(_OAUTH_DISCOVERY):
        return "oauth"
    # The admin API's errors have the OAuth errors' shape (frontdesk.admin_api.errors).
    if path == "/admin/v1" or path.startswith("/admin/v1/"):
        return "admin"
    parts = path.split("/", 4)
    # /v1/{tenantKey}/mcp... and /v1/{tenantKey}/oauth...
    if len(parts) >= 4 and parts[0] == "" and parts[1] == "v1":
        if parts[3] == "mcp":
            return "mcp"
        if parts[3] == "oauth":
            return "oauth"
    return None


def _json(body: object, status: int, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status, headers, media_type="application/json")
