"""``/v1/{tenantKey}/mcp``: turns an HTTP request into JSON-RPC replies, and every error
into its envelope and status, in this one place (interface 4.2, 7.1, 8).

It is a plain ASGI handler, not a framework route: this is the hot path, and each
request here pays for nothing it does not use. Every revision is served here: the
request's ``MCP-Protocol-Version`` header chooses one (``revisions``), and the endpoint asks
it what differs (``revision.Revision``) rather than testing which it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import orjson
import structlog

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import MAX_BODY_BYTES
from frontdesk.domain import Caller
from frontdesk.limits.ratelimit import RateLimit, RateLimiter
from frontdesk.observability import metrics
from frontdesk.observability.log_throttle import outage_warnings
from frontdesk.protocol.bearer import BearerResolver
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import (
    BodyTooLarge,
    EndpointError,
    InvalidRequest,
    MethodNotFound,
    NoActiveCompany,
    RateLimited,
    RpcError,
    ServiceUnavailable,
    SessionUnknown,
    Unauthorized,
)
from frontdesk.protocol.jsonrpc import Body, Message, failure, parse_body, success
from frontdesk.protocol.request_state import RequestStates
from frontdesk.protocol.revisions import revision_of
from frontdesk.protocol.sessions import SessionSigner
from frontdesk.store.outage import is_outage
from frontdesk.usage.counters import UsageCounters
from frontdesk.web.asgi import (
    JSON_CONTENT,
    BodyTooLargeError,
    ClientDisconnectedError,
    Receive,
    Scope,
    Send,
    headers_of,
    read_body,
    respond,
    whole_body,
)
from frontdesk.web.network import ClientAddressResolver

log = structlog.get_logger(__name__)

OK_BODY = orjson.dumps({"ok": True})
ALLOW_HEADER = (b"allow", b"POST, DELETE, OPTIONS")
UNAVAILABLE = "The service cannot reach its database right now; retry shortly"
TOO_LARGE = f"Request body is larger than {MAX_BODY_BYTES // 1024} KB"


class McpEndpoint:
    def __init__(
        self,
        registry: CompanyRegistry,
        sessions: SessionSigner,
        limiter: RateLimiter,
        addresses: ClientAddressResolver,
        bearers: BearerResolver,
        request_states: RequestStates,
        lookup_limit: RateLimit,
        usage: UsageCounters,
    ) -> None:
        self._registry = registry
        self._usage = usage
        self._sessions = sessions
        self._request_states = request_states
        self._limiter = limiter
        self._addresses = addresses
        self._bearers = bearers
        self._lookup_limit = lookup_limit

    def __call__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        tenant_key: str,
        request_id: str,
    ) -> Awaitable[int]:
        """Answer one request. Awaited, gives the status. Not a coroutine itself: it hands
        back the one that answers, so a POST passes through no extra layer."""
        if scope["method"] == "POST":
            return self._post(scope, receive, send, tenant_key, request_id)
        return _answer_other_method(scope["method"], send)

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        tenant_key: str,
        request_id: str,
    ) -> int:
        body: Body | None = None
        try:
            company, caller = await self._admit(scope, tenant_key)
            # A small POST almost always comes in one message: then no read_body coroutine.
            message = await receive()
            try:
                raw = whole_body(message, MAX_BODY_BYTES)
                if raw is None:
                    raw = await read_body(receive, MAX_BODY_BYTES, first=message)
            except BodyTooLargeError:
                raise BodyTooLarge(TOO_LARGE) from None
            headers = headers_of(scope)
            _check_content_type(headers)
            body = parse_body(raw)
            if len(body.messages) > 1:
                # A batch counts as its calls (interface 2.9): the request was counted once
                # before its body was read, its further members are counted now, and past
                # the limit the whole request is refused, before any of them runs.
                await self._count(company, caller, len(body.messages) - 1)
            # Read once the body is, so that a refusal carries the request's id (MCP 2026-07-28).
            revision = revision_of(headers.get(b"mcp-protocol-version"))
            routed = revision.admit_request(
                scope["headers"], headers, body, company, self._registry.fresh_for
            )
            self._check_session(headers, company, body)
            context = RequestContext(
                company,
                caller,
                request_id,
                self._request_states,
                self._usage,
                revision,
                routed,
                sign_in=self._bearers.challenges(company) if company.has_signin else None,
            )
            first = body.messages[0]
            if body.is_batch or first.is_notification:
                replies = await _dispatch(context, body.messages)
            else:
                # One request, the usual case: answered directly.
                replies = [await _answer(context, first)]
        except ClientDisconnectedError:
            return 499
        except RpcError as error:
            return await _respond_error(send, error, body)
        except Exception as error:
            if not is_outage(error):
                raise
            outage_warnings.warning(log, "database_unavailable", error=type(error).__name__)
            metrics.outage_answered("database")
            return await _respond_error(send, ServiceUnavailable(UNAVAILABLE), body)

        if not replies:
            # Only notifications: nothing to answer (interface 4.2).
            await respond(send, 202)
            return 202
        answer_headers = [JSON_CONTENT]
        if context.negotiated_version is not None:
            session_id = self._sessions.issue(tenant_key, context.negotiated_version)
            answer_headers.append((b"mcp-session-id", session_id.encode()))
        # In a batch, errors stay inside a 200, one a member: one status cannot tell several.
        status = 200 if body.is_batch else revision.status(replies[0])
        if context.www_authenticate is not None:
            status = 401
            answer_headers.append((b"www-authenticate", context.www_authenticate.encode()))
        payload = replies if body.is_batch else replies[0]
        await respond(send, status, orjson.dumps(payload), answer_headers)
        return status

    async def _admit(self, scope: Scope, tenant_key: str) -> tuple[ServedCompany, Caller]:
        """Checks that need no body: size announced, company, caller, rate limit, version."""
        headers = headers_of(scope)
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise BodyTooLarge(TOO_LARGE)
        # Each step answers without a coroutine when it can (a cached company, a guest,
        # a count kept in memory): this runs on every request.
        address = self._addresses.resolve(scope)
        company = self._registry.remembered(tenant_key)
        if company is None:
            # Not in this instance's memory, so finding it costs a database read: the
            # address pays for that first, against the instance's own limit, so that no
            # caller can drive reads at will with tenant keys that do not exist.
            verdict = await self._limiter.hit(self._lookup_limit, "company-lookup", address)
            if not verdict.allowed:
                metrics.rate_limited("company-lookup", tenant_key)
                raise RateLimited(verdict.retry_after)
            company = await self._registry.active(tenant_key)
        if company is None:
            raise NoActiveCompany("No active company has this tenant key")
        authorization = headers.get(b"authorization")
        if authorization is None:
            caller = Caller(address)
        else:
            try:
                caller = await self._bearers.customer(authorization, company, address)
            except Unauthorized:
                # A refused token still counts against its sender, so guessing tokens is
                # throttled like any other traffic.
                sender = Caller(address)
                if not self._counted_here(company, sender):
                    await self._count_shared(company, sender)
                raise
        # Counted in memory when it can be: no coroutine for the usual case.
        if not self._counted_here(company, caller):
            await self._count_shared(company, caller)
        return company, caller

    async def _count(self, company: ServedCompany, caller: Caller, calls: int) -> None:
        if not self._counted_here(company, caller, calls):
            await self._count_shared(company, caller, calls)

    def _counted_here(self, company: ServedCompany, caller: Caller, calls: int = 1) -> bool:
        """Count ``calls`` against the caller's limit when this instance counts on its own,
        and refuse past the limit; False when the count lives in Redis (``_count_shared``)."""
        verdict = self._limiter.hit_here(
            company.rate_limit, company.tenant_key, caller.rate_limit_key, calls=calls
        )
        if verdict is None:
            return False
        if not verdict.allowed:
            metrics.rate_limited("mcp", company.tenant_key)
            raise RateLimited(verdict.retry_after)
        return True

    async def _count_shared(self, company: ServedCompany, caller: Caller, calls: int = 1) -> None:
        verdict = await self._limiter.hit(
            company.rate_limit, company.tenant_key, caller.rate_limit_key, calls=calls
        )
        if not verdict.allowed:
            metrics.rate_limited("mcp", company.tenant_key)
            raise RateLimited(verdict.retry_after)

    def _check_session(
        self, headers: dict[bytes, bytes], company: ServedCompany, body: Body
    ) -> None:
        raw = headers.get(b"mcp-session-id")
        if raw is None or any(message.method == "initialize" for message in body.messages):
            # No header: a stateless client, served as such. initialize starts afresh.
            return
        session = self._sessions.verify(raw.decode("latin-1"), company.tenant_key)
        if session is None:
            raise SessionUnknown("Session not found; call initialize again")


async def _answer_other_method(method: str, send: Send) -> int:
    if method == "DELETE":
        # Sessions hold no state here, so ending one only acknowledges it (interface 3.5).
        await respond(send, 200, OK_BODY, [JSON_CONTENT])
        return 200
    if method == "OPTIONS":
        # Not a CORS preflight (the middleware answers those): what this path takes
        # (RFC 9110 9.3.7), with the Content-Length of no content.
        await respond(send, 200, b"", [ALLOW_HEADER])
        return 200
    # GET would open a server-to-client stream, which this endpoint never offers (interface 4.2).
    await respond(send, 405, b"", [ALLOW_HEADER])
    return 405


def _check_content_type(headers: dict[bytes, bytes]) -> None:
    content_type = headers.get(b"content-type")
    media_type = (content_type or b"").split(b";", 1)[0].strip().lower()
    if media_type != b"application/json":
        raise InvalidRequest("Invalid request: Content-Type must be application/json")


async def _dispatch(context: RequestContext, messages: list[Message]) -> list[dict[str, Any]]:
    requests = [message for message in messages if not message.is_notification]
    if len(requests) == 1:
        return [await _answer(context, requests[0])]
    # Replies keep the order of the requests; slow tools in a batch run side by side.
    return list(await asyncio.gather(*(_answer(context, message) for message in requests)))


async def _answer(context: RequestContext, message: Message) -> dict[str, Any]:
    """One message's reply, in the revision the request declared."""
    revision = context.revision
    try:
        handler = revision.admit(context, message)
        if handler is None:
            # A method of another revision is answered as any unknown method.
            raise MethodNotFound(f"Method not found: {message.method}")
        result = await handler(context, message.params)
        return success(message.id, revision.shape(context, message, result))
    except RpcError as error:
        return failure(message.id, error)
    except Exception as error:
        return _failed(message, error)


def _failed(message: Message, error: Exception) -> dict[str, Any]:
    """The reply to a method that failed unexpectedly; an outage refuses the request."""
    if is_outage(error):
        raise error
    log.exception("method_failed", method=message.method)
    return failure(message.id, RpcError("Internal error"))


async def _respond_error(send: Send, error: RpcError, body: Body | None) -> int:
    request_id = error.request_id
    if request_id is None and body is not None and not body.is_batch:
        request_id = body.messages[0].id
    headers = [JSON_CONTENT]
    if isinstance(error, EndpointError):
        headers.extend((name.encode(), value.encode()) for name, value in error.headers().items())
    status = error.status if error.status != 200 else 400
    await respond(send, status, orjson.dumps(failure(request_id, error)), headers)
    return status
