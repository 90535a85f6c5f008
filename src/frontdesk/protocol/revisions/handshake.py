"""The revisions negotiated through ``initialize`` (2024-11-05 to 2025-11-25): a request
names its version in the MCP-Protocol-Version header, or names none (2024-11-05 clients,
and ``initialize`` itself). The core's methods, with ``initialize``, ``ping`` and
``logging/setLevel``; results as the core gives them; every reply in a 200. A client of
these revisions can never be asked anything in the middle of a request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from frontdesk.companies.catalog import ServedCompany
from frontdesk.protocol import core, envelope
from frontdesk.protocol.context import Handler, RequestContext, RoutedRequest
from frontdesk.protocol.errors import HeaderMismatch, InvalidParams
from frontdesk.protocol.jsonrpc import Body, Message, Result
from frontdesk.protocol.params import LOG_LEVELS
from frontdesk.protocol.versions import MODERN_VERSION, SUPPORTED_VERSIONS, negotiate

# Honest capabilities: no list-change notifications or subscriptions, because this
# endpoint never streams to the client.
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
    "logging": {},
}

EMPTY: dict[str, Any] = {}


async def initialize(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    version = negotiate(params.get("protocolVersion"))
    context.negotiated_version = version
    company = context.company
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": CAPABILITIES,
        "serverInfo": company.server_info,
    }
    if company.definition.instructions:
        result["instructions"] = company.definition.instructions
    return result


async def ping(_context: RequestContext, _params: dict[str, Any]) -> dict[str, Any]:
    return EMPTY


async def logging_set_level(_context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    # Accepted for clients that set it, though this endpoint sends no log notifications.
    level = params.get("level")
    # A list or object is not hashable, so it cannot even be looked up in LOG_LEVELS.
    if type(level) is not str or level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: level must be one of {sorted(LOG_LEVELS)}")
    return EMPTY


METHODS: dict[str, Handler] = {
    "initialize": initialize,
    "ping": ping,
    **core.METHODS,
    "logging/setLevel": logging_set_level,
}


class Handshake:
    def __init__(self) -> None:
        self.versions: tuple[str, ...] = SUPPORTED_VERSIONS
        self.methods: Mapping[str, Handler] = METHODS

    def admit_request(
        self,
        raw_headers: Sequence[tuple[bytes, bytes]],
        headers: dict[bytes, bytes],
        body: Body,
        company: ServedCompany,
        fresh_for: Callable[[str], float],
    ) -> RoutedRequest | None:
        # Only the header routes: the body must not claim 2026-07-28 in the header's stead.
        for message in body.messages:
            meta = message.params.get("_meta")
            if type(meta) is dict and meta.get(envelope.PROTOCOL_VERSION_KEY) == MODERN_VERSION:
                raise HeaderMismatch(
                    "params._meta names 2026-07-28 but the MCP-Protocol-Version header does not",
                    request_id=message.id,
                )
        return None

    def admit(self, context: RequestContext, message: Message) -> Handler | None:
        # Nothing to check: these revisions carry no envelope.
        return METHODS.get(message.method)

    def client_capabilities(self, params: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def shape(self, context: RequestContext, message: Message, result: Result) -> Result:
        return result

    def status(self, reply: dict[str, Any]) -> int:
        # An error travels in the reply; the HTTP exchange itself succeeded.
        return 200


REVISION = Handshake()
