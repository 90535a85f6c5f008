"""The admin API at /admin/v1 (README "For companies: the admin API"; its interface in
``openapi.json`` here): companies, their parts and connections, managed with a key made
by `frontdesk keys create`.

Every route is in ``ROUTES``, one line each: a path under /admin/v1, its handler (a module
per concern: companies, parts, connections, audit) and its methods. A new route is a
handler ``async def handler(call: AdminCall) -> Response`` in a module of its own, added
to ``ROUTES`` (and to ``openapi.json``); the guard (admin_api.guard) gives it the key, the
limit, the company check, the error rendering and the audit record.

May import: ``administration``, ``openapi_import``, the companies, the store and
everything below them; never the MCP endpoint or another route family.
"""

from __future__ import annotations

from importlib.resources import files

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.admin_api import audit, companies, connections, imports, parts, tool_versions, usage
from frontdesk.admin_api.guard import PREFIX, AdminContext, Handler, admin_route
from frontdesk.admin_api.query_rules import documented_path, query_rules

COMPANY = "/companies/{tenant}"

ROUTES: list[tuple[str, Handler, list[str]]] = [
    ("/companies", companies.list_companies, ["GET"]),
    (COMPANY, companies.get_company, ["GET"]),
    (COMPANY, companies.put_company, ["PUT"]),
    (COMPANY, companies.patch_company, ["PATCH"]),
    (COMPANY, companies.delete_company, ["DELETE"]),
    (COMPANY + "/tools", parts.list_tools, ["GET"]),
    (COMPANY + "/tools/{name}", parts.get_tool, ["GET"]),
    (COMPANY + "/tools/{name}", parts.put_tool, ["PUT"]),
    (COMPANY + "/tools/{name}", parts.delete_tool, ["DELETE"]),
    (COMPANY + "/tools/{name}/versions", tool_versions.tool_versions, ["GET"]),
    (COMPANY + "/signin", parts.get_signin, ["GET"]),
    (COMPANY + "/signin", parts.put_signin, ["PUT"]),
    (COMPANY + "/branding", parts.get_branding, ["GET"]),
    (COMPANY + "/branding", parts.put_branding, ["PUT"]),
    (COMPANY + "/clients", connections.list_clients, ["GET"]),
    (COMPANY + "/clients/{clientId:path}", connections.revoke_client, ["DELETE"]),
    (COMPANY + "/grants", connections.list_grants, ["GET"]),
    (COMPANY + "/grants/{grantId}", connections.revoke_grant, ["DELETE"]),
    (COMPANY + "/audit", audit.audit_events, ["GET"]),
    (COMPANY + "/usage", usage.company_usage, ["GET"]),
    (COMPANY + "/openapi-imports", imports.import_openapi, ["POST"]),
]


def admin_routes(context: AdminContext) -> list[Route]:
    """The admin API's routes, and its OpenAPI document (public, like /openapi.yaml)."""
    interface = files("frontdesk.admin_api").joinpath("openapi.json").read_bytes()

    async def openapi(_request: Request) -> Response:
        return Response(interface, media_type="application/json")

    # Each route takes the query parameters its operation in the document names, no other.
    rules = query_rules(orjson.loads(interface))

    def route(path: str, handler: Handler, methods: list[str]) -> Route:
        taken = [rules.get((documented_path(path), method)) for method in methods]
        query = None if None in taken else {k: v for rule in taken if rule for k, v in rule.items()}
        return admin_route(context, path, handler, methods, query)

    return [
        Route(PREFIX + "/openapi.json", openapi, methods=["GET"]),
        *(route(path, handler, methods) for path, handler, methods in ROUTES),
    ]
