"""A plain HTTP/1.1 server for tests of outbound calls: it records every request as it
arrived (so a test can show what never left Frontdesk) and answers each path with a handler,
including answers no well-behaved server gives (endless, dripped, a gzip bomb)."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass(slots=True)
class Received:
    method: str
    path: str
    raw: bytes


Handler = Callable[[asyncio.StreamWriter], Awaitable[None]]


@dataclass(slots=True)
class Server:
    """A plain HTTP/1.1 server that records every request and answers per path."""

    host: str
    routes: dict[str, Handler] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def paths(self) -> list[str]:
        return [request.path for request in self.received]

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length)
            self.received.append(Received(method, target, head + body))
            await self.routes.get(target, answer(404, {}))(writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def answer(status: int, document: Any, headers: dict[str, str] | None = None) -> Handler:
    body = orjson.dumps(document)

    async def write(writer: asyncio.StreamWriter) -> None:
        head = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        head.update(headers or {})
        lines = "".join(f"{name}: {value}\r\n" for name, value in head.items())
        writer.write(f"HTTP/1.1 {status} X\r\n{lines}Connection: close\r\n\r\n".encode() + body)
        await writer.drain()

    return write


def endless(chunk: bytes, pause: float = 0.0, coding: str | None = None) -> Handler:
    """An answer with no length that keeps sending ``chunk`` until the client leaves."""

    async def write(writer: asyncio.StreamWriter) -> None:
        extra = f"Content-Encoding: {coding}\r\n" if coding else ""
        writer.write(
            f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
            "Connection: close\r\n\r\n".encode()
        )
        for _ in range(100_000):
            writer.write(chunk)
            await writer.drain()
            await asyncio.sleep(pause)

    return write


def gzip_bomb(inflated_mib: int) -> Handler:
    """A valid gzip body, small on the wire, that inflates to ``inflated_mib`` MiB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    body = b"".join(packer.compress(zeros) for _ in range(inflated_mib)) + packer.flush()

    async def write(writer: asyncio.StreamWriter) -> None:
        writer.write(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()

    return write
