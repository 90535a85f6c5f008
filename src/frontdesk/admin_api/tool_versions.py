"""``GET /admin/v1/companies/{tenant}/tools/{name}/versions``: one tool's version history
(administration.tool_history)."""

from __future__ import annotations

from starlette.responses import Response

from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration.tool_history import as_json, tool_history


async def tool_versions(call: AdminCall) -> Response:
    name = str(call.request.path_params["name"])
    entries = await tool_history(call.context.database.engine, call.company, name)
    return json_response({"versions": [as_json(entry) for entry in entries]})
