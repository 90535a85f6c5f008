"""MCP protocol versions this endpoint negotiates through ``initialize``."""

from __future__ import annotations

SUPPORTED_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
_SUPPORTED = frozenset(SUPPORTED_VERSIONS)


def negotiate(requested: object) -> str:
    """Echo the client's version when we speak it, else offer our newest (MCP lifecycle)."""
    if isinstance(requested, str) and requested in _SUPPORTED:
        return requested
    return LATEST_VERSION


def is_supported(version: str) -> bool:
    return version in _SUPPORTED
