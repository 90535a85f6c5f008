"""Which query parameters each admin route takes, read from the API's own OpenAPI document
(admin_api/openapi.json), so the document and the check cannot drift apart.

A request with a parameter its route does not take, or with one that is not a list given
more than once, is refused (400) before its handler runs: a misspelt ``since`` would
otherwise be ignored silently and answer something other than what was asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from frontdesk.admin_api.errors import invalid_request

# A route's parameters: each name, and whether it may be given more than once.
QueryRule = Mapping[str, bool]
_METHODS = ("get", "put", "post", "patch", "delete")


def documented_path(route_path: str) -> str:
    """A route's path as the document spells it: ``{tenant}`` is ``{tenantKey}``, and a
    converter (``{clientId:path}``) is left out."""
    parts = []
    for part in route_path.split("/"):
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1].split(":", 1)[0]
            part = "{tenantKey}" if name == "tenant" else "{" + name + "}"
        parts.append(part)
    return "/".join(parts)


def query_rules(document: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, bool]]:
    """(documented path, METHOD) → the query parameters its operation takes."""
    rules: dict[tuple[str, str], dict[str, bool]] = {}
    for path, item in document["paths"].items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            rule: dict[str, bool] = {}
            for parameter in [*item.get("parameters", ()), *operation.get("parameters", ())]:
                if parameter.get("in") == "query":
                    rule[parameter["name"]] = parameter.get("schema", {}).get("type") == "array"
            rules[(path, method.upper())] = rule
    return rules


def check_query(request: Request, rule: QueryRule) -> None:
    seen: set[str] = set()
    for name, _value in request.query_params.multi_items():
        if name not in rule:
            raise invalid_request(f"this operation takes no query parameter {name!r}")
        if name in seen and not rule[name]:
            raise invalid_request(f"the query parameter {name!r} is given more than once")
        seen.add(name)
