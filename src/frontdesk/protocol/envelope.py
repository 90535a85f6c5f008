"""The envelope a message of a revision without handshake carries in ``params._meta``
(MCP 2026-07-28): its protocol version and client capabilities, required; its client info
and log level, optional. The revision checks it on each message, before its method runs
(the usual envelope in one test on the hot path); this says what is wrong with another."""

from __future__ import annotations

from typing import Any

from frontdesk.protocol.errors import HeaderMismatch, InvalidParams

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def refuse_missing(meta: Any, version: str) -> None:
    """Refuse an envelope that is missing or names another version."""
    if type(meta) is not dict:
        raise InvalidParams(
            f"Invalid params: params._meta must be an object holding {PROTOCOL_VERSION_KEY}"
            f" and {CLIENT_CAPABILITIES_KEY}"
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise InvalidParams(f"Invalid params: params._meta lacks {' and '.join(missing)}")
    # The endpoint routes here only a request whose header names this version.
    if meta[PROTOCOL_VERSION_KEY] != version:
        raise HeaderMismatch(
            "The MCP-Protocol-Version header does not match the protocol version in params._meta"
        )
