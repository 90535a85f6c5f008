"""How deep a JSON document nests, and the limit Frontdesk holds JSON to.

orjson reads documents nested up to 1,024 levels but writes at most 254, so a value read
in one request could not be written back out, in a reply or in a call to a company's
backend. RFC 8259 9 lets an implementation limit the nesting it accepts; Frontdesk takes
``MAX_NESTING`` levels of arrays and objects, far below what orjson writes and far above
what any MCP message or tool result needs. The check is paid for only by a body that could
break it: a body with at most ``MAX_NESTING`` brackets and braces cannot nest deeper.
"""

from __future__ import annotations

from typing import Any

MAX_NESTING = 64


def may_nest_deeper(raw: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether JSON text could nest more than ``limit`` levels: only if it opens more than
    ``limit`` arrays and objects (counting brackets inside strings too, which errs safe)."""
    return raw.count(b"[") + raw.count(b"{") > limit


def nests_deeper(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether a parsed JSON value holds more than ``limit`` levels of arrays and objects.

    A walk with a stack of its own, not recursion: the value may nest past Python's stack.
    It stops at the first container past the limit.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    if limit < 1:
        return True
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        container, depth = pending.pop()
        for child in container.values() if type(container) is dict else container:
            kind = type(child)
            if kind is dict or kind is list:
                if depth == limit:
                    return True
                pending.append((child, depth + 1))
    return False
