"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): the URL
rules, the fetch and its bounds, the document rules and the cache, against documents served
over real HTTPS (tests/support/https_documents.py) by a server whose CA only the test trusts."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.typing import EventDict

from frontdesk.oauth import client_document_rules, client_documents, redirects
from frontdesk.oauth.client_documents import (
    DOCUMENT_TTL_CEILING_SECONDS,
    DOCUMENT_TTL_FLOOR_SECONDS,
    MAX_DOCUMENT_BYTES,
    REFUSAL_TTL_SECONDS,
    STALE_DOCUMENT_SECONDS,
    UNAVAILABLE_TTL_SECONDS,
    ClientDocument,
    ClientDocumentProblem,
    ClientDocumentRefused,
    ClientDocuments,
    ClientDocumentUnavailable,
    cache_lifetime,
    is_client_document_url,
)
from frontdesk.outbound.clients import DOCUMENT_CONNECTIONS, OutboundClients
from tests.support.https_documents import Answer, HttpsDocuments, run_https_documents
from tests.support.logs import captured_logs

PATH = "/oauth/client.json"
# What the client is told for every failure below HTTP, whatever it was.
NOT_FETCHED = "The client's metadata document could not be fetched from its URL"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HttpsDocuments]:
    with run_https_documents(tmp_path) as running:
        yield running


@pytest.fixture
async def outbound(server: HttpsDocuments) -> AsyncIterator[OutboundClients]:
    clients = OutboundClients(tls=server.ssl_context())
    yield clients
    await clients.aclose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def documents(outbound: OutboundClients, clock: Clock) -> ClientDocuments:
    # The server runs on loopback, which only the test-only setting opens to documents.
    return ClientDocuments(outbound, on_loopback=True, clock=clock)


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EventDict]]:
    """What the documents' cache logs during the test."""
    with captured_logs(monkeypatch, client_documents) as logs:
        yield logs


def document_for(url: str, **changes: Any) -> dict[str, Any]:
    """A document shaped like the ones Claude Code and VS Code publish."""
    document: dict[str, Any] = {
        "client_id": url,
        "client_name": "Example Client",
        "client_uri": "https://client.example",
        "logo_uri": "https://client.example/logo.png",
        "redirect_uris": ["http://127.0.0.1:33418/", "https://client.example/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    }
    document.update(changes)
    return {name: value for name, value in document.items() if value is not None}


async def refusal(documents: ClientDocuments, url: str) -> str:
    with pytest.raises(ClientDocumentRefused) as refused:
        await documents.fetch(url)
    return refused.value.description


async def unavailability(documents: ClientDocuments, url: str) -> str:
    with pytest.raises(ClientDocumentUnavailable) as unavailable:
        await documents.fetch(url)
    return unavailable.value.description


def closed_port() -> int:
    """A loopback port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# The URL


@pytest.mark.parametrize(
    "url",
    [
        "https://client.example/client.json",
        "https://client.example/oauth/client-metadata",
        "https://client.example:8443/client.json",
        "https://client.example/client.json?version=2",
        "https://127.0.0.1/client.json",
        "https://[2001:db8::1]/client.json",
        "https://client.example/a%20b.json",
        "https://a-b.client.example/client.json",
        "https://" + "a" * 63 + ".example/client.json",
        "https://" + ".".join(["a" * 63] * 3 + ["a" * 61]) + "/client.json",
    ],
)
def test_https_urls_with_a_path_are_client_document_urls(url: str) -> None:
    """https, a host, a path; a port and a query string are allowed."""
    assert is_client_document_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://client.example/client.json",
        "HTTPS://client.example/client.json",
        "https://client.example",
        "https://client.example/",
        "https://client.example/client.json#part",
        "https://client.example/client.json#",
        "https://user@client.example/client.json",
        "https://user:secret@client.example/client.json",
        "https://client.example/./client.json",
        "https://client.example/oauth/../client.json",
        "https://client.example/oauth/%2E%2E/client.json",
        "https://client.example/oauth/..",
        "https:///client.json",
        "https://client.example:0/client.json",
        "https://client.example:99999/client.json",
        "https://client.example:/client.json",
        "https://client.example/client json",
        "https://client.example/client.json\n",
        "https://client.example/café.json",
        "https://client.example/100%.json",
        "https://[::1/client.json",
        "https://client.example/" + "a" * 2000,
        "3f0c9a6d1e2b4c58a7d6e5f4",
        "",
    ],
)
def test_other_client_ids_are_not_client_document_urls(url: str) -> None:
    """No https, no path, a fragment, credentials, dot segments, a bad port or character."""
    assert not is_client_document_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://a..example/x.json",
        "https://.example/x.json",
        "https://client.example./x.json",
        "https://" + "a" * 64 + ".example/x.json",
        "https://" + ".".join(["a" * 63] * 3 + ["a" * 62]) + "/x.json",
        "https://cl!ent.example/x.json",
        "https://cl%41ent.example/x.json",
        "https://client_app.example/x.json",
        "https://[:::::]/x.json",
        "https://[1.2.3.4]/x.json",
    ],
)
async def test_a_host_that_is_no_dns_name_is_refused_before_any_lookup(
    documents: ClientDocuments, url: str
) -> None:
    """An empty or 64-character label, a 254-character name, a bad IP literal: refused
    (the resolver would raise on some of them), never a 500."""
    assert not is_client_document_url(url)
    assert "no valid host and port" in await refusal(documents, url)


def test_document_urls_follow_the_redirect_uri_definitions() -> None:
    """One definition of a URI's characters, host and port, and length: oauth.redirects'."""
    shared = vars(client_document_rules)
    assert shared["URI_CHARACTERS"] is redirects.URI_CHARACTERS
    assert shared["HOST_AND_PORT"] is redirects.HOST_AND_PORT
    assert shared["MAX_URI_LENGTH"] == redirects.MAX_URI_LENGTH
    for character in map(chr, range(0x20, 0x7F)):
        accepted = is_client_document_url(f"https://client.example/a{character}b.json")
        assert accepted == (character in redirects.URI_CHARACTERS and character not in "#%")
    longest = "https://client.example/" + "a" * (redirects.MAX_URI_LENGTH - 23)
    assert is_client_document_url(longest)
    assert not is_client_document_url(longest + "a")


async def test_a_client_id_that_is_not_a_document_url_is_refused_without_a_request(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """An http URL is never fetched: metadata documents are https only."""
    url = server.url(PATH).replace("https://", "http://")
    server.serve_json(PATH, document_for(url))
    assert "https" in await refusal(documents, url)
    assert server.requests(PATH) == 0


# A good document


async def test_a_good_document_is_fetched_and_verified(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """The client's name, redirect URIs and links come back; its host is the URL's."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    document = await documents.fetch(url)
    assert document == ClientDocument(
        client_id=url,
        host="127.0.0.1",
        client_name="Example Client",
        redirect_uris=("http://127.0.0.1:33418/", "https://client.example/callback"),
        client_uri="https://client.example",
        logo_uri="https://client.example/logo.png",
    )


async def test_a_document_is_fetched_by_name_with_the_certificate_checked_for_that_name(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """A host name is resolved, checked, and verified against the certificate."""
    url = server.url(PATH).replace("127.0.0.1", "localhost")
    server.serve_json(PATH, document_for(url))
    assert (await documents.fetch(url)).host == "localhost"


async def test_a_minimal_vs_code_shaped_document_is_accepted(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """Extra grant types and unknown members are ignored; name and links are optional."""
    url = server.url(PATH)
    grants = ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]
    server.serve_json(
        PATH,
        {
            "client_id": url,
            "redirect_uris": ["http://127.0.0.1:33418/"],
            "grant_types": grants,
            "jwks_uri": "https://client.example/jwks.json",
            "software_statement": "ignored",
        },
    )
    document = await documents.fetch(url)
    assert (document.client_name, document.client_uri, document.logo_uri) == (None, None, None)


async def test_links_that_are_not_https_urls_are_dropped_not_refused(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """client_uri and logo_uri are only shown: a javascript: link is left out."""
    url = server.url(PATH)
    server.serve_json(
        PATH, document_for(url, client_uri="javascript:alert(1)", logo_uri="http://x.example/l")
    )
    document = await documents.fetch(url)
    assert (document.client_uri, document.logo_uri) == (None, None)


async def test_a_gzip_document_is_inflated(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """A server that compresses anyway (we ask for identity) is still understood."""
    url = server.url(PATH)
    server.serve_gzip(PATH, json.dumps(document_for(url)).encode())
    assert (await documents.fetch(url)).client_id == url


async def test_a_more_specific_json_content_type_is_accepted(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """The draft allows application/<...>+json."""
    url = server.url(PATH)
    headers = {"Content-Type": "application/client-metadata+json; charset=utf-8"}
    server.serve_json(PATH, document_for(url), headers=headers)
    assert (await documents.fetch(url)).client_id == url


# The document's rules


@pytest.mark.parametrize("variant", ["{url}/", "{url}x", "{upper}", "https://other.example/c.json"])
async def test_a_document_whose_client_id_is_not_its_url_exactly_is_refused(
    server: HttpsDocuments, documents: ClientDocuments, variant: str
) -> None:
    """Simple string comparison: a trailing slash or a case difference is a mismatch."""
    url = server.url(PATH)
    claimed = variant.format(url=url, upper=url.replace("/oauth/", "/OAuth/"))
    server.serve_json(PATH, document_for(url, client_id=claimed))
    assert "client_id is not exactly the URL" in await refusal(documents, url)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"token_endpoint_auth_method": "client_secret_basic"}, "token_endpoint_auth_method"),
        ({"token_endpoint_auth_method": "client_secret_post"}, "token_endpoint_auth_method"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method"),
        ({"client_secret": "s3cret"}, "client_secret"),
        ({"client_secret_expires_at": 0}, "client_secret_expires_at"),
        ({"redirect_uris": None}, "redirect_uris"),
        ({"redirect_uris": []}, "redirect_uris"),
        ({"redirect_uris": "https://client.example/cb"}, "redirect_uris"),
        ({"redirect_uris": [42]}, "redirect_uris"),
        ({"redirect_uris": [""]}, "redirect_uris"),
        ({"redirect_uris": ["https://client.example/" + "a" * 2000]}, "redirect_uris"),
        ({"redirect_uris": [f"https://client.example/{n}" for n in range(11)]}, "redirect_uris"),
        ({"grant_types": ["client_credentials"]}, "grant_types"),
        ({"grant_types": "authorization_code"}, "grant_types"),
        ({"response_types": ["token"]}, "response_types"),
        ({"client_name": "Example\nApproved by your bank"}, "client_name"),
        ({"client_name": "Example \u202edetcejeR"}, "client_name"),
        ({"client_name": "x" * 201}, "client_name"),
        ({"client_name": ["a list"]}, "client_name"),
    ],
)
async def test_a_document_that_breaks_a_rule_is_refused_naming_it(
    server: HttpsDocuments, documents: ClientDocuments, changes: dict[str, Any], named: str
) -> None:
    """Secrets or a secret-based method, bad redirect_uris, grants or name are refused."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url, **changes))
    assert named in await refusal(documents, url)


async def test_a_document_that_is_not_json_or_not_an_object_is_refused(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """An HTML page, broken JSON and a JSON array are each refused for what they are."""
    url = server.url(PATH)
    server.serve(PATH, Answer(b"<html>hi</html>", headers={"Content-Type": "text/html"}))
    assert "not as JSON" in await refusal(documents, url)
    for path, body, named in [
        ("/broken.json", b'{"client_id": ', "not valid JSON"),
        ("/array.json", b"[]", "not a JSON object"),
    ]:
        server.serve(path, Answer(body))
        assert named in await refusal(documents, server.url(path))


# The fetch's bounds


async def test_a_redirect_is_refused_and_not_followed(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """A 302 is refused as a redirect; its Location is never requested."""
    url = server.url(PATH)
    server.serve(PATH, Answer(status=302, headers={"Location": server.url("/elsewhere.json")}))
    server.serve_json("/elsewhere.json", document_for(url))
    assert "HTTP 302, a redirect" in await refusal(documents, url)
    assert server.requests("/elsewhere.json") == 0


@pytest.mark.parametrize("status", [404, 410, 403, 204, 203])
async def test_any_status_but_200_is_refused(
    server: HttpsDocuments, documents: ClientDocuments, status: int
) -> None:
    """Only 200 is a document, even with a good body."""
    url = server.url(PATH)
    server.serve(PATH, Answer(json.dumps(document_for(url)).encode(), status=status))
    assert f"HTTP {status}, not 200" in await refusal(documents, url)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429, 408])
async def test_a_status_that_says_come_back_later_is_unavailable_not_refused(
    server: HttpsDocuments, documents: ClientDocuments, status: int
) -> None:
    """A 5xx, 429 or 408 is a hiccup of the client's host, told as such, not a broken rule."""
    url = server.url(PATH)
    server.serve(PATH, Answer(b"busy", status=status))
    assert (
        await unavailability(documents, url)
        == f"{NOT_FETCHED}: the server answered HTTP {status}, not 200"
    )


async def test_a_document_over_the_size_limit_is_refused(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """The draft's 5 kB: a longer document is refused."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url, padding="x" * MAX_DOCUMENT_BYTES))
    assert f"larger than {MAX_DOCUMENT_BYTES} bytes" in await refusal(documents, url)


async def test_a_gzip_bomb_is_refused_without_inflating_it(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """4 kB of gzip that would inflate to 4 MB is stopped at the limit, in little memory."""
    url = server.url(PATH)
    bomb = b'{"client_id": "' + url.encode() + b'", "padding": "' + b" " * 4_000_000 + b'"}'
    assert len(gzip.compress(bomb)) < MAX_DOCUMENT_BYTES
    server.serve_gzip(PATH, bomb)
    tracemalloc.start()
    try:
        description = await refusal(documents, url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"inflates to more than {MAX_DOCUMENT_BYTES} bytes" in description
    assert peak < 1_000_000


async def test_a_document_dripped_past_the_deadline_is_refused_at_the_deadline(
    server: HttpsDocuments, outbound: OutboundClients
) -> None:
    """A byte every 50 ms never trips a per-read timeout; the total deadline stops it."""
    documents = ClientDocuments(outbound, on_loopback=True, deadline_seconds=0.5)
    url = server.url(PATH)
    body = json.dumps(document_for(url)).encode()
    server.serve(PATH, Answer(body, drip_seconds=0.05))
    with anyio.fail_after(5):
        assert await unavailability(documents, url) == NOT_FETCHED


async def test_a_loopback_address_is_never_called_without_the_test_only_setting(
    server: HttpsDocuments, outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """Public addresses only: 127.0.0.1 is never called, by address or by name."""
    documents = ClientDocuments(outbound)
    for url in (server.url(PATH), server.url(PATH).replace("127.0.0.1", "localhost")):
        server.serve_json(PATH, document_for(url))
        assert await unavailability(documents, url) == NOT_FETCHED
    assert server.requests(PATH) == 0
    details = [
        entry["detail"] for entry in logged if entry["event"] == "client_document_unavailable"
    ]
    assert len(details) == 2
    assert all("an address Frontdesk does not call" in detail for detail in details)


async def test_every_failure_below_http_tells_the_client_the_same_sentence(
    server: HttpsDocuments, outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """Not resolving, a private address, no connection, a timeout: one sentence, which says
    nothing about names, addresses or ports; the log line says which it was."""
    public_only = ClientDocuments(outbound)
    on_loopback = ClientDocuments(outbound, on_loopback=True, deadline_seconds=0.5)
    release = threading.Event()
    server.serve(PATH, Answer(b"{}", hold=release))
    cases = [
        (public_only, "https://no-such-host.invalid/client.json", "does not resolve"),
        (public_only, "https://localhost:1/client.json", "an address Frontdesk does not call"),
        (public_only, "https://10.1.2.3/client.json", "an address Frontdesk does not call"),
        (on_loopback, f"https://127.0.0.1:{closed_port()}/client.json", "could not connect"),
        (on_loopback, server.url(PATH), "no answer within 0.5 seconds"),
    ]
    try:
        with anyio.fail_after(10):
            for documents, url, detail in cases:
                assert await unavailability(documents, url) == NOT_FETCHED
                assert logged[-1]["event"] == "client_document_unavailable"
                assert logged[-1]["url"] == url
                assert detail in logged[-1]["detail"]
                assert logged[-1]["log_level"] == "warning"
    finally:
        release.set()


async def test_a_server_whose_certificate_is_not_trusted_is_refused(
    server: HttpsDocuments,
) -> None:
    """TLS is verified: the public CA bundle does not vouch for the test CA."""
    outbound = OutboundClients()
    try:
        documents = ClientDocuments(outbound, on_loopback=True)
        url = server.url(PATH)
        server.serve_json(PATH, document_for(url))
        assert await unavailability(documents, url) == NOT_FETCHED
        assert server.requests(PATH) == 0
    finally:
        await outbound.aclose()


async def test_the_certificate_is_checked_for_the_urls_name_not_the_address_called(
    tmp_path: Path, logged: list[EventDict]
) -> None:
    """Called at 127.0.0.1 for localhost, a certificate for 127.0.0.1 alone is not accepted."""
    with run_https_documents(tmp_path, names=["127.0.0.1"]) as server:
        outbound = OutboundClients(tls=server.ssl_context())
        try:
            documents = ClientDocuments(outbound, on_loopback=True)
            url = server.url(PATH).replace("127.0.0.1", "localhost")
            server.serve_json(PATH, document_for(url))
            assert await unavailability(documents, url) == NOT_FETCHED
            assert "localhost did not present a certificate" in logged[-1]["detail"]
            assert server.requests(PATH) == 0
        finally:
            await outbound.aclose()


def test_a_separate_process_trusts_the_server_through_ssl_cert_file(
    server: HttpsDocuments,
) -> None:
    """SSL_CERT_FILE is how a `frontdesk serve` started by a test trusts this server."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    child = (
        "import asyncio, sys\n"
        "from frontdesk.oauth.client_documents import ClientDocuments\n"
        "from frontdesk.outbound.clients import OutboundClients\n"
        "async def main():\n"
        "    outbound = OutboundClients()\n"
        "    documents = ClientDocuments(outbound, on_loopback=True)\n"
        "    print((await documents.fetch(sys.argv[1])).client_name)\n"
        "    await outbound.aclose()\n"
        "asyncio.run(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", child, url],
        env={**os.environ, **server.environment()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Example Client"


# The cache


async def test_a_cached_document_is_not_fetched_again(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """Authorize, consent and token in one sign-in make one request."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    first = await documents.fetch(url)
    assert await documents.fetch(url) == first
    assert await documents.fetch(url) == first
    assert server.requests(PATH) == 1


@pytest.mark.parametrize(
    ("cache_control", "kept_for"),
    [
        ("public, max-age=600", 600),
        ("max-age=10", DOCUMENT_TTL_FLOOR_SECONDS),
        ("max-age=999999999", DOCUMENT_TTL_CEILING_SECONDS),
        ("no-store", DOCUMENT_TTL_FLOOR_SECONDS),
        (None, DOCUMENT_TTL_FLOOR_SECONDS),
    ],
)
async def test_a_document_is_kept_for_its_max_age_within_bounds(
    server: HttpsDocuments,
    documents: ClientDocuments,
    clock: Clock,
    cache_control: str | None,
    kept_for: float,
) -> None:
    """max-age counts, clamped to the floor and the ceiling; none or no-store gets the floor."""
    url = server.url(PATH)
    headers = {"Cache-Control": cache_control} if cache_control else {}
    server.serve_json(PATH, document_for(url), headers=headers)
    start = clock.now
    await documents.fetch(url)
    clock.now = start + kept_for - 1
    await documents.fetch(url)
    assert server.requests(PATH) == 1
    clock.now = start + kept_for + 1
    await documents.fetch(url)
    assert server.requests(PATH) == 2


@pytest.mark.parametrize(
    ("cache_control", "age", "seconds"),
    [
        ("max-age=3600", "600", 3000),
        ("max-age=3600", None, 3600),
        ('max-age="3600"', None, 3600),
        ("max-age=3600, no-cache", None, DOCUMENT_TTL_FLOOR_SECONDS),
        ("max-age=abc", None, DOCUMENT_TTL_FLOOR_SECONDS),
        ("s-maxage=3600", None, DOCUMENT_TTL_FLOOR_SECONDS),
        ("max-age=3600", "3590", DOCUMENT_TTL_FLOOR_SECONDS),
    ],
)
def test_the_cache_lifetime_reads_max_age_less_the_age(
    cache_control: str, age: str | None, seconds: float
) -> None:
    """RFC 9111: what is left of max-age once the document's Age is taken off."""
    assert cache_lifetime(cache_control, age) == seconds


async def test_a_refusal_is_remembered_briefly_then_the_document_is_fetched_again(
    server: HttpsDocuments, documents: ClientDocuments, clock: Clock
) -> None:
    """A fixed document is accepted once the short refusal time has passed."""
    url = server.url(PATH)
    server.serve(PATH, Answer(b"oops", status=404))
    assert "HTTP 404" in await refusal(documents, url)
    server.serve_json(PATH, document_for(url))
    clock.now += REFUSAL_TTL_SECONDS - 1
    assert "HTTP 404" in await refusal(documents, url)
    assert server.requests(PATH) == 1
    clock.now += 2
    assert (await documents.fetch(url)).client_id == url
    assert server.requests(PATH) == 2


async def test_an_unavailable_host_is_remembered_for_a_few_seconds_only(
    server: HttpsDocuments, documents: ClientDocuments, clock: Clock
) -> None:
    """A retry storm at a host that answers 503 makes one request every few seconds."""
    url = server.url(PATH)
    server.serve(PATH, Answer(b"down", status=503))
    assert "HTTP 503" in await unavailability(documents, url)
    server.serve_json(PATH, document_for(url))
    clock.now += UNAVAILABLE_TTL_SECONDS - 1
    assert "HTTP 503" in await unavailability(documents, url)
    assert server.requests(PATH) == 1
    clock.now += 2
    assert (await documents.fetch(url)).client_id == url
    assert server.requests(PATH) == 2


# An expired document while its host has a hiccup


async def test_an_expired_document_is_served_while_its_host_is_unavailable(
    server: HttpsDocuments, documents: ClientDocuments, clock: Clock, logged: list[EventDict]
) -> None:
    """After expiry, a 503 at the client's host serves the last good document (logged)."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    first = await documents.fetch(url)
    server.serve(PATH, Answer(b"down", status=503))
    clock.now += DOCUMENT_TTL_FLOOR_SECONDS + 1
    assert await documents.fetch(url) == first
    assert server.requests(PATH) == 2
    assert any(entry["event"] == "client_document_expired_but_kept" for entry in logged)
    assert await documents.fetch(url) == first
    assert server.requests(PATH) == 2
    server.serve_json(PATH, document_for(url, client_name="Edited Client"))
    clock.now += UNAVAILABLE_TTL_SECONDS + 1
    assert (await documents.fetch(url)).client_name == "Edited Client"


@pytest.mark.parametrize(
    "broken",
    [
        Answer(b"gone", status=404),
        Answer(b"gone", status=410),
        Answer(b'{"client_id": "https://elsewhere.example/c.json"}'),
    ],
)
async def test_a_refused_refetch_drops_the_expired_document(
    server: HttpsDocuments, documents: ClientDocuments, clock: Clock, broken: Answer
) -> None:
    """A 404, a 410 or a rule broken ends the document; a later hiccup finds none kept."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    await documents.fetch(url)
    server.serve(PATH, broken)
    clock.now += DOCUMENT_TTL_FLOOR_SECONDS + 1
    await refusal(documents, url)
    server.serve(PATH, Answer(b"down", status=503))
    clock.now += REFUSAL_TTL_SECONDS + 1
    assert "HTTP 503" in await unavailability(documents, url)


async def test_an_expired_document_is_kept_for_a_bounded_time_only(
    server: HttpsDocuments, documents: ClientDocuments, clock: Clock
) -> None:
    """Past STALE_DOCUMENT_SECONDS after expiry, a host still down means no document."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    await documents.fetch(url)
    server.serve(PATH, Answer(b"down", status=503))
    expired = clock.now + DOCUMENT_TTL_FLOOR_SECONDS
    clock.now = expired + STALE_DOCUMENT_SECONDS - 1
    assert (await documents.fetch(url)).client_id == url
    clock.now = expired + STALE_DOCUMENT_SECONDS + UNAVAILABLE_TTL_SECONDS
    assert "HTTP 503" in await unavailability(documents, url)


async def test_concurrent_fetches_of_one_document_share_one_request(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """Five sign-ins starting at once make the client's host answer once."""
    url = server.url(PATH)
    release = threading.Event()
    server.serve(PATH, Answer(json.dumps(document_for(url)).encode(), hold=release))
    fetched: list[ClientDocument] = []

    async def fetch() -> None:
        fetched.append(await documents.fetch(url))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(fetch)
            assert await anyio.to_thread.run_sync(server.wait_for_request, PATH, 5.0)
            release.set()
    assert len(fetched) == 5
    assert all(document == fetched[0] for document in fetched)
    assert server.requests(PATH) == 1


async def test_a_caller_that_gives_up_does_not_cancel_the_fetch_others_wait_on(
    server: HttpsDocuments, documents: ClientDocuments
) -> None:
    """One cancelled waiter leaves the shared fetch running for the next."""
    url = server.url(PATH)
    release = threading.Event()
    server.serve(PATH, Answer(json.dumps(document_for(url)).encode(), hold=release))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(documents.fetch, url)
            assert await anyio.to_thread.run_sync(server.wait_for_request, PATH, 5.0)
            group.cancel_scope.cancel()
        release.set()
        assert (await documents.fetch(url)).client_id == url
    assert server.requests(PATH) == 1


# The fetch slots and what is not the document's doing


async def _attempt(documents: ClientDocuments, url: str) -> None:
    with contextlib.suppress(ClientDocumentProblem):
        await documents.fetch(url)


def _hold_every_slot(server: HttpsDocuments, release: threading.Event) -> list[str]:
    """DOCUMENT_CONNECTIONS documents whose host answers only once ``release`` is set."""
    held = [f"/held/{number}.json" for number in range(DOCUMENT_CONNECTIONS)]
    for path in held:
        server.serve(path, Answer(b"{}", hold=release))
    return held


async def test_waiting_for_a_fetch_slot_is_bounded_and_not_remembered(
    server: HttpsDocuments, outbound: OutboundClients
) -> None:
    """With every slot held, a fetch is unavailable after the short wait, without a request,
    and the next attempt fetches it once a slot is free."""
    documents = ClientDocuments(outbound, on_loopback=True, slot_wait_seconds=0.2)
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    release = threading.Event()
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for path in _hold_every_slot(server, release):
                    group.start_soon(_attempt, documents, server.url(path))
                for path in _hold_every_slot(server, release):
                    assert await anyio.to_thread.run_sync(server.wait_for_request, path, 5.0)
                assert "too many at once" in await unavailability(documents, url)
                assert server.requests(PATH) == 0
                release.set()
            assert (await documents.fetch(url)).client_id == url
    finally:
        release.set()


async def test_the_fetch_deadline_starts_once_a_slot_is_held(
    server: HttpsDocuments, outbound: OutboundClients
) -> None:
    """A fetch queued behind slow ones (holding every slot until their own deadline) still
    has its whole deadline for a host that takes 0.4 of its 1 second to answer."""
    documents = ClientDocuments(
        outbound, on_loopback=True, deadline_seconds=1.0, slot_wait_seconds=5.0
    )
    url = server.url(PATH)
    body = json.dumps({"client_id": url, "redirect_uris": ["https://client.example/cb"]})
    server.serve(PATH, Answer(body.encode(), drip_seconds=0.4 / len(body)))
    fetched: list[ClientDocument] = []

    async def queued() -> None:
        fetched.append(await documents.fetch(url))

    release = threading.Event()
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for path in _hold_every_slot(server, release):
                    group.start_soon(_attempt, documents, server.url(path))
                # Started after them, so it is the one left waiting for a slot.
                group.start_soon(queued)
    finally:
        release.set()
    assert [document.client_id for document in fetched] == [url]


async def test_an_unexpected_failure_of_a_fetch_is_unavailable_and_not_remembered(
    server: HttpsDocuments,
    outbound: OutboundClients,
    documents: ClientDocuments,
    logged: list[EventDict],
) -> None:
    """The outbound client closed under a fetch (as at shutdown) is no 500 and no verdict on
    the document: unavailable, logged with the exception, and fetched at the next attempt."""
    url = server.url(PATH)
    server.serve_json(PATH, document_for(url))
    await outbound.for_documents().aclose()
    assert await unavailability(documents, url) == NOT_FETCHED
    failures = [entry for entry in logged if entry["event"] == "client_document_fetch_failed"]
    assert len(failures) == 1
    assert failures[0]["exc_info"] is True
    await outbound.aclose()
    assert (await documents.fetch(url)).client_id == url
