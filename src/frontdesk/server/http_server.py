"""The HTTP server ``frontdesk serve`` runs: Granian, as published, configured from the
settings, and nothing of it subclassed or reached into.

Granian parses HTTP/1.1 with hyper, and hyper keeps the limits that cut slow and oversized
clients off before they reach Python:

- the request line and headers must fit ``FRONTDESK_MAX_HEADER_BYTES`` (hyper's read
  buffer), or the answer is 431 and the connection closes (RFC 6585 section 5);
- they must arrive within ``FRONTDESK_HEADER_READ_TIMEOUT_SECONDS`` of the connection
  opening, or of the last response on it, or the connection closes: a client that drips
  its head, or opens a connection and sends nothing, or leaves it idle, holds it no longer;
- each worker serves at most ``FRONTDESK_MAX_CONNECTIONS_PER_WORKER`` connections: it
  accepts no more until one ends, and the kernel keeps the rest in the listen queue.

The body's deadline, which hyper does not keep, is the application's (body_deadline.py),
and so is the cap on bodies under way per client address
(``FRONTDESK_MAX_BODIES_PER_ADDRESS``): Granian has no setting per address, and only the
application knows the address behind a trusted proxy. A connection that sends nothing never
reaches the application: it is bounded by the header timeout alone, and a cap per address
on those is the proxy's in front, or the kernel's (docs/design.md, "Connection limits").

Every worker is a process with a socket of its own on the address (``SO_REUSEPORT``), so
the kernel spreads connections over them evenly, whichever wakes first. The supervisor
answers SIGTERM by letting the workers finish what they serve (the lifespan's shutdown
included) and exits 0.

The workers keep their metrics in files of a directory the supervisor makes for them
(metrics.py), so that /metrics reads every worker's figures whichever worker answers.
"""

from __future__ import annotations

import ctypes
import ipaddress
import math
import multiprocessing
import os
import signal
import socket
import sys
from typing import NoReturn

from granian import Granian
from granian.constants import HTTPModes, Interfaces, Loops
from granian.http import HTTP1Settings
from granian.log import LogLevels

from frontdesk.config import Settings
from frontdesk.errors import CannotListen
from frontdesk.observability.logs import stdlib_log_config
from frontdesk.server import stop_guard
from frontdesk.server.rsgi_bridge import RsgiBridge
from frontdesk.web.bodies_per_address import BodiesPerAddress
from frontdesk.web.body_deadline import BodyDeadline
from frontdesk.web.network import ClientAddressResolver

APP = "frontdesk.server.http_server:served_app"
# How long a worker may take to finish its requests after SIGTERM before it is killed:
# every wait inside a request is bounded well below it (outbound calls, tool limits).
SHUTDOWN_GRACE_SECONDS = 8
# What Granian's supervisor may take beyond that to stop (its last worker joined, its pipes
# closed) before stop_guard kills it and its workers: well below systemd's 15 s.
STOP_MARGIN_SECONDS = 2
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def serve_http(settings: Settings, *, host: str, port: int, workers: int) -> NoReturn:
    """Serve on ``host:port`` (checked first with ``check_address``) with ``workers``
    processes, until SIGTERM or SIGINT: any number of them, in any order, stop it once
    (stop_guard.py), within ``SHUTDOWN_GRACE_SECONDS`` and a margin.

    This process becomes the stop guard (same pid, for systemd and scripts, in a fresh
    interpreter that holds far less than this one: docs/decisions/stop-guard.md), and the
    guard runs Granian's supervisor as its child, which reads its settings from the
    environment as the workers do (operations.serve puts there what the command derived).
    """
    guard = [
        *(sys.executable, "-P", "-m", stop_guard.__name__),
        str(SHUTDOWN_GRACE_SECONDS + STOP_MARGIN_SECONDS),
        str(settings.metrics_dir or ""),
        settings.log_level,
        "json" if settings.log_json else "console",
    ]
    # -P: the working directory is not on the server's sys.path (operations.py).
    server = [sys.executable, "-P", "-m", __name__, host, str(port), str(workers), str(os.getpid())]
    # exec keeps no buffer: what this process said must be out first.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [*guard, "--", *server])  # noqa: S606 (this interpreter, our modules)


def _serve_granian(settings: Settings, host: str, port: int, workers: int) -> None:
    """Granian's supervisor and its workers: the child process ``serve_http`` runs."""
    # Each worker a fresh interpreter, as uvicorn's were, not a fork of this process:
    # a fork would start with this process's state, its random generators included (every
    # worker would hand out the same request ids). Granian starts its workers the way
    # multiprocessing is set to.
    multiprocessing.set_start_method("spawn", force=True)
    Granian(
        APP,
        factory=True,
        address=host,
        port=port,
        # Granian's own interface: the application is ASGI, bridged in Python
        # (rsgi_bridge.py, whose lifespan starts and stops the services in each worker).
        interface=Interfaces.RSGI,
        workers=workers,
        # Restarted, as uvicorn's supervisor did, rather than the whole service stopping.
        respawn_failed_workers=True,
        workers_kill_timeout=SHUTDOWN_GRACE_SECONDS,
        loop=Loops.uvloop,
        # HTTP/1.1 only, as the load balancer in front speaks it. With "auto", hyper first
        # reads to tell HTTP/2 from HTTP/1, and that read waits without any time limit.
        http=HTTPModes.http1,
        # Frontdesk serves no WebSocket route: an upgrade is answered as the plain request.
        websockets=False,
        backpressure=settings.max_connections_per_worker,
        http1_settings=HTTP1Settings(
            header_read_timeout=max(1, math.ceil(settings.header_read_timeout_seconds * 1000)),
            keep_alive=True,
            max_buffer_size=settings.max_header_bytes,
        ),
        # The access log is the application's (web.access_log.AccessLog). Granian reads no
        # X-Forwarded-For: the application's resolver believes FRONTDESK_TRUSTED_PROXIES.
        log_access=False,
        log_level=LogLevels.warning,
        # Granian's own lines (a worker that died, one killed at shut-down) in the JSON
        # every other line is, when the logs are JSON (observability.stdlib_log_config).
        log_dictconfig=stdlib_log_config() if settings.log_json else None,
    ).serve()


def served_app() -> RsgiBridge:
    """The application each worker serves (Granian calls this factory in the worker)."""
    # Imported here, in the worker: the supervisor and the other commands never build one.
    from frontdesk.app import create_app

    supervisor = multiprocessing.parent_process()
    _stop_with_parent(supervisor.pid if supervisor is not None else None)
    settings = Settings()
    limited = BodyDeadline(
        create_app(settings),
        settings.body_read_timeout_seconds,
        BodiesPerAddress(settings.max_bodies_per_address),
        ClientAddressResolver(settings.trusted_proxies),
    )
    return RsgiBridge(limited)


def _stop_with_parent(parent: int | None) -> None:
    """Have the kernel send this process SIGTERM when its parent (``parent``) ends.

    A supervisor that is killed outright (SIGKILL, the OOM killer) cannot stop its
    workers, and they would serve on, orphaned, on the port the next start binds too
    (``SO_REUSEPORT`` lets them share it): the service would stop only when all of it does.
    The same holds one level up, for Granian's supervisor under ``frontdesk serve``.
    """
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # Asked too late if the parent ended before: this process has a new parent already.
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def check_address(host: str, port: int) -> None:
    """Bind ``host:port`` as each worker will, and let go: a taken port or an address not
    of this machine fails here, plainly, before any worker starts."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        # Granian binds addresses, never names: a name could resolve to several.
        raise CannotListen(f"cannot listen on {host}: give an IP address, not a name") from None
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # The options every worker's socket carries: a port held by any other socket (one
        # that does not share it) is refused.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise CannotListen(f"cannot listen on {host}:{port}: {error.strerror}") from None


if __name__ == "__main__":
    # The child the stop guard starts: host, port, workers and the pid of the guard
    # (``frontdesk serve``) it must not outlive.
    _stop_with_parent(int(sys.argv[4]))
    _serve_granian(Settings(), sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
