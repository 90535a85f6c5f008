"""Annotations for the tools tests define: every tool in a companies file gives all five
(companies.tool_terms), and most test tools only read."""

from __future__ import annotations

from typing import Any


def read_only(title: str) -> dict[str, Any]:
    """The annotations of a tool that reads and changes nothing."""
    return {
        "title": title,
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
