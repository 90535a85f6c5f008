"""The envelope a message of a revision without handshake carries in ``params._meta``
(MCP 2026-07-28): its protocol version and client capabilities, required; its client info
and log level, optional. Checked on each message, before its method runs."""

from __future__ import annotations

from typing import Any

from frontdesk.protocol.errors import HeaderMismatch, InvalidParams
from frontdesk.protocol.params import LOG_LEVELS

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def is_well_formed(meta: Any, version: str) -> bool:
    """The usual envelope, in one test: any other is told exactly what is wrong."""
    return (
        type(meta) is dict
        and meta.get(PROTOCOL_VERSION_KEY) == version
        and type(meta.get(CLIENT_CAPABILITIES_KEY)) is dict
    )


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


def check_values(meta: dict[str, Any], well_formed: bool) -> None:
    """Refuse an envelope whose values are of the wrong shape (``well_formed``: as
    ``is_well_formed`` found it)."""
    if not well_formed:
        raise InvalidParams(f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    client_info = meta.get(CLIENT_INFO_KEY)
    if client_info is not None and type(client_info) is not dict:
        raise InvalidParams(f"Invalid params: {CLIENT_INFO_KEY} must be an object")
    level = meta.get(LOG_LEVEL_KEY)
    # Checked, though no log message is ever sent (the capabilities say so).
    if level is not None and (type(level) is not str or level not in LOG_LEVELS):
        raise InvalidParams(f"Invalid params: {LOG_LEVEL_KEY} must be one of {sorted(LOG_LEVELS)}")


def claims(params: dict[str, Any], version: str) -> bool:
    """Whether a message's envelope names ``version``."""
    meta = params.get("_meta")
    return type(meta) is dict and meta.get(PROTOCOL_VERSION_KEY) == version
