"""One request to a company's own service (the ``http`` provider's backend, an imported
OpenAPI operation's API) and what can go wrong with it, said once for both.

The request goes through the shared client (connections only where the operator's address
policy permits: outbound.OutboundClients, checked_transport), within the service's lane of
connections, and the answer is read within ``MAX_RESPONSE_BYTES`` once decoded. Every
failure to get an answer becomes a ToolError with a plain message for the customer; the
detail is logged with the request id.
"""

from __future__ import annotations

import asyncio
from typing import NamedTuple

import httpx
import structlog

from frontdesk.outbound.addresses import AddressRefused
from frontdesk.outbound.policy import Oversized, Unreadable, read_capped
from frontdesk.tools.provider import ToolError

log = structlog.get_logger(__name__)

MAX_RESPONSE_BYTES = 1024 * 1024


class Reply(NamedTuple):
    status: int
    media_type: str
    body: bytes


async def exchange(
    http: httpx.AsyncClient,
    lane: asyncio.Semaphore,
    tool: str,
    method: str,
    url: str,
    *,
    content: bytes | None,
    headers: dict[str, str],
) -> Reply:
    """The service's answer, whatever its status; ToolError when there is none to read."""
    try:
        async with lane, http.stream(method, url, content=content, headers=headers) as reply:
            body = await read_capped(reply, MAX_RESPONSE_BYTES)
            return Reply(reply.status_code, reply.headers.get("content-type", ""), body)
    except AddressRefused as refusal:
        log.error("tool_backend_refused", tool=tool, reason=str(refusal))
        raise ToolError(f"{tool} is unavailable right now.", "refused") from None
    except httpx.HTTPError as error:
        log.warning("tool_backend_unreachable", tool=tool, error=type(error).__name__)
        reached = "timeout" if isinstance(error, httpx.TimeoutException) else "unavailable"
        message = f"{tool} could not reach its service; try again later."
        raise ToolError(message, reached) from None
    except Oversized:
        log.warning("tool_backend_oversized", tool=tool, limit=MAX_RESPONSE_BYTES)
        raise ToolError(f"{tool} answered with more than Frontdesk accepts.") from None
    except Unreadable as error:
        log.warning("tool_backend_malformed", tool=tool, error=str(error))
        raise ToolError(f"{tool} answered in a form Frontdesk cannot read.") from None
