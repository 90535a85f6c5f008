"""Issue 32's targets, each judged from figures of one run: Frontdesk's own cost beside
Granian's bare RSGI ceiling, and a tool that is a JSON HTTP API beside the bare
pass-through and FastMCP on the same backend."""

from __future__ import annotations

from collections.abc import Mapping

from benchkit.rows import Row
from benchkit.targets import Bound, Target, _share, _times, judged

GUEST_CPU_US = Bound(65, at_most=True)
GUEST_OF_UVICORN = Bound(0.45)
GUEST_OF_RSGI = Bound(0.65)
BEARER_SQLITE = Bound(0.35)
API_OF_PASS_THROUGH = Bound(0.6)
API_OVER_OTHERS = 3
API_P99_MS = Bound(15, at_most=True)


def api_targets(rows: Mapping[str, Row]) -> list[Target]:
    """Every issue-32 target whose scenarios this run measured, by scenario key."""
    found: list[Target] = []
    guest, ceiling, rsgi = rows.get("guest-call"), rows.get("ceiling"), rows.get("ceiling-rsgi")
    if guest:
        name = "guest tools/call: server CPU ≤ 65 µs per request"
        found.append(judged(name, guest.cpu_us, GUEST_CPU_US, 0, "{} µs"))
    if guest and ceiling:
        name = "guest tools/call ≥ 45% of the uvicorn ceiling"
        found.append(_share(name, guest, ceiling, GUEST_OF_UVICORN))
    if guest and rsgi:
        name = "guest tools/call ≥ 65% of the bare Granian RSGI ceiling"
        found.append(_share(name, guest, rsgi, GUEST_OF_RSGI))
    bearer = rows.get("bearer-sqlite")
    if bearer and ceiling:
        name = "signed-in tools/call on SQLite ≥ 35% of the ceiling"
        found.append(_share(name, bearer, ceiling, BEARER_SQLITE))
    through = rows.get("api-pass-through")
    for key in ("api-http", "api-http-bearer", "api-openapi"):
        row = rows.get(key)
        if row is None:
            continue
        if through:
            name = f"{row.scenario.label} ≥ 60% of the bare pass-through"
            found.append(_share(name, row, through, API_OF_PASS_THROUGH))
        fastmcp = rows.get("api-fastmcp")
        if fastmcp:
            name = f"{row.scenario.label} ≥ 3× FastMCP on the same backend"
            found.append(_times(name, row, fastmcp, API_OVER_OTHERS))
        found.append(judged(f"p99 ≤ 15 ms: {row.scenario.label}", row.p99, API_P99_MS, 1, "{} ms"))
    return found
