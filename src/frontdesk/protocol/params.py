"""Reading method params: each helper raises InvalidParams naming the field at fault."""

from __future__ import annotations

from typing import Any

from frontdesk.protocol.errors import InvalidParams

# The levels a client may ask for logs at (``logging/setLevel``, and 2026-07-28's
# ``logLevel`` in the envelope), though this endpoint sends no log message.
LOG_LEVELS = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)


def required_str(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if type(value) is not str:
        raise InvalidParams(f"Invalid params: {name} must be a string")
    return value


def optional_object(params: dict[str, Any], name: str) -> dict[str, Any]:
    value = params.get(name)
    if value is None:
        return {}
    if type(value) is not dict:
        raise InvalidParams(f"Invalid params: {name} must be an object")
    return value


def no_cursor(params: dict[str, Any]) -> None:
    """Every listing fits one page, so no cursor we could have issued exists."""
    if params.get("cursor") is not None:
        raise InvalidParams("Invalid params: unknown cursor (every listing is a single page)")
