"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which MCP
2025-11-25 asks authorization servers to support and MCP 2026-07-28 prefers to dynamic
registration): a ``client_id`` that is an https URL names a JSON document, published by the
client at that URL, that describes it.

``ClientDocuments.fetch`` returns the verified ``ClientDocument`` or raises, with the one
sentence the client and the customer are shown, ``ClientDocumentRefused`` (a bad URL, a
broken rule, a 404 or 410: the client is turned away) or ``ClientDocumentUnavailable`` (the
network, a timeout, a 5xx or 429, Frontdesk's own load: the endpoints answer 503, so the
client retries and keeps its tokens). Nothing about such a client is stored; this module
holds the address policy, the in-memory cache and the limit on concurrent fetches. The rules
are ``oauth.client_document_rules``; the bounded GET is ``oauth.client_document_download``.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import orjson
import structlog

from frontdesk.oauth.client_document_download import BadAnswer, Unreachable, download
from frontdesk.oauth.client_document_rules import (
    ClientDocument,
    is_client_document_url,
    parse_document,
    url_problem,
)
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.clients import (
    DOCUMENT_CONNECTIONS,
    DOCUMENT_TIMEOUT_SECONDS,
    OutboundClients,
)

__all__ = [
    "ClientDocument",
    "ClientDocumentProblem",
    "ClientDocumentRefused",
    "ClientDocumentUnavailable",
    "ClientDocuments",
    "is_client_document_url",
]

log = structlog.get_logger(__name__)

V = TypeVar("V")

# The draft's section "Maximum Response Size" recommends 5 kilobytes; the documents real
# clients publish are well under one.
MAX_DOCUMENT_BYTES = 5 * 1024
# The draft lets the server bound how long it keeps a document (section "Metadata Caching").
# The floor spares the client's host and the sign-in's latency a fetch at every step of one
# sign-in (authorize, consent, token), even when the document says no-store or max-age=0
# (a common hosting default); the ceiling makes an edited document (a redirect URI removed)
# count within a day. Without max-age the floor applies.
DOCUMENT_TTL_FLOOR_SECONDS = 300.0
DOCUMENT_TTL_CEILING_SECONDS = 86_400.0
# Once expired, a document is kept this much longer, and served only when fetching it again
# is merely unavailable: a client's host that is down over a weekend must not make every
# refresh and revocation fail as invalid_client, which makes SDKs discard their tokens.
# A refetch that is refused, or a 404 or 410, drops it at once.
STALE_DOCUMENT_SECONDS = 7 * 86_400.0
# A refusal is remembered briefly so that a flood of requests naming one broken document
# makes one fetch every few seconds, not one each. The draft's section "Metadata Caching"
# forbids caching error answers and invalid documents: neither is kept (only the sentence
# saying why), and for so short a time that a fixed document counts seconds later.
REFUSAL_TTL_SECONDS = 10.0
# An unavailable host is remembered more briefly still: long enough that a client retrying
# at once, or many sign-ins naming one slow host, hold at most one of the DOCUMENT_CONNECTIONS
# fetch slots every few seconds; short enough that "try again in a moment" is true. It is
# also the Retry-After the endpoints answer with. Frontdesk's own load is never remembered.
UNAVAILABLE_TTL_SECONDS = 5.0
# How long a fetch waits for one of the DOCUMENT_CONNECTIONS slots before the caller is told
# to come back; the fetch's own deadline starts only once it holds a slot.
SLOT_WAIT_SECONDS = 2.0
# Documents and failures are kept apart, so client_ids that fail cannot push out the
# documents of clients that work. A document is at most MAX_DOCUMENT_BYTES.
MAX_DOCUMENTS = 1000
MAX_FAILURES = 1000
# The test-only FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK: where the tests serve documents.
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")


class ClientDocumentProblem(Exception):
    """The client's metadata document cannot be used; ``description`` is the sentence the
    client (``error_description``) and the customer (the authorize page) are shown as is."""

    lead: ClassVar[str]

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason
        self.description = self.lead if reason is None else f"{self.lead}: {reason}"
        super().__init__(self.description)


class ClientDocumentRefused(ClientDocumentProblem):
    """The URL, the document or its server's answer breaks a rule; ``reason`` names it."""

    lead = "The client's metadata document is refused"


class ClientDocumentUnavailable(ClientDocumentProblem):
    """The document could not be fetched now. ``reason`` is None for anything that happened
    below HTTP (no such name, an address not called, no connection, TLS, a timeout): one
    sentence for all of them, so that a stranger cannot map names and ports through the
    service; the detail is logged."""

    lead = "The client's metadata document could not be fetched from its URL"
    retry_after: ClassVar[int] = int(UNAVAILABLE_TTL_SECONDS)


# A failed fetch as remembered, raised anew each time as ``kind(reason)``.
Failure = tuple[type[ClientDocumentProblem], str | None]


@dataclass(frozen=True, slots=True)
class _Kept:
    document: ClientDocument
    fresh_until: float
    kept_until: float


class ClientDocuments:
    """Fetches, checks and caches metadata documents. Concurrent fetches of one URL share
    one request; no more than DOCUMENT_CONNECTIONS fetches run at once.

    Documents are fetched from public addresses only: anyone can send any URL as a
    client_id, so the networks an operator opens to reviewed company backends
    (FRONTDESK_BACKEND_ALLOWED_NETWORKS) are never opened to them. ``on_loopback`` (the
    test-only FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK) adds loopback and nothing else."""

    def __init__(
        self,
        outbound: OutboundClients,
        *,
        on_loopback: bool = False,
        deadline_seconds: float = DOCUMENT_TIMEOUT_SECONDS,
        slot_wait_seconds: float = SLOT_WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._outbound = outbound
        self._policy = AddressPolicy(LOOPBACK_NETWORKS if on_loopback else ())
        self._deadline = deadline_seconds
        self._slot_wait = slot_wait_seconds
        self._clock = clock
        self._documents: OrderedDict[str, _Kept] = OrderedDict()
        self._failures: OrderedDict[str, tuple[float, Failure]] = OrderedDict()
        self._fetching: dict[str, asyncio.Task[ClientDocument | Failure]] = {}
        self._slots = asyncio.Semaphore(DOCUMENT_CONNECTIONS)

    async def fetch(self, url: str) -> ClientDocument:
        """The document ``url`` names, verified; raises ClientDocumentRefused or
        ClientDocumentUnavailable. An expired document is still served while fetching it
        again is unavailable, for at most STALE_DOCUMENT_SECONDS."""
        problem = url_problem(url)
        if problem is not None:
            raise ClientDocumentRefused(problem)
        now = self._clock()
        kept = self._kept(url, now)
        if kept is not None and now < kept.fresh_until:
            return kept.document
        outcome: ClientDocument | Failure | None = _fresh(self._failures, url, now)
        if outcome is None:
            task = self._fetching.get(url)
            if task is None:
                task = asyncio.create_task(self._load(url))
                self._fetching[url] = task
                task.add_done_callback(lambda done: self._forget(url, done))
            # Shielded: one caller that gives up does not cancel the fetch the others wait on.
            outcome = await asyncio.shield(task)
        if isinstance(outcome, ClientDocument):
            return outcome
        kind, reason = outcome
        if kind is ClientDocumentUnavailable and kept is not None:
            log.warning(
                "client_document_expired_but_kept",
                url=url,
                expired_seconds_ago=round(now - kept.fresh_until),
            )
            return kept.document
        raise kind(reason)

    def answers_without_fetching(self, url: str) -> bool:
        """Whether ``fetch(url)`` would answer without a request of its own: a fresh
        document or a remembered failure is kept for it, a fetch of it is under way, or the
        URL is refused as it stands."""
        if url_problem(url) is not None or url in self._fetching:
            return True
        now = self._clock()
        kept = self._documents.get(url)
        if kept is not None and now < kept.fresh_until:
            return True
        failure = self._failures.get(url)
        return failure is not None and now < failure[0]

    def _kept(self, url: str, now: float) -> _Kept | None:
        kept = self._documents.get(url)
        if kept is None:
            return None
        if kept.kept_until <= now:
            del self._documents[url]
            return None
        self._documents.move_to_end(url)
        return kept

    def _forget(self, url: str, task: asyncio.Task[ClientDocument | Failure]) -> None:
        if self._fetching.get(url) is task:
            del self._fetching[url]

    async def _load(self, url: str) -> ClientDocument | Failure:
        try:
            async with asyncio.timeout(self._slot_wait):
                await self._slots.acquire()
        except TimeoutError:
            # Frontdesk's own load, not the document's doing: nothing is remembered.
            log.warning("client_document_busy", url=url)
            return ClientDocumentUnavailable, "Frontdesk is fetching too many at once"
        try:
            return await self._fetch_and_check(url)
        except Exception:
            # Not the document's doing (a defect, or the outbound client closed at shutdown):
            # never a 500, and nothing is remembered.
            log.warning("client_document_fetch_failed", url=url, exc_info=True)
            return ClientDocumentUnavailable, None
        finally:
            self._slots.release()

    async def _fetch_and_check(self, url: str) -> ClientDocument | Failure:
        # The deadline starts once a slot is held: waiting behind other fetches is
        # Frontdesk's doing, not the client's host's.
        try:
            async with asyncio.timeout(self._deadline):
                fetched = await download(
                    self._outbound.for_documents(), self._policy, url, MAX_DOCUMENT_BYTES
                )
        except TimeoutError:
            return self._unavailable(url, f"no answer within {self._deadline:g} seconds")
        except Unreachable as unreachable:
            return self._unavailable(url, str(unreachable))
        except BadAnswer as answer:
            if answer.temporary:
                return self._unavailable(url, str(answer), shown=str(answer))
            return self._refuse(url, str(answer))
        try:
            content = orjson.loads(fetched.body)
        except orjson.JSONDecodeError:
            return self._refuse(url, "the document is not valid JSON")
        try:
            document = parse_document(url, content)
        except ValueError as broken:
            return self._refuse(url, str(broken))
        lifetime = cache_lifetime(fetched.cache_control, fetched.age)
        fresh_until = self._clock() + lifetime
        kept = _Kept(document, fresh_until, fresh_until + STALE_DOCUMENT_SECONDS)
        _remember(self._documents, url, kept, MAX_DOCUMENTS)
        log.info("client_document_fetched", url=url, cached_seconds=lifetime)
        return document

    def _refuse(self, url: str, reason: str) -> Failure:
        log.warning("client_document_refused", url=url, reason=reason)
        self._documents.pop(url, None)
        failure: Failure = (ClientDocumentRefused, reason)
        expires = self._clock() + REFUSAL_TTL_SECONDS
        _remember(self._failures, url, (expires, failure), MAX_FAILURES)
        return failure

    def _unavailable(self, url: str, detail: str, *, shown: str | None = None) -> Failure:
        # ``detail`` goes to the log only; ``shown`` is what the client may be told.
        log.warning("client_document_unavailable", url=url, detail=detail)
        failure: Failure = (ClientDocumentUnavailable, shown)
        expires = self._clock() + UNAVAILABLE_TTL_SECONDS
        _remember(self._failures, url, (expires, failure), MAX_FAILURES)
        return failure


def _fresh(entries: OrderedDict[str, tuple[float, V]], url: str, now: float) -> V | None:
    entry = entries.get(url)
    if entry is None:
        return None
    if entry[0] <= now:
        del entries[url]
        return None
    entries.move_to_end(url)
    return entry[1]


def _remember(entries: OrderedDict[str, V], url: str, entry: V, bound: int) -> None:
    entries[url] = entry
    entries.move_to_end(url)
    while len(entries) > bound:
        entries.popitem(last=False)


def cache_lifetime(cache_control: str | None, age: str | None) -> float:
    """Seconds to keep a document: its max-age less its Age (RFC 9111 4.2), within the
    floor and ceiling; the floor when it has no max-age or says no-store or no-cache."""
    max_age: int | None = None
    for directive in (cache_control or "").lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return DOCUMENT_TTL_FLOOR_SECONDS
        if name == "max-age" and value.strip('"').isdigit():
            max_age = int(value.strip('"'))
    if max_age is None:
        return DOCUMENT_TTL_FLOOR_SECONDS
    current_age = int(age) if age is not None and age.strip().isdigit() else 0
    lifetime = float(max_age - current_age)
    return min(max(lifetime, DOCUMENT_TTL_FLOOR_SECONDS), DOCUMENT_TTL_CEILING_SECONDS)
