"""MCP protocol versions this endpoint speaks.

The 2025 revisions and 2024-11-05 are negotiated through ``initialize``; 2026-07-28 needs no
handshake: each request names it, in its ``MCP-Protocol-Version`` header and in its
``params._meta`` (``protocol/envelope.py``; the revisions themselves in
``protocol/revisions``).
"""

from __future__ import annotations

SUPPORTED_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
MODERN_VERSION = "2026-07-28"
# Every version a request may name, oldest first: what an unsupported-version refusal and
# server/discover list.
ALL_VERSIONS: tuple[str, ...] = (*SUPPORTED_VERSIONS, MODERN_VERSION)
_SUPPORTED = frozenset(SUPPORTED_VERSIONS)


def negotiate(requested: object) -> str:
    """Echo the client's version when we speak it, else offer our newest (MCP lifecycle)."""
    if isinstance(requested, str) and requested in _SUPPORTED:
        return requested
    return LATEST_VERSION


def is_supported(version: str) -> bool:
    """A version ``initialize`` negotiates (2026-07-28 is not one: it has no handshake)."""
    return version in _SUPPORTED
