"""The HTML pages of a sign-in: consent, the dev login form and errors.

Jinja2 with autoescape, and headers that keep the pages out of frames (clickjacking),
caches and Referer headers.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from starlette.templating import Jinja2Templates


@cache
def _templates() -> Jinja2Templates:
    # Built on the first page, not at import: a worker that only serves MCP and tokens
    # never loads Jinja2 (~2 MB a worker).
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.templating import Jinja2Templates

    return Jinja2Templates(
        env=Environment(
            loader=PackageLoader("frontdesk", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            auto_reload=False,
        )
    )


SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
    ),
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


def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
    return _templates().TemplateResponse(
        request,
        template,
        {"scope_text": SCOPE_TEXT, **context},
        status_code=status,
        headers=SECURITY_HEADERS,
    )


def error_page(
    request: Request, status: int, title: str, message: str, company_name: str
) -> Response:
    return page(
        request, "error.html", status, title=title, message=message, company_name=company_name
    )
