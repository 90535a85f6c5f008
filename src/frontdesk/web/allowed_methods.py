"""Each path says which methods it answers, the same way whichever is asked (RFC 9110
10.2.1, ``Allow``: "the set of methods advertised as supported by the target resource").

Starlette answers a method a route does not take with 405 and an ``Allow`` naming that
route's methods only, so a path served by two routes (the login form's GET, its POST)
named one of them; and it answers OPTIONS with 405 too, although every path takes OPTIONS
(a CORS preflight is one). Here each path gets one route, taking every method its routes
took and OPTIONS: Starlette's 405 then names them all, and an OPTIONS that is no preflight
(the CORS middleware answers those first) is answered 200 with that ``Allow`` and no
content (RFC 9110 9.3.7).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

Endpoint = Callable[[Request], Awaitable[Response]]


def one_route_per_path(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The routes, merged by path, in the order their paths first came."""
    by_path: dict[str, dict[str, Endpoint]] = {}
    for route in routes:
        if not isinstance(route, Route):
            raise TypeError(f"only plain routes can be merged by path: {route!r}")
        endpoints = by_path.setdefault(route.path, {})
        # Starlette adds HEAD wherever GET is taken; it reaches the GET endpoint.
        for method in route.methods or ():
            endpoints[method] = cast(Endpoint, route.endpoint)
    return [_route(path, endpoints) for path, endpoints in by_path.items()]


def _route(path: str, endpoints: dict[str, Endpoint]) -> Route:
    allow = ", ".join(sorted({*endpoints, "OPTIONS"}))

    async def endpoint(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(headers={"Allow": allow})
        return await endpoints[request.method](request)

    return Route(path, endpoint, methods=[*endpoints, "OPTIONS"])
