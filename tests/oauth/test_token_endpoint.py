"""The token endpoint's authorization-code grant (interface 2.5, 2.6, 4.5, 7.2), and how codes and
tokens are kept (DESIGN: only their SHA-256 is stored)."""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from urllib.parse import urlencode

import httpx
import pytest
from sqlalchemy import JSON, String, Text, inspect, select
from sqlalchemy.engine import Connection

from frontdesk.app import Frontdesk
from frontdesk.oauth import grants
from frontdesk.store.tables import authorization_codes, metadata
from tests.oauth import flows

pytestmark = pytest.mark.anyio


def basic(username: str, password: str = "") -> dict[str, str]:
    credentials = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"authorization": f"Basic {credentials}"}


def assert_oauth_error(response: httpx.Response, status: int, error: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"] == error
    assert set(body) <= {"error", "error_description"}
    assert "no-store" in response.headers["cache-control"]


# Success -----------------------------------------------------------------------------------


async def test_a_code_is_exchanged_for_a_bearer_token_pair(client: httpx.AsyncClient) -> None:
    """200 with the fields of interface 2.6, token_type Bearer, at most an hour, not cached."""
    response = await flows.exchange(client, await flows.sign_in(client))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert "no-store" in response.headers["cache-control"]
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    assert body["token_type"] == "Bearer"
    assert type(body["expires_in"]) is int
    assert 0 < body["expires_in"] <= 3600
    assert isinstance(body["access_token"], str)
    assert isinstance(body["refresh_token"], str)
    assert body["access_token"] != body["refresh_token"]
    assert set(body["scope"].split()) == {"profile", "email"}


async def test_the_client_may_name_itself_with_http_basic(client: httpx.AsyncClient) -> None:
    """The client id as the Basic username, with an empty password, instead of the form."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    del form["client_id"]
    response = await flows.token_request(client, form, headers=basic(signed_in.client_id))
    assert response.status_code == 200, response.text


async def test_the_same_client_id_in_basic_and_form_is_accepted(client: httpx.AsyncClient) -> None:
    """Both ways naming the same client agree."""
    signed_in = await flows.sign_in(client)
    response = await flows.token_request(
        client, flows.code_form(signed_in), headers=basic(signed_in.client_id)
    )
    assert response.status_code == 200, response.text


async def test_different_client_ids_in_basic_and_form_are_refused(
    client: httpx.AsyncClient,
) -> None:
    """Basic names one client, the form another: 400 invalid_request."""
    signed_in = await flows.sign_in(client)
    other = await flows.register(client)
    response = await flows.token_request(client, flows.code_form(signed_in), headers=basic(other))
    assert_oauth_error(response, 400, "invalid_request")


async def test_an_unknown_client_is_401(client: httpx.AsyncClient) -> None:
    """A client id nobody registered: 401 invalid_client."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, client_id="fdc_unknown")
    assert_oauth_error(response, 401, "invalid_client")


async def test_an_unknown_basic_client_is_401_with_a_basic_challenge(
    client: httpx.AsyncClient,
) -> None:
    """An unknown client named with Basic: 401 and WWW-Authenticate Basic (RFC 6749 5.2)."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    del form["client_id"]
    response = await flows.token_request(client, form, headers=basic("fdc_unknown"))
    assert_oauth_error(response, 401, "invalid_client")
    assert response.headers["www-authenticate"].startswith("Basic")


@pytest.mark.parametrize("authorization", [None, "Basic !!!notbase64", "Basic Og=="])
async def test_a_missing_client_id_is_401(
    client: httpx.AsyncClient, authorization: str | None
) -> None:
    """No client id in the form nor a usable Basic username: 401 invalid_client."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    del form["client_id"]
    headers = {"authorization": authorization} if authorization else None
    response = await flows.token_request(client, form, headers=headers)
    assert_oauth_error(response, 401, "invalid_client")


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "implicit", "urn:x"])
async def test_an_unsupported_grant_type_is_400(client: httpx.AsyncClient, grant_type: str) -> None:
    """Only authorization_code and refresh_token: 400 unsupported_grant_type."""
    client_id = await flows.register(client)
    response = await flows.token_request(client, {"grant_type": grant_type, "client_id": client_id})
    assert_oauth_error(response, 400, "unsupported_grant_type")


async def test_a_missing_grant_type_is_invalid_request(client: httpx.AsyncClient) -> None:
    """No grant_type at all: 400 invalid_request."""
    client_id = await flows.register(client)
    response = await flows.token_request(client, {"client_id": client_id})
    assert_oauth_error(response, 400, "invalid_request")


@pytest.mark.parametrize("missing", ["code", "redirect_uri", "code_verifier"])
async def test_a_missing_code_parameter_is_invalid_request(
    client: httpx.AsyncClient, missing: str
) -> None:
    """code, redirect_uri and code_verifier are required (interface 2.5)."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    del form[missing]
    assert_oauth_error(await flows.token_request(client, form), 400, "invalid_request")


# Invalid grants ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "verifier",
    [
        "x" * 64,
        "short",
        "y" * 129,
        "z" * 42 + "!",
    ],
)
async def test_a_wrong_code_verifier_is_invalid_grant(
    client: httpx.AsyncClient, verifier: str
) -> None:
    """The verifier must hash to the challenge sent to authorize (RFC 7636 4.6)."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, code_verifier=verifier)
    assert_oauth_error(response, 400, "invalid_grant")


async def test_the_challenge_itself_is_not_a_verifier(client: httpx.AsyncClient) -> None:
    """Sending the challenge (visible in the browser) as the verifier does not work."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, code_verifier=signed_in.pkce.challenge)
    assert_oauth_error(response, 400, "invalid_grant")


async def test_a_different_redirect_uri_is_invalid_grant(client: httpx.AsyncClient) -> None:
    """Another URI the client registered is still not the one sent to authorize."""
    other_uri = "https://app.example/other"
    client_id = await flows.register(client, redirect_uris=[flows.REDIRECT_URI, other_uri])
    signed_in = await flows.sign_in(client, client_id=client_id)
    response = await flows.exchange(client, signed_in, redirect_uri=other_uri)
    assert_oauth_error(response, 400, "invalid_grant")


async def test_a_code_of_another_client_is_invalid_grant(client: httpx.AsyncClient) -> None:
    """A code issued to one client, redeemed by another: invalid_grant."""
    signed_in = await flows.sign_in(client)
    thief = await flows.register(client)
    response = await flows.exchange(client, signed_in, client_id=thief)
    assert_oauth_error(response, 400, "invalid_grant")
    # The rightful client can still redeem it.
    assert (await flows.exchange(client, signed_in)).status_code == 200


async def test_an_unknown_code_is_invalid_grant(client: httpx.AsyncClient) -> None:
    """A code nobody issued: invalid_grant."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, code="fdac_made_up")
    assert_oauth_error(response, 400, "invalid_grant")


async def test_a_reused_code_is_refused_and_revokes_what_it_issued(
    client: httpx.AsyncClient,
) -> None:
    """The second redemption is invalid_grant, and the first pair stops working (RFC 6749 4.1.2)."""
    signed_in = await flows.sign_in(client)
    first = flows.tokens_of(await flows.exchange(client, signed_in), signed_in.client_id)
    assert (await flows.whoami(client, first.access)).status_code == 200
    assert_oauth_error(await flows.exchange(client, signed_in), 400, "invalid_grant")
    assert (await flows.whoami(client, first.access)).status_code == 401
    assert_oauth_error(await flows.refresh(client, first), 400, "invalid_grant")


async def test_an_expired_code_is_invalid_grant(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """A code past its lifetime (here moved into the past in the database): invalid_grant."""
    signed_in = await flows.sign_in(client)
    await flows.expire(app, authorization_codes)
    assert_oauth_error(await flows.exchange(client, signed_in), 400, "invalid_grant")


async def test_a_code_issued_with_no_lifetime_is_invalid_grant(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A code minted already expired (CODE_TTL patched below zero) is refused."""
    monkeypatch.setattr(grants, "CODE_TTL", timedelta(seconds=-1))
    signed_in = await flows.sign_in(client)
    assert_oauth_error(await flows.exchange(client, signed_in), 400, "invalid_grant")


async def test_a_code_lives_at_most_five_minutes(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """The stored expiry of a fresh code is within five minutes (DESIGN: codes <= 5 min)."""
    await flows.sign_in(client)
    async with app.services.database.engine.connect() as connection:
        row = (
            await connection.execute(
                select(authorization_codes.c.created_at, authorization_codes.c.expires_at)
            )
        ).one()
    assert timedelta(0) < row.expires_at - row.created_at <= timedelta(minutes=5)


async def test_a_code_of_one_company_is_unknown_at_another(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """initech's code at hooli's token endpoint, by a hooli client: invalid_grant."""
    signed_in = await flows.sign_in(client)
    hooli_client = await flows.register(client, "hooli")
    form = flows.code_form(signed_in, client_id=hooli_client)
    assert_oauth_error(await flows.token_request(client, form, "hooli"), 400, "invalid_grant")


# Request format ----------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", None])
async def test_a_body_that_is_not_a_form_is_refused(
    client: httpx.AsyncClient, content_type: str | None
) -> None:
    """The token request must be application/x-www-form-urlencoded (interface 4.5)."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    if content_type == "application/json":
        response = await client.post(flows.oauth_path("token"), json=form)
    else:
        headers = {"content-type": content_type} if content_type else {}
        response = await client.post(
            flows.oauth_path("token"), content=urlencode(form), headers=headers
        )
    assert_oauth_error(response, 400, "invalid_request")


@pytest.mark.parametrize("repeated", ["code", "client_id", "grant_type", "code_verifier"])
async def test_a_repeated_form_parameter_is_refused(
    client: httpx.AsyncClient, repeated: str
) -> None:
    """A parameter given twice, even with the same value: 400 invalid_request (RFC 6749 3.2)."""
    signed_in = await flows.sign_in(client)
    form = flows.code_form(signed_in)
    pairs = [*form.items(), (repeated, form[repeated])]
    assert_oauth_error(await flows.token_request(client, pairs), 400, "invalid_request")
    # The refused request did not spend the code.
    assert (await flows.exchange(client, signed_in)).status_code == 200


async def test_a_get_is_not_a_token_request(client: httpx.AsyncClient) -> None:
    """Token requests are POSTs only; parameters in a GET query are never read."""
    signed_in = await flows.sign_in(client)
    response = await client.get(flows.oauth_path("token"), params=flows.code_form(signed_in))
    assert response.status_code == 405


# Storage ------------------------------------------------------------------------------------


def _text_values(connection: Connection) -> list[str]:
    """Every value of every text or JSON column of every table, as text."""
    values: list[str] = []
    inspector = inspect(connection)
    for table_name in inspector.get_table_names():
        table = metadata.tables.get(table_name)
        if table is None:
            continue
        columns = [
            column for column in table.columns if isinstance(column.type, String | Text | JSON)
        ]
        if not columns:
            continue
        for row in connection.execute(select(*columns)):
            values.extend(str(value) for value in row if value is not None)
    return values


async def test_codes_and_tokens_are_stored_only_as_hashes(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """No code, access token or refresh token appears verbatim in any column of any table."""
    signed_in = await flows.sign_in(client)
    first = flows.tokens_of(await flows.exchange(client, signed_in), signed_in.client_id)
    refreshed = await flows.refresh(client, first)
    second = flows.tokens_of(refreshed, signed_in.client_id)
    secrets = [signed_in.code, first.access, first.refresh, second.access, second.refresh]
    async with app.services.database.engine.connect() as connection:
        values = await connection.run_sync(_text_values)
    stored = "\n".join(values)
    for secret in secrets:
        assert secret not in stored
        # Nor any long piece of one (a prefix-stripped or truncated copy).
        assert secret[5:25] not in stored
    # The scan did see the grants: each one's SHA-256 is there.
    for secret in secrets:
        assert hashlib.sha256(secret.encode()).hexdigest() in values
