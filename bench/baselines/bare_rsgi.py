"""The ceiling for Granian: a bare RSGI application that answers a JSON-RPC ``tools/call``
of ``echo`` as bare_asgi.py does, on the server and interface Frontdesk is served with
(Granian, RSGI, one worker, uvloop, HTTP/1.1). What Frontdesk adds beside it is its own
code; what both pay is Granian's.

Run: ``python -m granian --interface rsgi --loop uvloop --http 1 baselines.bare_rsgi:app``
(the driver does, from ``bench/``, with Frontdesk's Python, where Granian is installed).
"""

from __future__ import annotations

from typing import Any

import orjson

_JSON = [("content-type", "application/json")]


def _answer(protocol: Any, status: int, payload: object) -> None:
    protocol.response_bytes(status, _JSON, orjson.dumps(payload))


async def app(scope: Any, protocol: Any) -> None:
    if scope.proto != "http":
        return
    if scope.method != "POST":
        _answer(protocol, 405, {"error": "POST only"})
        return
    try:
        message = orjson.loads(await protocol())
        params = message["params"]
        valid = (
            message.get("jsonrpc") == "2.0"
            and message.get("method") == "tools/call"
            and params.get("name") == "echo"
            and isinstance(params["arguments"]["text"], str)
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        valid = False
    if not valid:
        error = {"code": -32600, "message": "only tools/call of echo is served here"}
        _answer(protocol, 400, {"jsonrpc": "2.0", "id": None, "error": error})
        return
    text = params["arguments"]["text"]
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    _answer(protocol, 200, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})
