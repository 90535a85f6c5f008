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
  is inflated never more than one byte past the limit, so a small compressed body cannot
  grow into a large one in memory.

The resolution, the pinned connection and the capped read are the shared outbound policy's
(``frontdesk.outbound.policy``); what a document's answer must be is this module's.

The whole fetch (resolution, connection, TLS, headers, body) runs under one deadline set by
the caller: a server that answers a byte at a time never resets a per-read timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from frontdesk import __version__
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.policy import (
    GZIP_CODINGS,
    Oversized,
    Refused,
    pinned_stream,
    read_capped,
)
from frontdesk.outbound.policy import Unreachable as CallUnreachable
from frontdesk.outbound.policy import Unreadable as CallUnreadable

if TYPE_CHECKING:
    import httpx

USER_AGENT = f"Frontdesk/{__version__} (client metadata fetch)"


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
    permits (outbound_policy). Raises Unreachable or BadAnswer naming what went wrong; the
    caller bounds the time."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        addresses = await policy.check(host, parts.port or 443)
        async with pinned_stream(
            http,
            "GET",
            url,
            addresses,
            headers={
                "Accept": "application/json",
                "Accept-Encoding": "identity",
                "User-Agent": USER_AGENT,
            },
        ) as reply:
            return await _read(reply, limit_bytes)
    except (Refused, CallUnreachable) as failure:
        raise Unreachable(str(failure)) from None


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
    try:
        body = await read_capped(reply, limit_bytes)
    except Oversized as oversized:
        if oversized.inflated:
            raise BadAnswer(f"the document inflates to more than {limit_bytes} bytes") from None
        raise BadAnswer(f"the document is larger than {limit_bytes} bytes") from None
    except CallUnreadable as unreadable:
        # "the gzip body is corrupt", "... cut short"
        raise BadAnswer(f"the document's {str(unreadable).removeprefix('the ')}") from None
    return Downloaded(
        body=body,
        cache_control=reply.headers.get("cache-control"),
        age=reply.headers.get("age"),
    )


def _is_json_suffix(media_type: str) -> bool:
    kind, _, subtype = media_type.partition("/")
    return kind == "application" and subtype.endswith("+json") and len(subtype) > len("+json")
