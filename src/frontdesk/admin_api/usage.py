"""/admin/v1/companies/{tenant}/usage: the company's tool usage over whole hours, as
`frontdesk usage` prints it (frontdesk.usage.report): per tool, calls, errors by kind,
latency p50/p95, guest and signed-in calls and distinct customers, and the totals."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.responses import Response

from frontdesk.admin_api.audit import moment
from frontdesk.admin_api.errors import invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration.company_state import require_company
from frontdesk.usage.report import InvalidRange, chosen_range, read_usage


async def company_usage(call: AdminCall) -> Response:
    try:
        since, until = chosen_range(moment(call, "since"), moment(call, "until"), datetime.now(UTC))
    except InvalidRange as error:
        raise invalid_request(str(error)) from None
    database = call.context.database
    await require_company(database, call.company)
    return json_response(await read_usage(database, call.company, since, until))
