"""/admin/v1/companies/{tenant}/audit: the company's security events as JSON lines
(``application/x-ndjson``), newest first, as `frontdesk audit list` prints them."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
from starlette.responses import Response

from frontdesk.admin_api.errors import invalid_request
from frontdesk.admin_api.guard import AdminCall
from frontdesk.administration.company_state import require_company
from frontdesk.store.audit import AuditLog

LONGEST_PAGE = 10_000


def moment(call: AdminCall, name: str) -> datetime | None:
    """An RFC 3339 timestamp from the query (UTC when it names no offset), or None."""
    text = call.request.query_params.get(name)
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise invalid_request(f"{name} must be an RFC 3339 date and time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


async def audit_events(call: AdminCall) -> Response:
    text = call.request.query_params.get("limit", "100")
    if not text.isdigit() or not 1 <= int(text) <= LONGEST_PAGE:
        raise invalid_request(f"limit must be a whole number from 1 to {LONGEST_PAGE}")
    since = moment(call, "since")
    events = call.request.query_params.getlist("event")
    database = call.context.database
    await require_company(database, call.company)
    found = await AuditLog(database.engine).list(
        call.company, since=since, events=events or None, limit=int(text)
    )
    lines = b"".join(orjson.dumps(event.to_json()) + b"\n" for event in found)
    return Response(lines, headers={"Cache-Control": "no-store"}, media_type="application/x-ndjson")
