"""``frontdesk usage``: a company's tool usage over a range of hours, as JSON."""

from __future__ import annotations

from datetime import UTC, datetime

import click
import orjson

from frontdesk.administration import company_state as administration
from frontdesk.cli.common import run, settings
from frontdesk.usage.report import InvalidRange, chosen_range


@click.command("usage")
@click.argument("tenant_key")
@click.option("--since", type=click.DateTime(), help="From this UTC time (its hour's start).")
@click.option("--until", type=click.DateTime(), help="Up to this UTC time (its hour's end).")
def usage(tenant_key: str, since: datetime | None, until: datetime | None) -> None:
    """Print the company's tool usage as JSON: per tool, the calls, errors by kind, latency
    p50/p95, guest and signed-in calls and distinct customers, and the totals. Whole
    hours, the last 24 by default; counts reach the database within
    FRONTDESK_USAGE_FLUSH_SECONDS of each call."""
    try:
        start, end = chosen_range(
            None if since is None else since.replace(tzinfo=UTC),
            None if until is None else until.replace(tzinfo=UTC),
            datetime.now(UTC),
        )
    except InvalidRange as error:
        raise click.UsageError(str(error)) from None
    config = settings()
    report = run(lambda: administration.company_usage(config, tenant_key, start, end))
    click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
