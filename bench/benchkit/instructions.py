"""Instructions per request of a guest ``tools/call``, counted by callgrind: robust on a
busy machine, where times are not.

    .venv/bin/python bench/benchkit/instructions.py [--requests 2000]

Builds Frontdesk as ``frontdesk serve`` does (the RSGI bridge around the body deadline
around the application, metrics in multiprocess mode, the access log on) over a fresh
SQLite file with bench/companies.yaml applied, and runs it twice under callgrind: once
for a warm-up only, once for the warm-up and ``--requests`` more. The difference over
``--requests`` is what one request costs, Granian's own share excepted (its HTTP is not
run: the requests are handed to the bridge as Granian's RSGI would hand them over).

Run with the project's Python (``.venv``): it imports Frontdesk. ``--inside N`` is the
child's side (N requests after the warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent
WARM_UP = 300
BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"hello"}}}'
)
_TOTAL = re.compile(rb"^(?:summary|totals): (\d+)", re.MULTILINE)


class _Headers(dict[str, str]):
    """RSGI's headers: a mapping with ``items`` and ``get``."""


class _Scope:
    proto = "http"
    http_version = "1.1"
    method = "POST"
    scheme = "http"
    path = "/v1/bench/mcp"
    query_string = ""
    client = "127.0.0.1:50000"
    server = "127.0.0.1:8000"

    def __init__(self) -> None:
        self.headers = _Headers(
            {
                "host": "127.0.0.1:8000",
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
                "content-length": str(len(BODY)),
            }
        )


class _Protocol:
    """The part of Granian's RSGI ``HTTPProtocol`` a one-piece request and answer use."""

    status = 0

    async def __call__(self) -> bytes:
        return BODY

    def response_bytes(self, status: int, _headers: Any, _body: bytes) -> None:
        self.status = status


async def _serve(requests: int) -> None:
    from frontdesk.server.http_server import served_app

    bridge: Any = served_app()
    loop = asyncio.get_running_loop()
    await _start(bridge, loop)
    for _ in range(WARM_UP + requests):
        protocol = _Protocol()
        await bridge.__rsgi__(_Scope(), protocol)
        if protocol.status != 200:
            raise SystemExit(f"the call answered {protocol.status}")
    await bridge._lifespan.shutdown()


async def _start(bridge: Any, loop: asyncio.AbstractEventLoop) -> None:
    # __rsgi_init__ runs the start-up on a loop not yet running; here it is running.
    from frontdesk.server.rsgi_bridge import _Lifespan

    bridge._lifespan = _Lifespan(bridge._app, bridge._state, loop)
    await bridge._lifespan.startup()


def _environment(workdir: Path) -> dict[str, str]:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    return {
        **os.environ,
        "FRONTDESK_DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        "FRONTDESK_BASE_URL": "http://127.0.0.1:8000",
        "FRONTDESK_SEED_DEMO": "false",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        # bench/ for the tools; before it, a PYTHONPATH given (another tree's src to measure).
        "PYTHONPATH": os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), str(BENCH)))),
    }


def _count(env: dict[str, str], requests: int, out: Path) -> int:
    subprocess.run(
        [
            *("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"),
            *(sys.executable, __file__, "--inside", str(requests)),
        ],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    found = _TOTAL.search(out.read_bytes())
    if found is None:
        raise SystemExit(f"no total in {out}")
    return int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--inside", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help="keep the callgrind files here")
    args = parser.parse_args()
    if args.inside is not None:
        asyncio.run(_serve(args.inside))
        return
    with tempfile.TemporaryDirectory(prefix="frontdesk-instructions-") as scratch:
        workdir = Path(scratch)
        env = _environment(workdir)
        frontdesk = Path(sys.executable).with_name("frontdesk")
        subprocess.run(
            [str(frontdesk), "companies", "apply", str(BENCH / "companies.yaml")],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        keep = args.keep or workdir
        base = _count(env, 0, keep / "callgrind.base")
        loaded = _count(env, args.requests, keep / "callgrind.loaded")
    print(f"{(loaded - base) / args.requests:,.0f} instructions per guest tools/call")


if __name__ == "__main__":
    main()
