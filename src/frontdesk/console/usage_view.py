"""The usage page's figures: a company's calls per tool over the last days, read from the
hourly rollup every instance writes (frontdesk.usage.report's ``read_usage``, the same the
admin API answers with), as a chart and a table."""

from __future__ import annotations

import importlib
from datetime import datetime
from typing import Any

from frontdesk.console.charts import Bar, bar_chart
from frontdesk.store.database import Database


async def usage_page_context(
    database: Database, tenant_key: str, since: datetime, until: datetime
) -> dict[str, Any]:
    """``usage``: a row per tool, empty when nothing was called, None when this Frontdesk
    keeps no usage (the page then says so); ``chart``: the rows as bars."""
    try:
        report = importlib.import_module("frontdesk.usage.report")
    except ModuleNotFoundError:
        return {"usage": None, "chart": None}
    read = await report.read_usage(database, tenant_key, since, until)
    rows = [
        {
            "tool": tool["tool"],
            "calls": tool["calls"],
            "errors": sum(tool["errors"].values()),
            "p50_ms": tool["latency_ms"]["p50"],
            "p95_ms": tool["latency_ms"]["p95"],
            "signed_in_calls": tool["signed_in_calls"],
            "customers": tool["distinct_customers"],
        }
        for tool in read["tools"]
    ]
    chart = bar_chart(
        "Calls and errors per tool",
        [Bar(row["tool"], row["calls"], row["errors"]) for row in rows],
    )
    return {"usage": rows, "chart": chart}
