"""The socket `frontdesk serve --workers N` hands its workers: each arrives as one of its own
on the supervisor's address, and the kernel spreads connections over them."""

from __future__ import annotations

import errno
import selectors
import socket
import time
from multiprocessing.reduction import ForkingPickler

import pytest

from frontdesk.listener import SpreadListener, spread_listener

CONNECTIONS = 64


def handed_to_a_worker(listener: SpreadListener) -> socket.socket:
    """What a spawned worker unpickles: uvicorn's supervisor pickles its sockets so."""
    received = ForkingPickler.loads(bytes(ForkingPickler.dumps(listener)))
    assert isinstance(received, socket.socket)
    return received


def accept_all(listeners: list[socket.socket], expected: int) -> list[int]:
    """Accept until ``expected`` connections came in; how many each listener took."""
    taken = [0] * len(listeners)
    with selectors.DefaultSelector() as selector:
        for index, listener in enumerate(listeners):
            listener.setblocking(False)
            selector.register(listener, selectors.EVENT_READ, index)
        deadline = time.monotonic() + 10
        while sum(taken) < expected and time.monotonic() < deadline:
            for key, _events in selector.select(timeout=0.5):
                connection, _address = key.fileobj.accept()  # type: ignore[union-attr]
                connection.close()
                taken[key.data] += 1
    return taken


def test_each_worker_listens_on_a_socket_of_its_own_at_the_same_address() -> None:
    """Connections opened all at once reach both workers' queues; none waits on the
    supervisor's socket, which never listens."""
    supervisor = spread_listener("127.0.0.1", 0)
    workers = [handed_to_a_worker(supervisor) for _ in range(2)]
    try:
        assert {worker.getsockname() for worker in workers} == {supervisor.getsockname()}
        assert all(worker.fileno() != supervisor.fileno() for worker in workers)
        for worker in workers:
            worker.listen(CONNECTIONS)
        clients = [
            socket.create_connection(supervisor.getsockname(), timeout=5)
            for _ in range(CONNECTIONS)
        ]
        taken = accept_all(workers, CONNECTIONS)
        for client in clients:
            client.close()
        assert sum(taken) == CONNECTIONS
        # Spread by a hash of each connection's addresses: one worker taking all 64 has
        # a chance of 2 in 2**64.
        assert min(taken) > 0, taken
    finally:
        for sock in (supervisor, *workers):
            sock.close()


def test_port_zero_becomes_one_port_for_every_worker() -> None:
    supervisor = spread_listener("127.0.0.1", 0)
    worker = handed_to_a_worker(supervisor)
    try:
        assert supervisor.getsockname()[1] != 0
        assert worker.getsockname() == supervisor.getsockname()
    finally:
        supervisor.close()
        worker.close()


def test_a_port_another_server_listens_on_is_refused() -> None:
    """A port held by a socket that does not share it fails in the supervisor, at once."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="in use") as raised:
            spread_listener("127.0.0.1", taken.getsockname()[1])
    assert raised.value.errno == errno.EADDRINUSE
