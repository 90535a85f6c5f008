"""The listening socket ``frontdesk serve --workers N`` hands its workers: one of their own
for each, on the same address, so that the kernel spreads connections over them evenly.

uvicorn binds one socket in the supervisor and every worker listens on it: one accept
queue, and whichever worker wakes first accepts everything waiting in it (uvloop accepts
until the queue is empty). Connections that arrive together, as a load balancer's pool or
a load generator's do, then land unevenly, at worst all on one worker while the others
idle: measured here with 2 workers and 32 connections opened at once, splits of 9/23 were
common, and in some runs one worker held all 32 (2 workers then served 31,600 requests/s,
against 32,800 for 1).

With ``SO_REUSEPORT`` each worker has a socket and an accept queue of its own, and Linux
picks the queue by a hash of each connection's addresses, whatever the timing: even on
average (32 connections over 2 workers split about 16 ± 3). The supervisor still binds
first, so a taken port fails at once and port 0 resolves to one port for all; its socket
never listens, so no connection waits on it.

Trade-offs, as with nginx's ``reuseport``: connections still queued (not yet accepted)
on a worker that exits are reset, and any process of the same user could join the group.
"""

from __future__ import annotations

import socket
from typing import Any


class SpreadListener(socket.socket):
    """The supervisor's bound socket. Handed to a worker (pickled, as uvicorn's spawned
    workers receive their sockets), it arrives as a new socket bound to the same address
    in the same ``SO_REUSEPORT`` group, not as a copy of this one."""

    def __reduce__(self) -> tuple[Any, ...]:
        host, port = self.getsockname()[:2]
        return (bind_reusing_port, (self.family, host, port))


def spread_listener(host: str, port: int) -> SpreadListener:
    """Bind ``host:port`` for the supervisor (raises ``OSError`` when it is taken)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = SpreadListener(family, socket.SOCK_STREAM)
    _bind_sharing_port(listener, host, port)
    return listener


def bind_reusing_port(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    """A worker's own socket on the supervisor's address; the worker listens on it."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    _bind_sharing_port(sock, host, port)
    return sock


def _bind_sharing_port(sock: socket.socket, host: str, port: int) -> None:
    try:
        # SO_REUSEADDR as uvicorn sets it (a restart need not wait out TIME_WAIT), and the
        # port shared by every socket of this user that sets SO_REUSEPORT too.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
