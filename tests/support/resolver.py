"""A stand-in for the event loop's getaddrinfo, so tests can give names any address."""

from __future__ import annotations

import socket
from typing import Any


class FakeResolver:
    """Answers from a table, counting lookups. With ``then``, every lookup after the first
    answers from that table instead: a name rebound between two lookups."""

    def __init__(
        self, answers: dict[str, list[str]], then: dict[str, list[str]] | None = None
    ) -> None:
        self.answers = answers
        self.then = then
        self.lookups = 0

    async def __call__(self, host: str, port: int, **_options: Any) -> list[Any]:
        self.lookups += 1
        answers = self.answers
        if self.then is not None:
            self.answers = self.then
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]
