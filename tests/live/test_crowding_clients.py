"""One address crowding a real ``frontdesk serve`` leaves other clients their answers.

Two attacks at once, as probing found them: one address keeps connections open that send
nothing (each holds a place until the header timeout ends it, then is reopened), another
opens connection after connection to the consent form and sends a byte of each body, never
the rest. Meanwhile a customer's machine asks for the tool list, each time on a new
connection. The worker's connection bound is set low so that the attacks, bounded in count
and time, would fill it: without the cap on bodies under way per address
(``FRONTDESK_MAX_BODIES_PER_ADDRESS``) the customer waits behind them until the body
timeout.

Every client is on loopback, at an address of its own (Linux answers on all of 127/8);
the service trusts no proxy, so each address is its own client.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.live.conftest import LiveService, running_service
from tests.live.test_slow_clients import TOOLS_LIST, head, mcp_head, read_answer

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

CONNECTIONS = 48
BODIES_PER_ADDRESS = 8
HEADER_TIMEOUT = 3.0
SILENT_CONNECTIONS = 16  # under the bound: silent connections are capped by time only
SILENT, SLOW_BODIES, CUSTOMER = "127.0.0.2", "127.0.0.3", "127.0.0.4"
SLOW_BODY_CONNECTIONS = 200
SLOW_BODY_INTERVAL = 0.025  # 40 new connections a second, as probing sent them
HEAD_START = 2.0  # the attacks fill the bound (without the cap) well within this
CUSTOMER_REQUESTS = 20
CUSTOMER_INTERVAL = 0.4
CUSTOMER_DEADLINE = 3.0
# Most of the customer's requests are answered in time; a busy test machine may slow some.
ANSWERED_FLOOR = 16


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    workdir = tmp_path_factory.mktemp("crowding-clients")
    limits = {
        "FRONTDESK_MAX_CONNECTIONS_PER_WORKER": str(CONNECTIONS),
        "FRONTDESK_MAX_BODIES_PER_ADDRESS": str(BODIES_PER_ADDRESS),
        "FRONTDESK_HEADER_READ_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
    }
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    with running_service("sqlite", database_url, workdir, extra_env=limits) as running:
        yield running


@dataclass
class Attack:
    """Attacks run on threads until ``stop`` is set; every socket they open is closed."""

    service: LiveService
    stop: threading.Event = field(default_factory=threading.Event)
    slow_bodies: list[socket.socket] = field(default_factory=list)
    silent_opened: int = 0

    def connect(self, source: str) -> socket.socket:
        host, port = self.service.base_url.removeprefix("http://").rsplit(":", 1)
        return socket.create_connection((host, int(port)), timeout=2.0, source_address=(source, 0))

    def silent_flood(self) -> None:
        """SILENT_CONNECTIONS open at all times, each reopened as soon as it is closed."""
        held = [self.connect(SILENT) for _ in range(SILENT_CONNECTIONS)]
        self.silent_opened = len(held)
        try:
            while not self.stop.is_set():
                closed, _, _ = select.select(held, [], [], 0.05)
                for client in closed:
                    with contextlib.suppress(OSError):
                        if client.recv(1024):
                            continue
                    client.close()
                    held.remove(client)
                    held.append(self.connect(SILENT))
                    self.silent_opened += 1
        finally:
            for client in held:
                client.close()

    def slow_body_flood(self) -> None:
        """A consent form's head and one byte of its body on each new connection."""
        partial = head(
            self.service,
            "POST",
            "/v1/initech/oauth/consent",
            [("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", "64")],
        )
        for _ in range(SLOW_BODY_CONNECTIONS):
            if self.stop.wait(SLOW_BODY_INTERVAL):
                return
            client = self.connect(SLOW_BODIES)
            self.slow_bodies.append(client)
            with contextlib.suppress(OSError):
                client.sendall(partial + b"f")

    def refused_slow_bodies(self) -> int:
        """How many slow-body connections were answered 429 and closed."""
        refused = 0
        for client in self.slow_bodies:
            client.setblocking(False)
            with contextlib.suppress(OSError):
                answer = client.recv(65536)
                if answer.startswith(b"HTTP/1.1 429 ") and b"connection: close" in answer.lower():
                    refused += 1
        return refused

    def close(self) -> None:
        for client in self.slow_bodies:
            client.close()


def customer_request(service: LiveService, answered: list[float]) -> None:
    """tools/list on a new connection from the customer's address, within its deadline."""
    started = time.monotonic()
    host, port = service.base_url.removeprefix("http://").rsplit(":", 1)
    with contextlib.suppress(OSError, AssertionError):
        with socket.create_connection(
            (host, int(port)), timeout=CUSTOMER_DEADLINE, source_address=(CUSTOMER, 0)
        ) as client:
            client.sendall(mcp_head(service, len(TOOLS_LIST)) + TOOLS_LIST)
            answer = read_answer(client)
        if answer.startswith(b"HTTP/1.1 200 ") and b'"tools"' in answer:
            answered.append(time.monotonic() - started)


def test_a_customer_is_answered_while_one_address_floods_and_another_drips_bodies(
    service: LiveService,
) -> None:
    attack = Attack(service)
    attackers = [
        threading.Thread(target=attack.silent_flood, daemon=True),
        threading.Thread(target=attack.slow_body_flood, daemon=True),
    ]
    answered: list[float] = []
    customers: list[threading.Thread] = []
    try:
        for attacker in attackers:
            attacker.start()
        assert not attack.stop.wait(HEAD_START)
        for _ in range(CUSTOMER_REQUESTS):
            customer = threading.Thread(target=customer_request, args=(service, answered))
            customer.start()
            customers.append(customer)
            attack.stop.wait(CUSTOMER_INTERVAL)
        for customer in customers:
            customer.join(CUSTOMER_DEADLINE + 1.0)
        refused = attack.refused_slow_bodies()
    finally:
        attack.stop.set()
        for attacker in attackers:
            attacker.join(5.0)
        attack.close()

    assert len(answered) >= ANSWERED_FLOOR, (
        f"{len(answered)} of {CUSTOMER_REQUESTS} answered within {CUSTOMER_DEADLINE:g}s"
    )
    # The attacks ran in earnest: the silent connections were reopened after the header
    # timeout ended them, and the slow bodies past the cap were refused at once.
    assert attack.silent_opened > SILENT_CONNECTIONS
    assert len(attack.slow_bodies) > CONNECTIONS
    assert refused >= len(attack.slow_bodies) - CONNECTIONS
    # The bodies held to the end were abandoned when the attack closed its connections:
    # logged as such, each one line, with no traceback that would let a client fill the log.
    abandoned = '"path":"/v1/initech/oauth/consent","status":499'
    deadline = time.monotonic() + CUSTOMER_DEADLINE
    while service.log_path.read_text().count(abandoned) < BODIES_PER_ADDRESS:
        assert time.monotonic() < deadline, service.output()
        time.sleep(0.05)
    assert "Traceback" not in service.log_path.read_text()
