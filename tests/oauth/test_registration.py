"""Dynamic client registration over HTTP (interface 2.3, 2.4, 4.4, 7.2)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.oauth import flows
from tests.oauth.conftest import Serve

pytestmark = pytest.mark.anyio


async def test_registration_answers_201_with_a_public_client(client: httpx.AsyncClient) -> None:
    """201 with client_id, integer client_id_issued_at, the URIs, the name and auth method none."""
    before = int(time.time())
    response = await flows.register_response(
        client,
        {"redirect_uris": [flows.REDIRECT_URI, "https://app.example/cb"], "client_name": "Claude"},
    )
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    assert "no-store" in response.headers["cache-control"]
    body = response.json()
    assert isinstance(body["client_id"], str)
    assert body["client_id"]
    assert type(body["client_id_issued_at"]) is int
    assert before - 1 <= body["client_id_issued_at"] <= int(time.time()) + 1
    assert body["redirect_uris"] == [flows.REDIRECT_URI, "https://app.example/cb"]
    assert body["client_name"] == "Claude"
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body


async def test_each_registration_gets_its_own_client_id(client: httpx.AsyncClient) -> None:
    """Two identical registrations are two clients."""
    first = await flows.register(client)
    second = await flows.register(client)
    assert first != second


@pytest.mark.parametrize(
    "redirect_uris",
    [
        ["https://app.example/callback"],
        ["https://app.example/callback?keep=1"],
        ["http://localhost:6274/oauth/callback"],
        ["http://127.0.0.1/cb"],
        ["http://[::1]:8080/cb"],
    ],
)
async def test_https_and_loopback_http_redirect_uris_are_accepted(
    client: httpx.AsyncClient, redirect_uris: list[str]
) -> None:
    """https anywhere, http on a loopback host (interface 2.3)."""
    response = await flows.register_response(client, {"redirect_uris": redirect_uris})
    assert response.status_code == 201, response.text
    assert response.json()["redirect_uris"] == redirect_uris


@pytest.mark.parametrize(
    "document",
    [
        {},
        {"client_name": "no uris"},
        {"redirect_uris": []},
        {"redirect_uris": "https://app.example/cb"},
        {"redirect_uris": [42]},
        {"redirect_uris": ["http://app.example/cb"]},
        {"redirect_uris": ["http://localhost.evil.example/cb"]},
        {"redirect_uris": ["https://app.example/cb#fragment"]},
        {"redirect_uris": ["https://app.example/cb#"]},
        {"redirect_uris": ["javascript:alert(1)"]},
        {"redirect_uris": ["data:text/html,hi"]},
        {"redirect_uris": ["https://user:secret@app.example/cb"]},
        {"redirect_uris": ["https://user@app.example/cb"]},
        {"redirect_uris": ["/relative/cb"]},
        {"redirect_uris": ["https://app.example/ok", "http://evil.example/cb"]},
    ],
)
async def test_invalid_redirect_uris_are_refused(
    client: httpx.AsyncClient, document: dict[str, Any]
) -> None:
    """Missing, empty, not https, fragment, bad scheme or credentials: invalid_redirect_uri."""
    response = await flows.register_response(client, document)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize(
    "document",
    [
        {"redirect_uris": [flows.REDIRECT_URI], "grant_types": ["implicit"]},
        {"redirect_uris": [flows.REDIRECT_URI], "grant_types": ["client_credentials"]},
        {"redirect_uris": [flows.REDIRECT_URI], "grant_types": "authorization_code"},
        {"redirect_uris": [flows.REDIRECT_URI], "response_types": ["token"]},
        [{"redirect_uris": [flows.REDIRECT_URI]}],
        "https://app.example/cb",
        42,
    ],
)
async def test_invalid_client_metadata_is_refused(client: httpx.AsyncClient, document: Any) -> None:
    """Not an object, or grants and response types without ours: invalid_client_metadata."""
    response = await flows.register_response(client, document)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "invalid_client_metadata"
    assert set(body) <= {"error", "error_description"}


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"", "application/json"),
        (b"null", "application/json"),
        (b'{"redirect_uris": ["https://app.example/cb"]}', "text/plain"),
        (b"redirect_uris=https://app.example/cb", "application/x-www-form-urlencoded"),
    ],
)
async def test_a_body_that_is_not_json_is_refused(
    client: httpx.AsyncClient, content: bytes, content_type: str
) -> None:
    """Invalid JSON, JSON null or another media type: 400 invalid_client_metadata."""
    response = await client.post(
        flows.oauth_path("register"), content=content, headers={"content-type": content_type}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


async def test_unknown_client_metadata_fields_are_tolerated(client: httpx.AsyncClient) -> None:
    """Fields real clients send (logo_uri, scope, contacts...) do not break registration."""
    response = await flows.register_response(
        client,
        {
            "redirect_uris": [flows.REDIRECT_URI],
            "client_name": "Inspector",
            "logo_uri": "https://app.example/logo.png",
            "client_uri": "https://app.example",
            "scope": "openid profile email",
            "contacts": ["ops@app.example"],
            "software_id": "inspector",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert response.status_code == 201, response.text


async def test_a_registration_without_a_name_is_accepted(client: httpx.AsyncClient) -> None:
    """client_name is optional (interface 2.3)."""
    response = await flows.register_response(client, {"redirect_uris": [flows.REDIRECT_URI]})
    assert response.status_code == 201
    assert response.json()["token_endpoint_auth_method"] == "none"


async def test_too_many_registrations_answer_429_with_retry_after(serve: Serve) -> None:
    """Past the registration limit the caller gets 429 and Retry-After in seconds."""
    served = await serve(registration_rate_limit="2/minute")
    for _ in range(2):
        await flows.register(served.client)
    response = await flows.register_response(served.client, {"redirect_uris": [flows.REDIRECT_URI]})
    assert response.status_code == 429
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit()
    assert 1 <= int(retry_after) <= 60
    assert isinstance(response.json()["error"], str)


async def test_a_registered_client_belongs_to_its_company(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """An initech client is unknown at hooli's token endpoint (401 invalid_client)."""
    client_id = await flows.register(client, "initech")
    response = await flows.token_request(
        client,
        {"grant_type": "refresh_token", "refresh_token": "fdrt_x", "client_id": client_id},
        "hooli",
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
