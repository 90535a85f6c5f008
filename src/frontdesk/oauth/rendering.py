"""The one place OAuth errors become responses: a JSON body, a 303 back to the client,
or an HTML page for the customer."""

from __future__ import annotations

from typing import Any

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from frontdesk.oauth.errors import (
    AuthorizePage,
    AuthorizeRedirect,
    OAuthError,
    RateLimited,
    TemporarilyUnavailable,
)
from frontdesk.oauth.pages import error_page
from frontdesk.oauth.redirects import redirect_with
from frontdesk.observability import metrics
from frontdesk.observability.log_throttle import outage_warnings
from frontdesk.store.outage import is_outage

log = structlog.get_logger(__name__)

NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}


class JSON(JSONResponse):
    """A JSON response rendered by orjson: the same compact UTF-8 as Starlette's, faster,
    and every token response is one (docs/decisions/hot-path-records.md)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


async def render_oauth_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, OAuthError)
    if isinstance(error, AuthorizeRedirect):
        location = redirect_with(
            error.redirect_uri,
            {
                "error": error.code,
                "error_description": error.description,
                "state": error.state,
                "iss": error.issuer,
            },
        )
        return RedirectResponse(location, status_code=303, headers=NO_STORE)
    headers = dict(NO_STORE)
    if isinstance(error, RateLimited | TemporarilyUnavailable):
        headers["retry-after"] = str(error.retry_after)
    if error.status == 401 and request.headers.get("authorization", "").lower().startswith("basic"):
        # RFC 6749 5.2: a client that tried HTTP Basic is told which scheme failed.
        headers["www-authenticate"] = 'Basic realm="frontdesk"'
    body = {"error": error.error, "error_description": error.description}
    return JSON(body, status_code=error.status, headers=headers)


async def render_authorize_page(request: Request, error: Exception) -> Response:
    assert isinstance(error, AuthorizePage)
    company_name = getattr(request.state, "company_name", "Sign-in")
    response = error_page(request, error.status, error.title, error.message, company_name)
    if error.retry_after is not None:
        response.headers["retry-after"] = str(error.retry_after)
    return response


# The pages a customer's browser opens: an outage there is a page, not JSON.
BROWSER_STEPS = (
    "/authorize",
    "/consent",
    "/login",
    "/callback",
    "/account",
    "/account/signin",
    "/account/revoke",
    "/account/signout",
)
# The console's pages (frontdesk.console), every one of them a browser's.
CONSOLE = "/console/"


async def render_outage(request: Request, error: Exception) -> Response:
    """The database is unreachable: 503, so clients and customers retry, never a 500."""
    if not is_outage(error):
        raise error
    outage_warnings.warning(log, "database_unavailable", error=type(error).__name__)
    metrics.outage_answered("database")
    path = request.url.path
    if path.endswith(BROWSER_STEPS) or path.startswith(CONSOLE):
        console = path.startswith(CONSOLE)
        company_name = getattr(request.state, "company_name", "Sign-in")
        response = error_page(
            request,
            503,
            "The console is briefly unavailable" if console else "Sign-in is briefly unavailable",
            "Please try again in a moment.",
            "Frontdesk console" if console else company_name,
        )
        response.headers["retry-after"] = "1"
        return response
    body = {
        "error": "temporarily_unavailable",
        "error_description": "the service cannot reach its database; retry shortly",
    }
    return JSON(body, status_code=503, headers={**NO_STORE, "retry-after": "1"})
