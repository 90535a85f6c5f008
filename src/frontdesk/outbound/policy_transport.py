"""An httpx transport that sends every request through the outbound policy, for a library's
HTTP client that must not open connections of its own (Authlib's OAuth 2.0 client in
login.oidc): the address checks, the refusal of redirects, the total deadline and the byte
cap of ``OutboundPolicy.call`` then hold for each of its requests.

A request may carry the event-loop time by which it must end in its extensions, under
``DEADLINE``, so that several requests of one step share one deadline; without it each
request gets the policy's own. Failures are the policy's ``OutboundFailure``s, raised through
the client unchanged (httpx maps only its own errors), for the caller to log and to render.
The answer comes back decoded and whole: its body is the capped read, with no
``Content-Encoding`` left to undo.
"""

from __future__ import annotations

import httpx

from frontdesk.outbound.policy import OutboundPolicy

DEADLINE = "frontdesk.deadline"
# Set by httpx from the request itself, and again by the policy's own request.
_RECOMPUTED = frozenset({"host", "content-length", "transfer-encoding"})


class PolicyTransport(httpx.AsyncBaseTransport):
    def __init__(self, http: httpx.AsyncClient, policy: OutboundPolicy) -> None:
        # ``http`` keeps no connection alive (outbound.clients.OutboundClients.for_logins):
        # the policy connects to an address checked for each call's name.
        self._http = http
        self._policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        deadline = request.extensions.get(DEADLINE)
        answer = await self._policy.call(
            self._http,
            request.method,
            str(request.url),
            headers={
                name: value
                for name, value in request.headers.items()
                if name.lower() not in _RECOMPUTED
            },
            content=content or None,
            deadline=deadline if isinstance(deadline, float) else None,
        )
        return httpx.Response(answer.status, content=answer.body, request=request)
