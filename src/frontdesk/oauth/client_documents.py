"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which MCP
2025-11-25 asks authorization servers to support and MCP 2026-07-28 prefers to dynamic
registration): a ``client_id`` that is an https URL names a JSON document, published by the
client at that URL, that describes it.

``ClientDocuments.fetch`` turns such a URL into a verified ``ClientDocument`` or raises
``ClientDocumentRefused`` with one sentence naming what was wrong, and keeps what it
learned in memory: nothing about a metadata-document client is ever stored. The rules for
the URL and the document are ``oauth.client_document_rules``; the fetch with its bounds
(address policy, no redirects, deadline, byte limit) is ``oauth.client_document_download``;
this module holds the cache.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import orjson
import structlog

from frontdesk.oauth.client_document_download import DownloadFailed, download
from frontdesk.oauth.client_document_rules import (
    ClientDocument,
    is_client_document_url,
    parse_document,
    url_problem,
)
from frontdesk.outbound import DOCUMENT_CONNECTIONS, DOCUMENT_TIMEOUT_SECONDS, OutboundClients
from frontdesk.tools.addresses import AddressPolicy

__all__ = ["ClientDocument", "ClientDocumentRefused", "ClientDocuments", "is_client_document_url"]

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
# A refusal is remembered briefly so that a flood of requests naming one broken or slow
# document makes one fetch every few seconds, not one each. The draft's section "Metadata
# Caching" forbids caching error answers and invalid documents: neither is kept (only the
# sentence saying why), and for so short a time that a fixed document counts seconds later.
REFUSAL_TTL_SECONDS = 10.0
# Documents and refusals are kept apart, so client_ids that fail cannot push out the
# documents of clients that work. A document is at most MAX_DOCUMENT_BYTES.
MAX_DOCUMENTS = 1000
MAX_REFUSALS = 1000
REFUSED = "the client's metadata document is refused:"


class ClientDocumentRefused(Exception):
    """The client's metadata document cannot be accepted; ``description`` says why."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class ClientDocuments:
    """Fetches, checks and caches metadata documents. Concurrent fetches of one URL share
    one request; no more than DOCUMENT_CONNECTIONS fetches run at once."""

    def __init__(
        self,
        outbound: OutboundClients,
        policy: AddressPolicy,
        *,
        deadline_seconds: float = DOCUMENT_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._outbound = outbound
        self._policy = policy
        self._deadline = deadline_seconds
        self._clock = clock
        self._documents: OrderedDict[str, tuple[float, ClientDocument]] = OrderedDict()
        self._refusals: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._fetching: dict[str, asyncio.Task[ClientDocument | str]] = {}
        self._slots = asyncio.Semaphore(DOCUMENT_CONNECTIONS)

    async def fetch(self, url: str) -> ClientDocument:
        """The document ``url`` names, verified; raises ClientDocumentRefused."""
        problem = url_problem(url)
        if problem is not None:
            raise ClientDocumentRefused(f"{REFUSED} {problem}")
        now = self._clock()
        cached = _fresh(self._documents, url, now) or _fresh(self._refusals, url, now)
        if cached is None:
            task = self._fetching.get(url)
            if task is None:
                task = asyncio.create_task(self._load(url))
                self._fetching[url] = task
                task.add_done_callback(lambda done: self._forget(url, done))
            # Shielded: one caller that gives up does not cancel the fetch the others wait on.
            cached = await asyncio.shield(task)
        if isinstance(cached, str):
            raise ClientDocumentRefused(cached)
        return cached

    def _forget(self, url: str, task: asyncio.Task[ClientDocument | str]) -> None:
        if self._fetching.get(url) is task:
            del self._fetching[url]

    async def _load(self, url: str) -> ClientDocument | str:
        waiting = True
        try:
            async with asyncio.timeout(self._deadline):
                async with self._slots:
                    waiting = False
                    fetched = await download(
                        self._outbound.for_documents(), self._policy, url, MAX_DOCUMENT_BYTES
                    )
        except TimeoutError:
            if waiting:
                # Frontdesk's own load, not the document's fault: nothing is remembered.
                log.warning("client_document_busy", url=url)
                return "the client's metadata document could not be fetched now; try again"
            return self._refuse(url, f"the server did not answer within {self._deadline:g} seconds")
        except DownloadFailed as failure:
            return self._refuse(url, str(failure))
        try:
            content = orjson.loads(fetched.body)
        except orjson.JSONDecodeError:
            return self._refuse(url, "the document is not valid JSON")
        try:
            document = parse_document(url, content)
        except ValueError as broken:
            return self._refuse(url, str(broken))
        lifetime = cache_lifetime(fetched.cache_control, fetched.age)
        _remember(self._documents, url, (self._clock() + lifetime, document), MAX_DOCUMENTS)
        log.info("client_document_fetched", url=url, cached_seconds=lifetime)
        return document

    def _refuse(self, url: str, reason: str) -> str:
        description = f"{REFUSED} {reason}"
        log.warning("client_document_refused", url=url, reason=reason)
        entry = (self._clock() + REFUSAL_TTL_SECONDS, description)
        _remember(self._refusals, url, entry, MAX_REFUSALS)
        return description


def _fresh(entries: OrderedDict[str, tuple[float, V]], url: str, now: float) -> V | None:
    entry = entries.get(url)
    if entry is None:
        return None
    if entry[0] <= now:
        del entries[url]
        return None
    entries.move_to_end(url)
    return entry[1]


def _remember(
    entries: OrderedDict[str, tuple[float, V]], url: str, entry: tuple[float, V], bound: int
) -> None:
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
