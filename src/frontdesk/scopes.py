"""The scopes customers grant: ``profile`` and ``email``.

A scope the service does not offer is dropped, not refused: RFC 6749 3.3 lets the server
ignore what it does not offer and say in the token response what it granted. Real clients
ask for what they ask every server (``openid``, ``offline_access``; Claude sends
``claudeai``, others ``read write``), and refusing them would turn those clients away.
"""

from __future__ import annotations

SUPPORTED = ("profile", "email")
SUPPORTED_SET = frozenset(SUPPORTED)
# What a grant of no particular scope holds (none requested at authorize means all).
ALL = " ".join(SUPPORTED)


def offered(requested: str | None) -> frozenset[str]:
    """The scopes asked for that the service offers; the rest are dropped."""
    if not requested:
        return frozenset()
    return SUPPORTED_SET.intersection(requested.split())


def resolve(requested: str | None) -> str:
    """The scope to grant at authorize, in a stable order: what was asked for and is
    offered, or every offered scope when nothing offered was asked for (DESIGN: none
    requested means both)."""
    asked = offered(requested)
    return " ".join(item for item in SUPPORTED if item in asked) or ALL
