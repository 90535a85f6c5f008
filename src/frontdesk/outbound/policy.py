"""The one policy for every call Frontdesk makes on a company's or a stranger's behalf: to a
company's identity provider (discovery, keys, the code exchange), to its tool backends, and
for the client metadata documents any client_id may name.

- **Scheme**: https, or plain http where the caller allows it (development and tests: the
  companies file already limits a backend's http to loopback, and production refuses an
  http issuer, companies.production).
- **Addresses**: the host is resolved and every address it resolves to must pass an
  ``AddressPolicy`` (addresses: public addresses, plus the networks the operator
  opened), by the one check every outbound call makes (``AddressPolicy.check``). The
  connection is then made to a checked address, with the name sent as ``Host`` and, over
  TLS, as SNI and checked against the certificate: a name that resolves elsewhere a moment
  later (DNS rebinding) cannot move the call.
- **Redirects** are refused, never followed: a redirect could name any address.
- **A total deadline** for the whole call (resolution, connection, TLS, headers, body), so a
  server answering a byte at a time never resets a per-read timeout.
- **A byte cap on the decoded body**: the body is read as sent and abandoned once it passes
  the cap; gzip, the one coding decoded, is inflated here never more than one byte past it,
  so a small compressed body cannot grow into a large one in memory.

Failures are ``OutboundFailure``s (outbound.failures) whose message is for the log: it names
the host, an address or a size, never a header or a body (so never a secret, code or
token). Caching failures briefly is the caller's part, which knows what one failure means
(login.oidc, oauth.client_documents).
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from frontdesk.outbound.addresses import AddressPolicy, IPAddress
from frontdesk.outbound.failures import (
    AddressRefused,
    OutboundFailure,
    Oversized,
    Refused,
    TimedOut,
    Unreachable,
    Unreadable,
)

if TYPE_CHECKING:
    import httpx

__all__ = [
    "GZIP_CODINGS",
    "AddressRefused",
    "Answer",
    "OutboundFailure",
    "OutboundPolicy",
    "Oversized",
    "Refused",
    "TimedOut",
    "Unreachable",
    "Unreadable",
    "pinned_stream",
    "read_capped",
]

# RFC 9110 8.4.1.3: x-gzip is gzip. The one content coding decoded, within the cap; httpx
# would otherwise inflate whatever codecs are installed, a whole network read at a time.
GZIP_CODINGS = frozenset({"gzip", "x-gzip"})


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes


@asynccontextmanager
async def pinned_stream(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    addresses: list[IPAddress],
    *,
    headers: Mapping[str, str],
    content: bytes | None = None,
    auth: tuple[str, str] | None = None,
) -> AsyncIterator[httpx.Response]:
    """The answer to ``method url``, sent to the first of ``addresses`` that takes the
    connection, with the URL's host as ``Host`` (and SNI, checked against the certificate).
    Unreachable for anything that fails below HTTP, while connecting or while reading.

    ``http`` must keep no connection alive: a connection made to an address for one name
    could otherwise carry a later call for another name on the same address, without that
    name's certificate check (outbound.OutboundClients)."""
    import httpx

    parts = urlsplit(url)
    host = parts.hostname or ""
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = {**headers, "Host": parts.netloc.rpartition("@")[2]}
    extensions = {"sni_hostname": host} if https else {}
    failure: Exception | None = None
    async with AsyncExitStack() as stack:
        reply: httpx.Response | None = None
        for address in addresses:
            literal = f"[{address}]" if address.version == 6 else str(address)
            try:
                reply = await stack.enter_async_context(
                    http.stream(
                        method,
                        f"{parts.scheme}://{literal}:{port}{target}",
                        headers=sent,
                        content=content,
                        auth=auth,
                        extensions=extensions,
                    )
                )
                break
            except httpx.ConnectError as error:
                # Another address of the same name may answer; a certificate that does not
                # verify will not verify at the next one either.
                if _certificate_refused(error):
                    raise Unreachable(
                        f"{host} did not present a certificate valid for it"
                    ) from None
                failure = error
            except httpx.HTTPError as error:
                raise Unreachable(
                    f"{host} failed while answering ({type(error).__name__})"
                ) from None
        if reply is None:
            raise Unreachable(f"could not connect to {host} ({type(failure).__name__})")
        try:
            yield reply
        except httpx.HTTPError as error:
            raise Unreachable(f"{host} failed while answering ({type(error).__name__})") from None


def _certificate_refused(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


async def read_capped(reply: httpx.Response, limit_bytes: int) -> bytes:
    """The decoded body; Oversized as soon as it (or its compressed form) passes
    ``limit_bytes``, without decoding any further; Unreadable for a coding other than gzip
    or a broken gzip stream."""
    codings = [
        coding.strip().lower()
        for coding in reply.headers.get_list("content-encoding", split_commas=True)
    ]
    codings = [coding for coding in codings if coding not in ("", "identity")]
    if len(codings) > 1 or (codings and codings[0] not in GZIP_CODINGS):
        raise Unreadable(f"content encoding {', '.join(codings)!r} was not asked for")
    declared = reply.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit_bytes:
        raise Oversized(limit_bytes)
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if codings else None
    body = bytearray()
    received = 0
    try:
        # aiter_raw: the bytes as sent, so the cap is checked before anything is inflated.
        async for chunk in reply.aiter_raw():
            received += len(chunk)
            if received > limit_bytes:
                raise Oversized(limit_bytes)
            # max_length stops inflating one byte past the cap: the rest of the chunk stays
            # compressed (in unconsumed_tail) and is never expanded.
            room = limit_bytes + 1 - len(body)
            body += chunk if inflater is None else inflater.decompress(chunk, room)
            if len(body) > limit_bytes:
                raise Oversized(limit_bytes, inflated=True)
        if inflater is not None and not inflater.eof:
            raise Unreadable("the gzip body is cut short")
    except zlib.error:
        raise Unreadable("the gzip body is corrupt") from None
    return bytes(body)


class OutboundPolicy:
    """Whole calls under the policy: for callers that want the body of a 2xx or 4xx answer
    (the identity provider's discovery, keys and token endpoint)."""

    def __init__(
        self,
        addresses: AddressPolicy,
        *,
        allow_http: bool,
        limit_bytes: int,
        deadline_seconds: float,
    ) -> None:
        self.addresses = addresses
        self.allow_http = allow_http
        self.limit_bytes = limit_bytes
        self.deadline_seconds = deadline_seconds

    def deadline(self) -> float:
        """The event-loop time by which a call starting now must end; callers making
        several calls for one step pass it to each, so the step as a whole is bounded."""
        return asyncio.get_running_loop().time() + self.deadline_seconds

    def url_problem(self, url: str) -> str | None:
        """Why the policy would not call ``url`` (None: it would, address permitting)."""
        parts = urlsplit(url)
        allowed = ("https", "http") if self.allow_http else ("https",)
        if parts.scheme not in allowed:
            return f"{url[:200]!r} is not an {' or '.join(allowed)} URL"
        try:
            parts.port  # noqa: B018 (urlsplit checks the port only when asked)
        except ValueError:
            return f"{url[:200]!r} has an invalid port"
        if not parts.hostname or parts.username is not None or parts.password is not None:
            return f"{url[:200]!r} names no host, or carries credentials"
        return None

    async def call(
        self,
        http: httpx.AsyncClient,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        content: bytes | None = None,
        auth: tuple[str, str] | None = None,
        deadline: float | None = None,
    ) -> Answer:
        """The answer's status and decoded body; an OutboundFailure naming what went wrong.
        A redirect is Refused; any other status is the caller's to judge."""
        problem = self.url_problem(url)
        if problem is not None:
            raise Refused(problem)
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        when = self.deadline() if deadline is None else deadline
        try:
            async with asyncio.timeout_at(when):
                addresses = await self.addresses.check(host, port)
                async with pinned_stream(
                    http, method, url, addresses, headers=headers, content=content, auth=auth
                ) as reply:
                    if 300 <= reply.status_code < 400:
                        raise Refused(
                            f"{host} answered HTTP {reply.status_code}, a redirect, which is"
                            " not followed"
                        )
                    return Answer(reply.status_code, await read_capped(reply, self.limit_bytes))
        except TimeoutError:
            raise TimedOut(f"{host} gave no whole answer within the deadline") from None
