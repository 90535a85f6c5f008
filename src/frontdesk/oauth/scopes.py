"""The scopes customers grant: ``profile`` and ``email``."""

from __future__ import annotations

SUPPORTED = ("profile", "email")
SUPPORTED_SET = frozenset(SUPPORTED)
# What a grant of no particular scope holds (none requested at authorize means all).
ALL = " ".join(SUPPORTED)
# Sent by habit by many clients; they ask for nothing we could refuse, so they are dropped.
IGNORED = frozenset({"openid", "offline_access"})


class ScopeError(ValueError):
    """A scope outside the supported set was asked for."""


def resolve(requested: str | None) -> str:
    """The granted scope string; none requested means all supported (DESIGN)."""
    if requested is None or not requested.strip():
        return ALL
    asked = [item for item in requested.split(" ") if item]
    unknown = [item for item in asked if item not in SUPPORTED and item not in IGNORED]
    if unknown:
        raise ScopeError(f"unsupported scope: {' '.join(unknown)}")
    granted = [item for item in SUPPORTED if item in asked]
    return " ".join(granted or SUPPORTED)
