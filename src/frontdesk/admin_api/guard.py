"""What every admin API request passes before its handler, and after it: the key
(``Authorization: Bearer``, RFC 6750 section 2.1), its rate limit, whether it may manage
the company the path names, the error rendering (admin_api.errors) and the audit record.

A route is declared with ``admin_route(path, handler, methods)``; the handler receives an
``AdminCall`` (the request, the services, the key, the company) and returns a response or
raises. Who may do what:

- an operator key manages every company, and alone creates or deletes one (403 for a
  company key);
- a company key manages its own company only: any other is answered 404, exactly as a
  company that does not exist, so it cannot learn which tenant keys exist.

Each request that names a company the key may manage is recorded in that company's audit
log (``admin_request``: the key's id, the method, the route, the status), an operator
key's under the company it touched.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.admin_api.errors import (
    AdminError,
    as_admin_error,
    invalid_request,
    operators_only,
    render,
)
from frontdesk.admin_api.errors import unauthorized as unauthorized_error
from frontdesk.admin_api.query_rules import QueryRule, check_query
from frontdesk.companies.definition import TENANT_KEY_PATTERN
from frontdesk.config import Settings
from frontdesk.limits.json_nesting import MAX_NESTING, may_nest_deeper, nests_deeper
from frontdesk.limits.ratelimit import RateLimit, RateLimiter
from frontdesk.outbound.clients import OutboundClients
from frontdesk.store.admin_keys import AdminKey, AdminKeys
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database
from frontdesk.web.network import ClientAddressResolver

PREFIX = "/admin/v1"
TENANT_KEY = re.compile(TENANT_KEY_PATTERN)
# A company document with many tools and their schemas fits well within this.
MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class AdminContext:
    """The services the admin API works with, built once by the application."""

    settings: Settings
    database: Database
    companies: CompanyRepository
    keys: AdminKeys
    limiter: RateLimiter
    limit: RateLimit
    addresses: ClientAddressResolver
    outbound: OutboundClients


@dataclass(frozen=True, slots=True)
class AdminCall:
    request: Request
    context: AdminContext
    key: AdminKey
    # The company the path names (``{tenant}``), which the key may manage; None on a path
    # that names none.
    tenant_key: str | None

    @property
    def company(self) -> str:
        assert self.tenant_key is not None, "a company route names {tenant}"
        return self.tenant_key

    def require_operator(self, what: str) -> None:
        if self.key.tenant_key is not None:
            raise operators_only(what)

    async def json_body(self) -> Any:
        """The request's JSON document: 415 for another media type, 413 past
        MAX_BODY_BYTES, 400 for JSON that does not parse or nests too deep."""
        media = self.request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json" and not media.endswith("+json"):
            raise AdminError(415, "unsupported_media_type", "the body must be application/json")
        declared = self.request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise AdminError(413, "too_large", f"the body exceeds {MAX_BODY_BYTES} bytes")
        body = b""
        async for chunk in self.request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise AdminError(413, "too_large", f"the body exceeds {MAX_BODY_BYTES} bytes")
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise invalid_request("the body is not valid JSON") from None
        # Counting brackets only says whether the depth needs checking: a company with a
        # few tools and their schemas opens more than MAX_NESTING objects side by side.
        if may_nest_deeper(body) and nests_deeper(document):
            raise invalid_request(f"the JSON document nests more than {MAX_NESTING} levels")
        return document


Handler = Callable[[AdminCall], Awaitable[Response]]


def json_response(body: Any, status: int = 200) -> Response:
    return Response(
        orjson.dumps(body), status, {"Cache-Control": "no-store"}, media_type="application/json"
    )


def admin_route(
    context: AdminContext,
    path: str,
    handler: Handler,
    methods: list[str],
    query: QueryRule | None = None,
) -> Route:
    """A route under /admin/v1 whose requests pass the key, the limit and the company
    checks before ``handler``, and, when ``query`` is given, take only those parameters."""

    async def endpoint(request: Request) -> Response:
        tenant_key = request.path_params.get("tenant")
        key: AdminKey | None = None
        try:
            key = await _authenticated(context, request)
            if tenant_key is not None and not key.may_manage(tenant_key):
                raise AdminError(404, "not_found", f"no company has the tenant key {tenant_key!r}")
            if query is not None:
                check_query(request, query)
            response = await handler(AdminCall(request, context, key, tenant_key))
        except Exception as raised:
            error = as_admin_error(raised)
            if error is None:
                raise
            response = render(error)
        # Under the company touched; a tenant key no company can have touched none (and
        # would not fit the log's column).
        audited = tenant_key is not None and TENANT_KEY.fullmatch(tenant_key) is not None
        if key is not None and tenant_key is not None and audited and response.status_code != 404:
            await context.keys.record_use(
                key.key_id,
                tenant_key,
                request.method,
                PREFIX + path,
                response.status_code,
                datetime.now(UTC),
            )
        return response

    return Route(PREFIX + path, endpoint, methods=methods)


async def _authenticated(context: AdminContext, request: Request) -> AdminKey:
    """The request's live key, counted against its limit; 401 without one (counted per
    client address, so guessing is held to the same pace), 429 past the limit."""
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    secret = secret.strip()
    key = None
    if scheme.lower() == "bearer" and secret:
        key = await context.keys.authenticate(secret, datetime.now(UTC))
    if key is None:
        address = context.addresses.resolve(request.scope)
        await _count(context, "admin-refused", address)
        if scheme.lower() != "bearer" or not secret:
            raise unauthorized_error("an admin key is required", key_given=False)
        raise unauthorized_error("the admin key is unknown or revoked", key_given=True)
    await _count(context, "admin", key.key_id)
    return key


async def _count(context: AdminContext, *identity: str) -> None:
    verdict = await context.limiter.hit(context.limit, *identity)
    if not verdict.allowed:
        raise AdminError(
            429,
            "rate_limited",
            "too many admin requests; try again after Retry-After seconds",
            headers={"Retry-After": str(verdict.retry_after)},
        )
