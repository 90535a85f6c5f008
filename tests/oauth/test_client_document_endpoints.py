"""Metadata-document clients at authorize, token and revoke: documents come from public
addresses only (loopback only by the test-only setting), a refused document is told in one
sentence, and a document that cannot be fetched now is a 503, never a 401 that would make
the client discard its tokens."""

from __future__ import annotations

import html
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from frontdesk.oauth.client_documents import ClientDocumentUnavailable
from tests.oauth import flows
from tests.oauth.conftest import Serve
from tests.support.https_documents import HttpsDocuments, run_https_documents

PATH = "/oauth/client.json"
NOT_FETCHED = "The client's metadata document could not be fetched from its URL"


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpsDocuments]:
    """The tests' HTTPS server, trusted by the app's outbound client through SSL_CERT_FILE
    (read when that client is first made), as a `frontdesk serve` started by a test is."""
    with run_https_documents(tmp_path) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        yield server


def publish(documents: HttpsDocuments, **changes: Any) -> str:
    """Publish a document for the tests' loopback redirect URI; its URL, the client id."""
    url = documents.url(PATH)
    document = {
        "client_id": url,
        "client_name": "Document Client",
        "redirect_uris": [flows.REDIRECT_URI],
        **changes,
    }
    documents.serve_json(PATH, document)
    return url


def unreachable_url() -> str:
    """A document URL on a loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"https://127.0.0.1:{port}/client.json"


def page_text(response: Any) -> str:
    return html.unescape(response.text)


async def test_the_backends_private_networks_are_never_opened_to_metadata_documents(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """With loopback allowed for backends only, a document on loopback is never requested:
    the customer is asked to try again, as for any document that cannot be fetched."""
    served = await serve(backend_allowed_networks=["127.0.0.0/8", "::1/128"])
    url = publish(documents)
    params = flows.authorize_params(url, flows.Pkce.new())
    response = await flows.authorize(served.client, params)
    assert response.status_code == 503
    assert "Please try again in a moment" in response.text
    assert NOT_FETCHED in page_text(response)
    assert documents.requests(PATH) == 0


async def test_the_test_only_setting_lets_a_document_client_sign_in_from_loopback(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK: sign-in, code exchange and refresh with the
    document's URL as client id, the document fetched once."""
    served = await serve(client_documents_on_loopback=True)
    url = publish(documents)
    tokens = await flows.obtain_tokens(served.client, client_id=url)
    refreshed = await flows.refresh(served.client, tokens)
    assert refreshed.status_code == 200, refreshed.text
    assert documents.requests(PATH) == 1


async def test_token_and_revocation_answer_503_when_the_document_cannot_be_fetched(
    serve: Serve,
) -> None:
    """No document kept and none fetched: temporarily_unavailable with Retry-After, not the
    invalid_client that makes an SDK throw its tokens away."""
    served = await serve(client_documents_on_loopback=True)
    client_id = unreachable_url()
    refresh = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": "r"}
    answers = [
        await flows.token_request(served.client, refresh),
        await flows.revoke(served.client, "some-token", client_id),
    ]
    for response in answers:
        assert response.status_code == 503, response.text
        assert response.json() == {
            "error": "temporarily_unavailable",
            "error_description": NOT_FETCHED,
        }
        assert response.headers["retry-after"] == str(ClientDocumentUnavailable.retry_after)
        assert response.headers["cache-control"] == "no-store"


async def test_authorize_asks_the_customer_to_try_again_when_the_document_cannot_be_fetched(
    serve: Serve,
) -> None:
    """A 503 page, never a redirect: the redirect URI is not known yet."""
    served = await serve(client_documents_on_loopback=True)
    params = flows.authorize_params(unreachable_url(), flows.Pkce.new())
    response = await flows.authorize(served.client, params)
    assert response.status_code == 503
    assert "location" not in response.headers
    assert "Please try again in a moment" in response.text
    assert NOT_FETCHED in page_text(response)


async def test_a_refused_document_is_told_in_one_sentence_on_the_page_and_in_the_error(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """A redirect URI this company refuses: the same sentence, said once, on the authorize
    page (400) and as the token endpoint's invalid_client."""
    served = await serve(client_documents_on_loopback=True)
    url = publish(documents, redirect_uris=["http://client.example/callback"])
    sentence = (
        "The client's metadata document is refused: redirect_uris[0]: http redirect URIs"
        " must be on a loopback host: 'http://client.example/callback'"
    )
    page = await flows.authorize(served.client, flows.authorize_params(url, flows.Pkce.new()))
    assert page.status_code == 400
    assert sentence in page_text(page)
    assert page_text(page).count("metadata document") == 1
    refresh = {"grant_type": "refresh_token", "client_id": url, "refresh_token": "r"}
    error = await flows.token_request(served.client, refresh)
    assert error.status_code == 401
    assert error.json() == {"error": "invalid_client", "error_description": sentence}


async def test_many_sign_ins_of_one_document_client_fetch_its_document_once(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """The document is kept for its max-age (within the floor and ceiling): fifty
    authorizes naming it make one request to the client's host."""
    served = await serve(client_documents_on_loopback=True)
    url = publish(documents)
    documents.serve_json(
        PATH,
        {"client_id": url, "client_name": "Document Client", "redirect_uris": [flows.REDIRECT_URI]},
        headers={"Cache-Control": "max-age=600"},
    )
    for _ in range(50):
        response = await flows.authorize(
            served.client, flows.authorize_params(url, flows.Pkce.new())
        )
        assert response.status_code == 200, response.text
    assert documents.requests(PATH) == 1


async def test_an_address_past_the_authorize_limit_makes_no_fetch(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """A new document URL on every request (which no cache can serve) costs the address its
    allowance: past it, the 429 comes before any fetch."""
    served = await serve(client_documents_on_loopback=True, oauth_rate_limit="3/minute")
    statuses = []
    for number in range(6):
        path = f"/oauth/client-{number}.json"
        url = documents.url(path)
        documents.serve_json(path, {"client_id": url, "redirect_uris": [flows.REDIRECT_URI]})
        response = await flows.authorize(
            served.client, flows.authorize_params(url, flows.Pkce.new())
        )
        statuses.append(response.status_code)
    assert statuses == [200, 200, 200, 429, 429, 429]
    fetched = [documents.requests(f"/oauth/client-{number}.json") for number in range(6)]
    assert fetched == [1, 1, 1, 0, 0, 0]


async def test_an_address_is_held_to_a_few_new_documents_and_kept_ones_cost_nothing(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """FRONTDESK_CLIENT_DOCUMENT_FETCH_RATE_LIMIT counts only the client ids whose document
    would be fetched: past it, a new URL is refused before any request to its host, while a
    document already kept is still served to the same address."""
    served = await serve(
        client_documents_on_loopback=True, client_document_fetch_rate_limit="2/minute"
    )
    urls = []
    for number in range(3):
        path = f"/oauth/new-{number}.json"
        urls.append(documents.url(path))
        documents.serve_json(path, {"client_id": urls[-1], "redirect_uris": [flows.REDIRECT_URI]})
    statuses = []
    for url in [*urls, urls[0], urls[1]]:
        response = await flows.authorize(
            served.client, flows.authorize_params(url, flows.Pkce.new())
        )
        statuses.append(response.status_code)
    assert statuses == [200, 200, 429, 200, 200]
    assert [documents.requests(f"/oauth/new-{number}.json") for number in range(3)] == [1, 1, 0]
    # The token endpoint holds the address to the same count.
    refresh = {"grant_type": "refresh_token", "client_id": urls[2], "refresh_token": "r"}
    answer = await flows.token_request(served.client, refresh)
    assert answer.status_code == 429
    assert answer.json()["error"] == "rate_limited"
    assert documents.requests("/oauth/new-2.json") == 0
