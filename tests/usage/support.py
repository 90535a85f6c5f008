"""Reading a company's usage in the tests: a range that holds this hour, and one tool's
figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from frontdesk.app import Frontdesk
from frontdesk.usage.report import read_usage

Json = dict[str, Any]


async def usage_now(app: Frontdesk, tenant_key: str) -> Json:
    """The company's usage from an hour ago to an hour ahead, as the database holds it."""
    now = datetime.now(UTC)
    return await read_usage(
        app.services.database, tenant_key, now - timedelta(hours=1), now + timedelta(hours=1)
    )


def figures(report: Json, tool: str) -> Json:
    """One tool's figures in a report."""
    found: list[Json] = [entry for entry in report["tools"] if entry["tool"] == tool]
    assert len(found) == 1, report
    return found[0]


def errors(entry: Json) -> Json:
    """Only the error kinds that were counted."""
    return {kind: count for kind, count in entry["errors"].items() if count}
