"""The tools bench/companies.yaml and bench/dashboard-companies.yaml serve through
Frontdesk's ``python`` provider.

Imported by Frontdesk (the project's .venv) with ``bench/`` on PYTHONPATH, never by the
bench driver itself. ``echo`` is the same trivial tool every baseline serves; ``flaky`` and
``slow`` stand for a company's backend failing and answering late, when the caller asks
(bench/dashboard draws the dashboard's backend panels with them).
"""

from __future__ import annotations

import asyncio
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


async def flaky(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    """A backend that fails when asked to: the call counts as outcome "error"."""
    if arguments.get("fail"):
        raise ToolError("The backend failed; please try again later.")
    return "done"


async def slow(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    """A backend that takes ``seconds`` to answer: past the tool's timeout, a "timeout"."""
    await asyncio.sleep(float(arguments["seconds"]))
    return "done"
