"""Every route of the console, put together: signing in and out (console.routes), the
company's own pages (console.company_pages, console.tool_pages) and the OpenAPI import
(console.import_page). Only this module knows them all, so none of them imports another
that builds on it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.console.company_pages import CompanyPages, company_routes
from frontdesk.console.context import ConsoleServices
from frontdesk.console.import_page import import_routes
from frontdesk.console.routes import CONSOLE_TITLE, Console, signin_routes
from frontdesk.console.tool_pages import tool_routes


def console_routes(services: ConsoleServices) -> list[Route]:
    console = Console(services)
    pages = CompanyPages(console)
    routes = [
        *signin_routes(console),
        *tool_routes(pages),
        *company_routes(pages),
        *import_routes(console, pages),
    ]
    return [Route(route.path, _titled(route.endpoint), methods=route.methods) for route in routes]


def _titled(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Any]:
    """``endpoint``, its error pages (oauth.rendering) titled as the console's."""

    async def titled(request: Request) -> Response:
        request.state.company_name = CONSOLE_TITLE
        return await endpoint(request)

    return titled
