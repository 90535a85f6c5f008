"""The tools bench/companies.yaml serves through Frontdesk's ``python`` provider.

Imported by Frontdesk (the project's .venv) with ``bench/`` on PYTHONPATH, never by the
bench driver itself. ``echo`` is the same trivial tool every baseline serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontdesk.tools.provider import ToolCall, ToolError


async def echo(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    return str(arguments["text"])


async def whoami(_arguments: Mapping[str, Any], call: ToolCall) -> str:
    """Proves a bearer token really signs a customer in (the driver checks it once)."""
    if call.customer is None:
        raise ToolError("Sign in first.")
    return call.customer.subject
