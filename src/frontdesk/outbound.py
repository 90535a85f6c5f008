"""The outbound HTTP clients: one for the companies' identity providers, one for their
tool backends. Each is made on first use, with httpx itself: a worker whose companies have
neither an OpenID Connect login nor an HTTP tool never loads them (about 4 MB a worker,
the TLS context with its CA bundle included)."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

# A call to an identity provider: discovery, keys, the code exchange.
LOGIN_TIMEOUT_SECONDS = 10.0
# Tool backends: each call is bounded by its tool's own timeout, so only connecting is
# limited here. One pool, so that busy tools reuse connections.
BACKEND_CONNECT_TIMEOUT_SECONDS = 10.0
BACKEND_CONNECTIONS = 200
BACKEND_KEPT_ALIVE = 50


class OutboundClients:
    def __init__(self) -> None:
        self._tls: ssl.SSLContext | None = None
        self._logins: httpx.AsyncClient | None = None
        self._backends: httpx.AsyncClient | None = None

    def for_logins(self) -> httpx.AsyncClient:
        if self._logins is None:
            import httpx

            self._logins = httpx.AsyncClient(
                verify=self._tls_context(),
                timeout=LOGIN_TIMEOUT_SECONDS,
                follow_redirects=False,
            )
        return self._logins

    def for_backends(self) -> httpx.AsyncClient:
        if self._backends is None:
            import httpx

            self._backends = httpx.AsyncClient(
                verify=self._tls_context(),
                timeout=httpx.Timeout(None, connect=BACKEND_CONNECT_TIMEOUT_SECONDS),
                limits=httpx.Limits(
                    max_connections=BACKEND_CONNECTIONS,
                    max_keepalive_connections=BACKEND_KEPT_ALIVE,
                ),
                follow_redirects=False,
            )
        return self._backends

    def _tls_context(self) -> ssl.SSLContext:
        # One context (the defaults each client would make) for both clients: each context
        # holds its own copy of the CA bundle, close to 1 MB a worker.
        if self._tls is None:
            import httpx

            self._tls = httpx.create_ssl_context()
        return self._tls

    async def aclose(self) -> None:
        for client in (self._logins, self._backends):
            if client is not None:
                await client.aclose()
        self._logins = self._backends = None
