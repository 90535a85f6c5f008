"""One GET of a client's metadata document, bounded in every way a stranger could abuse.

Anyone may send any https URL as a ``client_id``, so the fetch is an outbound call chosen by
a stranger (draft-ietf-oauth-client-id-metadata-document, section "SSRF Attacks"):

- The name is resolved once and every address it resolves to must pass the documents'
  address policy: public addresses only (``oauth.client_documents``), never the networks
  the operator opened to company backends. The connection is then made to a checked
  address, with the name sent as SNI and ``Host`` and verified against the certificate: a
  name that resolves differently a moment later (DNS rebinding) cannot move the fetch
  elsewhere.
- What went wrong below HTTP (no such name, an address not called, no connection, TLS, a
  broken answer) is ``Unreachable``, whose detail is for the log only: told to the caller,
  it would let a stranger map names and ports through the service. Once a server at a
  permitted address has answered, what is wrong with its answer is ``BadAnswer``, which
  may be told.
- Only a 200 is a document; a redirect is refused, not followed (the draft's section
  "Client Information Discovery").
- The body is read as it arrives and abandoned once it passes the byte limit. A gzip body
  is inflated here, never more than one byte past the limit, so a small compressed body
  cannot grow into a large one in memory.

The whole fetch (resolution, connection, TLS, headers, body) runs under one deadline set by
the caller: a server that answers a byte at a time never resets a per-read timeout.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from frontdesk import __version__
from frontdesk.tools.addresses import AddressPolicy, IPAddress

if TYPE_CHECKING:
    import httpx

USER_AGENT = f"Frontdesk/{__version__} (client metadata fetch)"
# RFC 9110 8.4.1.3: x-gzip is gzip.
GZIP_CODINGS = frozenset({"gzip", "x-gzip"})


class Unreachable(Exception):
    """No answer came from a permitted address of the host; the message, for the log only,
    says why."""


class BadAnswer(Exception):
    """The server answered, but not with a document; the message says why. ``temporary``
    when the answer says to come back later (RFC 9110 15.6: a 5xx; 408; RFC 6585 4: 429)."""

    def __init__(self, reason: str, *, temporary: bool = False) -> None:
        super().__init__(reason)
        self.temporary = temporary


@dataclass(frozen=True, slots=True)
class Downloaded:
    body: bytes
    cache_control: str | None
    age: str | None


async def download(
    http: httpx.AsyncClient, policy: AddressPolicy, url: str, limit_bytes: int
) -> Downloaded:
    """GET ``url`` (an https URL already checked as a client_id) from an address the policy
    permits. Raises Unreachable or BadAnswer naming what went wrong; the caller bounds the
    time."""
    import httpx

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 443
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    addresses = await _permitted_addresses(policy, host, port)
    failure: Exception | None = None
    for address in addresses:
        literal = f"[{address}]" if address.version == 6 else str(address)
        try:
            async with http.stream(
                "GET",
                f"https://{literal}:{port}{target}",
                headers={
                    "Host": parts.netloc,
                    "Accept": "application/json",
                    "Accept-Encoding": "identity",
                    "User-Agent": USER_AGENT,
                },
                extensions={"sni_hostname": host},
            ) as reply:
                return await _read(reply, limit_bytes)
        except httpx.ConnectError as error:
            # Another address of the same name may answer; a certificate that does not
            # verify will not verify at the next one either.
            if _certificate_refused(error):
                raise Unreachable(f"{host} did not present a certificate valid for it") from None
            failure = error
        except httpx.HTTPError as error:
            raise Unreachable(f"{host} failed while answering ({type(error).__name__})") from None
    raise Unreachable(f"could not connect to {host} ({type(failure).__name__})")


async def _permitted_addresses(policy: AddressPolicy, host: str, port: int) -> list[IPAddress]:
    try:
        return _check(policy, host, [ipaddress.ip_address(host)])
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError) as error:
        # ValueError: the resolver's IDNA codec raises UnicodeError on a name it cannot
        # encode; url_problem refuses such names first, this keeps any other out of a 500.
        raise Unreachable(f"{host} does not resolve ({error})") from None
    resolved = [ipaddress.ip_address(info[4][0]) for info in infos]
    if not resolved:
        raise Unreachable(f"{host} does not resolve")
    return _check(policy, host, list(dict.fromkeys(resolved)))


def _check(policy: AddressPolicy, host: str, addresses: list[IPAddress]) -> list[IPAddress]:
    for address in addresses:
        if not policy.permits(address):
            raise Unreachable(f"{host} resolves to {address}, an address Frontdesk does not call")
    return addresses


async def _read(reply: httpx.Response, limit_bytes: int) -> Downloaded:
    status = reply.status_code
    if 300 <= status < 400:
        raise BadAnswer(
            f"the server answered HTTP {status}, a redirect, which is not followed: the"
            " document must be served at the client_id URL itself"
        )
    if status != 200:
        temporary = status >= 500 or status in (408, 429)
        raise BadAnswer(f"the server answered HTTP {status}, not 200", temporary=temporary)
    media_type = reply.headers.get("content-type", "").partition(";")[0].strip().lower()
    # The draft: application/json, or a more specific application/<...>+json.
    if not (media_type == "application/json" or _is_json_suffix(media_type)):
        raise BadAnswer(f"the document is served as {media_type or 'no type'!r}, not as JSON")
    coding = reply.headers.get("content-encoding", "identity").strip().lower()
    if coding not in GZIP_CODINGS and coding != "identity":
        raise BadAnswer(f"the document is served with content encoding {coding!r}")
    declared = reply.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit_bytes:
        raise BadAnswer(f"the document is larger than {limit_bytes} bytes")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if coding in GZIP_CODINGS else None
    received = 0
    body = bytearray()
    try:
        async for chunk in reply.aiter_raw():
            received += len(chunk)
            if received > limit_bytes:
                raise BadAnswer(f"the document is larger than {limit_bytes} bytes")
            # max_length stops inflating one byte past the limit: the rest of the chunk
            # stays compressed (in unconsumed_tail) and is never expanded.
            room = limit_bytes + 1 - len(body)
            body += chunk if inflater is None else inflater.decompress(chunk, room)
            if len(body) > limit_bytes:
                raise BadAnswer(f"the document inflates to more than {limit_bytes} bytes")
        if inflater is not None and not inflater.eof:
            raise BadAnswer("the document's gzip body is cut short")
    except zlib.error:
        raise BadAnswer("the document's gzip body is corrupt") from None
    return Downloaded(
        body=bytes(body),
        cache_control=reply.headers.get("cache-control"),
        age=reply.headers.get("age"),
    )


def _is_json_suffix(media_type: str) -> bool:
    kind, _, subtype = media_type.partition("/")
    return kind == "application" and subtype.endswith("+json") and len(subtype) > len("+json")


def _certificate_refused(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False
