"""The transport of the tool-backend client: connections kept alive across calls, and each
new one made to an address the operator's policy permits (addresses.AddressPolicy), the
very address that was checked.

Checking a name and then letting the HTTP client resolve it again to connect leaves a gap:
a name that answers a public address to the check and an internal one a moment later (DNS
rebinding) would carry the call, with the company's signing secret, into the service's own
network. httpcore lets a connection pool take its own network backend (its documented
extension point); the one here resolves and checks the name, then opens the TCP connection
to a checked address. Everything above TCP is httpcore's as usual: TLS is started with the
URL's host as SNI and certificate name, and the pool keeps connections per origin (scheme,
name, port), so a connection made for one name never carries a call for another.

httpx takes a pool only through a transport of its own (httpx.AsyncBaseTransport), so the
transport here hands requests to the pool and its answers and failures back in httpx's
types, as httpx's own default transport does.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Iterable

import httpcore
import httpx

from frontdesk.outbound.addresses import AddressPolicy


class CheckedNetwork(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to addresses ``policy`` permits; AddressRefused otherwise
    (a name with any address outside the policy is not connected to at all)."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy
        self._sockets = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface names it
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            # The resolution counts against the connect timeout, as the resolver's would.
            async with asyncio.timeout(timeout):
                addresses = await self._policy.check(host, port)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"{host} did not resolve in time") from None
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._sockets.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                # Another address of the same name may take the connection.
                failure = error
        assert failure is not None  # check() never answers an empty list
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface names it
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("backends are reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._sockets.sleep(seconds)


# httpcore's failures as the httpx ones callers catch (httpx.HTTPError and its subclasses).
_FAILURES: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


def _as_httpx(error: Exception) -> Exception:
    for core, mapped in _FAILURES:
        if isinstance(error, core):
            return mapped(str(error))
    return error


class CheckedTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        policy: AddressPolicy,
        tls: ssl.SSLContext,
        *,
        max_connections: int,
        max_keepalive_connections: int,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls,
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            # httpx's default: a backend's idle connection is not trusted for longer.
            keepalive_expiry=5.0,
            network_backend=CheckedNetwork(policy),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = await self._pool.handle_async_request(sent)
        except Exception as error:
            raise _as_httpx(error) from None
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_AnswerBody(answer),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _AnswerBody(httpx.AsyncByteStream):
    def __init__(self, answer: httpcore.Response) -> None:
        self._answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._answer.aiter_stream():
                yield chunk
        except Exception as error:
            raise _as_httpx(error) from None

    async def aclose(self) -> None:
        await self._answer.aclose()
