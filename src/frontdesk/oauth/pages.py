"""The HTML pages of a sign-in: consent, the dev login form and errors.

Jinja2 with autoescape, and headers that keep the pages out of frames (clickjacking),
caches and Referer headers. A company's branding (companies.branding) adds its colour to
the page's own style and its logo's origin to the Content-Security-Policy, for images
only: nothing else the policy forbids is loosened for a company.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from frontdesk.companies.branding import Branding

if TYPE_CHECKING:
    from starlette.templating import Jinja2Templates


def possessive(name: str) -> str:
    """``name`` as an owner, in the style the pages follow: "Initech's", and "Demo Coffee
    Roasters'" for a name that ends in s (never "Roasters's")."""
    name = name.rstrip()
    return f"{name}'" if name[-1:] in ("s", "S") else f"{name}'s"


@cache
def _templates() -> Jinja2Templates:
    # Built on the first page, not at import: a worker that only serves MCP and tokens
    # never loads Jinja2 (docs/decisions/memory.md).
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.templating import Jinja2Templates

    environment = Environment(
        loader=PackageLoader("frontdesk", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        auto_reload=False,
    )
    environment.filters["possessive"] = possessive
    return Jinja2Templates(env=environment)


CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "pragma": "no-cache",
}

SCOPE_TEXT = {
    "profile": "see your name",
    "email": "see your email address",
}


def security_headers(branding: Branding | None) -> dict[str, str]:
    """The headers of every page; with a logo, its https origin may serve images."""
    origin = None if branding is None else branding.logo_origin
    if origin is None:
        return SECURITY_HEADERS
    # The origin is a validated https scheme, host and port (companies.branding): it
    # cannot end the directive or add another.
    policy = f"{CONTENT_SECURITY_POLICY}; img-src {origin}"
    return {**SECURITY_HEADERS, "content-security-policy": policy}


def page(
    request: Request,
    template: str,
    status: int = 200,
    *,
    branding: Branding | None = None,
    **context: Any,
) -> Response:
    """A page; in the colours of the request's company (OAuthServices.signin_company sets
    them) unless ``branding`` is given."""
    if branding is None:
        branding = getattr(request.state, "branding", None)
    return _templates().TemplateResponse(
        request,
        template,
        {"scope_text": SCOPE_TEXT, "branding": branding, **context},
        status_code=status,
        headers=security_headers(branding),
    )


def error_page(
    request: Request, status: int, title: str, message: str, company_name: str
) -> Response:
    return page(
        request, "error.html", status, title=title, message=message, company_name=company_name
    )
