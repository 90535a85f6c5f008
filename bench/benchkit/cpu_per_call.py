"""Server CPU per guest ``tools/call`` in Frontdesk's own code, measured in process.

    .venv/bin/python bench/benchkit/cpu_per_call.py [--requests 2000] [--batches 7]

Builds Frontdesk as ``frontdesk serve`` does (the RSGI bridge around the body deadline
around the application, metrics in multiprocess mode, the access log on) over a fresh
SQLite file with bench/companies.yaml applied, hands it requests as Granian's RSGI would
(Granian's own HTTP is not run, so what is left is Frontdesk's share), and prints the
process's CPU time per request: the least of ``--batches`` batches, as the batch least
disturbed by the rest of a busy machine.

Run with the project's Python (``.venv``): it imports Frontdesk. ``--inside N`` is the
child's side.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

BENCH = Path(__file__).resolve().parent.parent
WARM_UP = 300
BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"hello"}}}'
)


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


async def _count_opcodes(bridge: Any, requests: int) -> None:
    """Python bytecodes run per request, by package: a count the rest of the machine
    cannot disturb (C code, the interpreter's own and libraries', is not counted)."""
    counts: Counter[str] = Counter()

    def opcode(frame: FrameType, event: str, _arg: object) -> Any:
        if event == "opcode":
            counts[frame.f_code.co_filename] += 1
        return opcode

    def call(frame: FrameType, _event: str, _arg: object) -> Any:
        frame.f_trace_opcodes = True
        return opcode

    sys.settrace(call)
    try:
        await _calls(bridge, requests)
    finally:
        sys.settrace(None)
    packages: Counter[str] = Counter()
    for filename, count in counts.items():
        packages[_package(filename)] += count
    for package, count in packages.most_common():
        print(f"{count / requests:10,.0f} {package}")
    print(f"{counts.total() / requests:10,.0f} Python bytecodes per guest tools/call")


def _package(filename: str) -> str:
    """The top-level package a source file belongs to (``frontdesk``, ``starlette``...)."""
    parts = Path(filename).parts
    for marker in ("site-packages", "src"):
        if marker in parts[:-1]:
            rest = parts[len(parts) - parts[::-1].index(marker) :]
            return rest[0].removesuffix(".py")
    return "python" if "lib" in parts else Path(filename).stem


async def _serve(requests: int, batches: int) -> None:
    from frontdesk.server.http_server import served_app

    bridge: Any = served_app()
    loop = asyncio.get_running_loop()
    await _start(bridge, loop)
    await _calls(bridge, WARM_UP)
    if batches == 0:
        await _count_opcodes(bridge, requests)
    best = float("inf")
    for _ in range(batches):
        started = time.process_time()
        await _calls(bridge, requests)
        best = min(best, (time.process_time() - started) / requests)
    await bridge._lifespan.shutdown()
    if batches:
        print(f"{best * 1e6:.1f} µs of CPU per guest tools/call")


async def _calls(bridge: Any, count: int) -> None:
    for _ in range(count):
        protocol = _Protocol()
        await bridge.__rsgi__(_Scope(), protocol)
        if protocol.status != 200:
            raise SystemExit(f"the call answered {protocol.status}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument(
        "--opcodes", action="store_true", help="count Python bytecodes instead, by package"
    )
    parser.add_argument("--inside", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside is not None:
        asyncio.run(_serve(args.inside, args.batches))
        return
    with tempfile.TemporaryDirectory(prefix="frontdesk-cpu-per-call-") as scratch:
        workdir = Path(scratch)
        env = _environment(workdir)
        frontdesk = Path(sys.executable).with_name("frontdesk")
        subprocess.run(
            [str(frontdesk), "companies", "apply", str(BENCH / "companies.yaml")],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--inside",
                str(args.requests),
                "--batches",
                "0" if args.opcodes else str(args.batches),
            ],
            env=env,
            check=True,
            # The access log, as a served instance writes it, to nowhere.
            stderr=subprocess.DEVNULL,
        )


if __name__ == "__main__":
    main()
