"""The outbound HTTP clients: one for the companies' identity providers, one for their
tool backends, one for client metadata documents; what a call may reach, how long it may
take and how much it may bring back is the outbound policy's (outbound_policy). Each client
is made on first use, with httpx itself: a worker whose companies have neither an OpenID
Connect login nor an HTTP tool, and whose customers use no metadata-document client, never
loads them (docs/decisions/memory.md: the TLS context with its CA bundle included)."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from frontdesk.outbound.addresses import AddressPolicy

if TYPE_CHECKING:
    import httpx

# A call to an identity provider: discovery, keys, the code exchange. Each step (discovery
# with keys; the exchange) is bounded as a whole by the outbound policy (login.oidc); the
# per-phase timeout only backs that deadline up. Discovery documents, key sets and token
# answers are a few kilobytes; the cap applies to the decoded body.
LOGIN_TIMEOUT_SECONDS = 10.0
LOGIN_MAX_ANSWER_BYTES = 1024 * 1024
# Tool backends: each call is bounded by its tool's own timeout, so only connecting is
# limited here. One pool, so that busy tools reuse connections.
BACKEND_CONNECT_TIMEOUT_SECONDS = 10.0
BACKEND_CONNECTIONS = 200
BACKEND_KEPT_ALIVE = 50
# Client metadata documents (oauth.client_documents): each fetch is bounded as a whole
# there; these per-phase limits only back that deadline up. At most this many fetches at
# once, so that client_ids sent by anyone cannot hold open more outbound connections.
DOCUMENT_TIMEOUT_SECONDS = 5.0
DOCUMENT_CONNECTIONS = 16


class OutboundClients:
    def __init__(
        self, tls: ssl.SSLContext | None = None, backend_addresses: AddressPolicy | None = None
    ) -> None:
        # ``tls`` replaces the default trust (certifi's bundle, or SSL_CERT_FILE when set):
        # tests pass a context that trusts their own CA. Verification stays on either way.
        self._tls = tls
        # Where tool backends may be reached: the operator's reviewed backends may be
        # allowed private networks (FRONTDESK_BACKEND_ALLOWED_NETWORKS).
        self._backend_addresses = backend_addresses or AddressPolicy([])
        self._logins: httpx.AsyncClient | None = None
        self._backends: httpx.AsyncClient | None = None
        self._documents: httpx.AsyncClient | None = None

    def for_logins(self) -> httpx.AsyncClient:
        if self._logins is None:
            import httpx

            self._logins = httpx.AsyncClient(
                verify=self._tls_context(),
                timeout=LOGIN_TIMEOUT_SECONDS,
                # Never kept alive, for the reason given for documents below: each call is
                # made to an address checked for its name (outbound_policy.pinned_stream).
                # A sign-in makes two or three calls at most.
                limits=httpx.Limits(max_keepalive_connections=0),
                follow_redirects=False,
                # No proxy from the environment: it would resolve the name past the policy.
                trust_env=False,
            )
        return self._logins

    def for_backends(self) -> httpx.AsyncClient:
        if self._backends is None:
            import httpx

            from frontdesk.outbound.checked_transport import CheckedTransport

            self._backends = httpx.AsyncClient(
                # Kept alive, and each new connection made to an address checked for its
                # name (checked_transport).
                transport=CheckedTransport(
                    self._backend_addresses,
                    self._tls_context(),
                    max_connections=BACKEND_CONNECTIONS,
                    max_keepalive_connections=BACKEND_KEPT_ALIVE,
                ),
                timeout=httpx.Timeout(None, connect=BACKEND_CONNECT_TIMEOUT_SECONDS),
                follow_redirects=False,
                # No proxy from the environment: it would resolve the name past the policy.
                trust_env=False,
            )
        return self._backends

    def for_documents(self) -> httpx.AsyncClient:
        if self._documents is None:
            import httpx

            self._documents = httpx.AsyncClient(
                verify=self._tls_context(),
                timeout=DOCUMENT_TIMEOUT_SECONDS,
                # Never kept alive: a connection is made to an address checked for one name,
                # and a pooled one could carry a later fetch for another name on the same
                # address without that name's certificate check.
                limits=httpx.Limits(
                    max_connections=DOCUMENT_CONNECTIONS, max_keepalive_connections=0
                ),
                follow_redirects=False,
                # No proxy from the environment: a proxy would resolve the name itself, past
                # the address policy.
                trust_env=False,
            )
        return self._documents

    def _tls_context(self) -> ssl.SSLContext:
        # One context (the defaults each client would make) for both clients: each context
        # holds its own copy of the CA bundle (docs/decisions/memory.md).
        if self._tls is None:
            import httpx

            self._tls = httpx.create_ssl_context()
        return self._tls

    async def aclose(self) -> None:
        for client in (self._logins, self._backends, self._documents):
            if client is not None:
                await client.aclose()
        self._logins = self._backends = self._documents = None
