"""Tokens stored only as hashes (DESIGN: tokens are opaque; only their SHA-256 is stored).
tests/oauth/test_token_endpoint.py checks the text columns of the tables it knows; this
reads every column of every table the database has, audit log included, as whatever
type it is, and looks for each secret verbatim, clipped, hex- or base64-encoded; the pair a
company's refresh retry window keeps, and the private half of its signing key, are there only
sealed."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import httpx
import orjson
import pytest
from sqlalchemy import func, select

from frontdesk.app import Frontdesk
from frontdesk.oauth.flow import COOKIE_NAME
from frontdesk.sealing.secret_box import CannotOpen, SecretBox
from frontdesk.store.tables import refresh_tokens, signing_keys
from tests.adversarial.conftest import snapshot
from tests.oauth import flows
from tests.oauth.retry_window import TENANT as RETRYING
from tests.oauth.retry_window import add_retrying_company

pytestmark = pytest.mark.anyio


async def sealed_pairs(app: Frontdesk) -> int:
    query = select(func.count()).where(refresh_tokens.c.successor_sealed.is_not(None))
    async with app.services.database.engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())


def disguises(secret: str) -> list[str]:
    """The ways a careless store could keep a secret: as is, clipped, hex, base64."""
    raw = secret.encode()
    # Only our tokens have a type prefix ("fdat_..."); other secrets (a sealed flow, a
    # nonce) may hold "_" anywhere, and cutting there could leave a piece of one letter.
    random_part = secret.split("_", 1)[-1] if secret.startswith("fd") else secret
    pieces = [
        secret,
        random_part[:16],
        random_part[-16:],
        raw.hex(),
        base64.b64encode(raw).decode()[:24],
        base64.urlsafe_b64encode(raw).decode()[:24],
    ]
    # A piece this short would match by chance, not because the secret was stored.
    return [piece for piece in pieces if len(piece) >= 12]


async def test_no_secret_is_stored_in_any_column_of_any_table(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """No code, token, verifier, flow, nonce or session MAC in any column of any table."""
    client_id = await flows.register(client)
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce)
    sealed = flows.flow_of(page)
    nonce = client.cookies.get(COOKIE_NAME, path="/v1/initech/oauth")
    assert nonce
    allowed = await flows.decide(client, sealed)
    code = flows.redirect_params(await flows.dev_login(client, allowed))["code"]
    signed_in = flows.SignIn(
        client_id, code, "client-state", flows.issuer(), pkce, flows.REDIRECT_URI, flows.TENANT
    )
    first = flows.tokens_of(await flows.exchange(client, signed_in), client_id)
    second = flows.tokens_of(await flows.refresh(client, first), client_id)
    await flows.refresh(client, first)
    third = await flows.obtain_tokens(client, client_id=client_id)
    await flows.revoke(client, third.access, client_id)
    await flows.revoke(client, third.refresh, client_id)
    # A company with a refresh retry window keeps the pair a rotation issued, sealed
    # (oauth.kept_pairs): the sealed column is scanned like every other.
    await add_retrying_company(app, tmp_path)
    kept_from = await flows.obtain_tokens(client, RETRYING)
    kept = flows.tokens_of(await flows.refresh(client, kept_from), kept_from.client_id, RETRYING)
    assert await sealed_pairs(app) == 1
    initialized = await flows.mcp(client, flows.rpc("initialize", {}))
    session_mac = initialized.headers["mcp-session-id"].rpartition(".")[2]

    tokens = [code, first.access, first.refresh, second.access, second.refresh]
    tokens += [third.access, third.refresh, kept.access, kept.refresh]
    secrets = [*tokens, pkce.verifier, sealed, nonce, session_mac]
    stored = "\n".join(
        value for rows in (await snapshot(app)).values() for row in rows for value in row
    )
    for secret in secrets:
        for disguise in disguises(secret):
            assert disguise not in stored, (secret, disguise)
    # The scan saw the grants: each code and token is there as its SHA-256.
    for token in tokens:
        assert hashlib.sha256(token.encode()).hexdigest() in stored


async def test_a_signing_keys_private_half_is_stored_only_sealed_to_its_company_and_key(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The private scalar of a company's signing key (frontdesk.tools.identity_tokens) is in no
    column of any table, in any disguise; its sealed form opens only as that company's
    key of that kid, and its public half is what the company's jwks_uri serves."""
    published = (await client.get("/v1/initech/oauth/jwks.json")).json()["keys"]
    async with app.services.database.engine.connect() as connection:
        [row] = (await connection.execute(select(signing_keys))).all()
    box = SecretBox(app.services.settings.data_keys)
    assert row.private_sealed.startswith("fd1.")
    private = orjson.loads(
        box.open(row.private_sealed, f"frontdesk/signing-key\x00initech\x00{row.kid}")
    )
    scalar = private["d"]
    stored = "\n".join(
        value for rows in (await snapshot(app)).values() for row in rows for value in row
    )
    raw = base64.urlsafe_b64decode(scalar + "=" * (-len(scalar) % 4))
    for disguise in [*disguises(scalar), raw.hex(), base64.b64encode(raw).decode()[:24]]:
        assert disguise not in stored, disguise
    assert published == [row.public_jwk]
    assert "d" not in row.public_jwk
    # Sealed for this company and this key only: copied to another, it does not open.
    for elsewhere in ("acme", "initrode"):
        with pytest.raises(CannotOpen):
            box.open(row.private_sealed, f"frontdesk/signing-key\x00{elsewhere}\x00{row.kid}")
    with pytest.raises(CannotOpen):
        box.open(row.private_sealed, "frontdesk/signing-key\x00initech\x00another-kid")
