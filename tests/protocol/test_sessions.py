"""``Mcp-Session-Id`` at the endpoint: issued by initialize, checked on every later POST,
"unknown" → 404 (interface 3.5, 4.2, 7.1; DESIGN, sessions)."""

from __future__ import annotations

import time

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.protocol.errors import SESSION_UNKNOWN
from frontdesk.protocol.sessions import SessionSigner
from tests.conftest import TEST_SECRET
from tests.protocol.conftest import Serve
from tests.support.jsonrpc import ACME, assert_envelope, request

NEW_KEY = "rotated-in-secret-key-0123456789abcdefgh"
OLD_KEY = "rotated-out-secret-key-0123456789abcdefg"
INITIALIZE = request(
    "initialize",
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
)


async def start_session(client: httpx.AsyncClient, path: str = ACME) -> str:
    response = await client.post(path, json=INITIALIZE)
    assert response.status_code == 200
    return response.headers["mcp-session-id"]


async def ping_with(client: httpx.AsyncClient, session_id: str) -> httpx.Response:
    return await client.post(ACME, json=request("ping"), headers={"mcp-session-id": session_id})


async def test_initialize_returns_a_session_id(client: httpx.AsyncClient, app: Frontdesk) -> None:
    """initialize answers with an Mcp-Session-Id for this company and the negotiated version."""
    session_id = await start_session(client)
    session = app.services.sessions.verify(session_id, "acme")
    assert session is not None
    assert session.protocol_version == "2025-06-18"


async def test_only_initialize_issues_a_session_id(client: httpx.AsyncClient) -> None:
    """Other methods answer without an Mcp-Session-Id header."""
    response = await client.post(ACME, json=request("ping"))
    assert "mcp-session-id" not in response.headers


async def test_a_request_carrying_its_session_id_is_served(client: httpx.AsyncClient) -> None:
    """The id initialize returned is accepted on later requests."""
    session_id = await start_session(client)
    response = await ping_with(client, session_id)
    assert response.status_code == 200
    assert response.json()["result"] == {}


async def test_a_request_without_a_session_id_is_served(client: httpx.AsyncClient) -> None:
    """No header: a stateless client, served."""
    response = await client.post(ACME, json=request("tools/list"))
    assert "mcp-session-id" not in response.request.headers
    assert response.status_code == 200


@pytest.mark.parametrize(
    "session_id",
    ["made-up", "a.b", ".", "", "x" * 5000, "eyJ0IjoiYWNtZSJ9.AAAA"],
    ids=["no-dot", "short", "dot-only", "empty", "huge", "unsigned-payload"],
)
async def test_a_forged_session_id_answers_404(client: httpx.AsyncClient, session_id: str) -> None:
    """A session id this service never issued is unknown: 404 with an envelope."""
    envelope = assert_envelope(await ping_with(client, session_id), 404, SESSION_UNKNOWN)
    assert envelope["id"] == 1


async def test_a_session_id_with_bytes_beyond_ascii_answers_404(
    client: httpx.AsyncClient,
) -> None:
    """Header bytes that are not ASCII are an unknown session, never a server error."""
    session_id = await start_session(client)
    response = await client.post(
        ACME, json=request("ping"), headers={b"mcp-session-id": session_id.encode() + b"\xff"}
    )
    assert_envelope(response, 404, SESSION_UNKNOWN)


@pytest.mark.parametrize("where", ["payload", "signature"])
async def test_a_tampered_session_id_answers_404(client: httpx.AsyncClient, where: str) -> None:
    """Changing one character of an issued id, in payload or signature, makes it unknown."""
    session_id = await start_session(client)
    index = 2 if where == "payload" else len(session_id) - 3
    replacement = "A" if session_id[index] != "A" else "B"
    tampered = session_id[:index] + replacement + session_id[index + 1 :]
    assert_envelope(await ping_with(client, tampered), 404, SESSION_UNKNOWN)


async def test_an_expired_session_id_answers_404(client: httpx.AsyncClient, app: Frontdesk) -> None:
    """An id older than the session lifetime is unknown."""
    ttl = app.services.settings.session_ttl_seconds
    signer = SessionSigner([TEST_SECRET], ttl)
    expired = signer.issue("acme", "2025-11-25", now=time.time() - ttl - 120)
    assert_envelope(await ping_with(client, expired), 404, SESSION_UNKNOWN)


async def test_a_session_id_within_its_lifetime_is_served(
    client: httpx.AsyncClient, app: Frontdesk
) -> None:
    """An id issued a while ago, still inside the lifetime, is served."""
    ttl = app.services.settings.session_ttl_seconds
    signer = SessionSigner([TEST_SECRET], ttl)
    recent = signer.issue("acme", "2025-11-25", now=time.time() - ttl + 120)
    assert (await ping_with(client, recent)).status_code == 200


async def test_another_companys_session_id_answers_404(client: httpx.AsyncClient) -> None:
    """A session started at globex is unknown at acme."""
    session_id = await start_session(client, "/v1/globex/mcp")
    assert_envelope(await ping_with(client, session_id), 404, SESSION_UNKNOWN)


async def test_a_session_id_signed_with_a_key_we_do_not_hold_answers_404(
    client: httpx.AsyncClient,
) -> None:
    """An id signed with another secret is unknown."""
    session_id = SessionSigner([OLD_KEY], 3600).issue("acme", "2025-11-25")
    assert_envelope(await ping_with(client, session_id), 404, SESSION_UNKNOWN)


async def test_initialize_with_a_stale_session_id_starts_afresh(
    client: httpx.AsyncClient,
) -> None:
    """initialize ignores an unknown session id and issues a new one."""
    response = await client.post(ACME, json=INITIALIZE, headers={"mcp-session-id": "stale.id"})
    assert response.status_code == 200
    assert response.headers["mcp-session-id"] != "stale.id"


async def test_a_session_id_checks_every_request_of_a_batch(client: httpx.AsyncClient) -> None:
    """An unknown session id refuses the whole batch with one 404 envelope."""
    response = await client.post(
        ACME,
        json=[request("ping", request_id=1), request("ping", request_id=2)],
        headers={"mcp-session-id": "made-up.id"},
    )
    envelope = assert_envelope(response, 404, SESSION_UNKNOWN)
    assert envelope["id"] is None


async def test_an_old_keys_session_survives_while_the_key_is_still_listed(serve: Serve) -> None:
    """After rotation (new key first, old key second) ids signed with the old key still work."""
    session_id = SessionSigner([OLD_KEY], 3600).issue("acme", "2025-11-25")
    client = await serve(secret_keys=[NEW_KEY, OLD_KEY])
    assert (await ping_with(client, session_id)).status_code == 200


async def test_an_old_keys_session_ends_once_the_key_is_removed(serve: Serve) -> None:
    """Once the old key is dropped from the list, its ids are unknown."""
    session_id = SessionSigner([OLD_KEY], 3600).issue("acme", "2025-11-25")
    client = await serve(secret_keys=[NEW_KEY])
    assert_envelope(await ping_with(client, session_id), 404, SESSION_UNKNOWN)


async def test_after_rotation_new_sessions_are_signed_with_the_first_key(serve: Serve) -> None:
    """The first key signs: an id issued after rotation verifies under the new key alone."""
    client = await serve(secret_keys=[NEW_KEY, OLD_KEY])
    session_id = await start_session(client)
    assert SessionSigner([NEW_KEY], 3600).verify(session_id, "acme") is not None
    assert SessionSigner([OLD_KEY], 3600).verify(session_id, "acme") is None
