"""Each company's signing keys (frontdesk.tools.identity_tokens, store.signing_keys), on SQLite and
PostgreSQL: made once when first needed however many instances race to make it, rotated with
an overlap in which tokens of the old key still verify, and a rotation reaching every
instance within FRONTDESK_COMPANY_CACHE_SECONDS. Every token is checked with PyJWT against
the published key set, as a company's API checks it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import jwt
import orjson
import pytest
from sqlalchemy import func, select

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.domain import Customer
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.signing_keys import KeyAlreadyActive, SigningKeyRepository
from frontdesk.store.tables import signing_keys
from frontdesk.tools.identity_tokens import OVERLAP, IdentityTokens
from tests.conftest import BASE_URL, start_app

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

TENANT = "initech"
AUDIENCE = "https://api.initech.example"
CUSTOMER = Customer(
    "dev:ada@initech.example", "ada@initech.example", "Ada", frozenset({"email", "profile"})
)
DEADLINE = 10.0


def another_instance(app: Frontdesk) -> IdentityTokens:
    """What another instance sharing the database has: its own cache of the keys."""
    settings = app.services.settings
    return IdentityTokens(
        SigningKeyRepository(app.services.database.engine), SecretBox(settings.data_keys), settings
    )


async def key_rows(app: Frontdesk) -> int:
    async with app.services.database.engine.connect() as connection:
        query = select(func.count()).select_from(signing_keys)
        return int((await connection.execute(query)).scalar_one())


def verified(token: str, key_set: bytes) -> dict[str, Any]:
    """The claims, checked as a company's API checks them: against the published keys."""
    keys = jwt.PyJWKSet.from_dict(orjson.loads(key_set))
    key = keys[jwt.get_unverified_header(token)["kid"]]
    claims: dict[str, Any] = jwt.decode(
        token,
        key.key,
        algorithms=["ES256", "EdDSA"],
        audience=AUDIENCE,
        issuer=f"{BASE_URL}/v1/{TENANT}/oauth",
    )
    return claims


def kid_of(token: str) -> str:
    return str(jwt.get_unverified_header(token)["kid"])


async def mint(tokens: IdentityTokens) -> str:
    return await tokens.mint(TENANT, AUDIENCE, CUSTOMER, "client-1", CUSTOMER.scopes)


async def test_instances_racing_to_make_the_first_key_all_use_the_one_that_won(
    app: Frontdesk,
) -> None:
    instances = [another_instance(app) for _ in range(5)]
    key_sets = await asyncio.gather(*(instance.jwks(TENANT) for instance in instances))
    assert await key_rows(app) == 1
    assert len(set(key_sets)) == 1
    [published] = orjson.loads(key_sets[0])["keys"]
    tokens = await asyncio.gather(*(mint(instance) for instance in instances))
    assert {kid_of(token) for token in tokens} == {published["kid"]}


async def test_a_published_key_is_public_only_and_names_its_use(app: Frontdesk) -> None:
    [key] = orjson.loads(await app.services.identity.jwks(TENANT))["keys"]
    assert key["kty"] == "EC"
    assert key["crv"] == "P-256"
    assert key["alg"] == "ES256"
    assert key["use"] == "sig"
    assert "d" not in key
    token = await mint(app.services.identity)
    assert verified(token, await app.services.identity.jwks(TENANT))["sub"] == CUSTOMER.subject


async def test_the_email_is_claimed_only_with_the_email_scope(app: Frontdesk) -> None:
    identity = app.services.identity
    key_set = await identity.jwks(TENANT)
    without = CUSTOMER._replace(email=None, scopes=frozenset({"profile"}))
    claims = verified(await identity.mint(TENANT, AUDIENCE, without, None, without.scopes), key_set)
    assert "email" not in claims
    assert "client_id" not in claims
    assert claims["scope"] == "profile"
    # An email the customer did not grant is not claimed, even if a caller passes one.
    granted_profile = frozenset({"profile"})
    claims = verified(
        await identity.mint(TENANT, AUDIENCE, CUSTOMER, "c", granted_profile), key_set
    )
    assert "email" not in claims
    claims = verified(await mint(identity), key_set)
    assert claims["email"] == "ada@initech.example"
    assert claims["email_verified"] is False
    assert claims["scope"] == "email profile"
    assert claims["client_id"] == "client-1"


async def test_after_a_rotation_new_tokens_use_the_new_key_and_old_ones_still_verify(
    app: Frontdesk,
) -> None:
    identity = app.services.identity
    before = await mint(identity)
    rotated = await another_instance(app).rotate(TENANT)
    assert rotated.retired_previous
    assert rotated.kid != kid_of(before)
    fresh = another_instance(app)
    after = await mint(fresh)
    assert kid_of(after) == rotated.kid
    key_set = await fresh.jwks(TENANT)
    assert [key["kid"] for key in orjson.loads(key_set)["keys"]] == [rotated.kid, kid_of(before)]
    # Both verify against the one key set a gateway fetches now.
    assert verified(before, key_set)["sub"] == verified(after, key_set)["sub"]


async def test_a_retired_key_is_published_for_the_overlap_and_then_no_longer(
    app: Frontdesk,
) -> None:
    first = kid_of(await mint(another_instance(app)))
    now = datetime.now(UTC)
    # Rotated a little less than the overlap ago: the first key is still published.
    second = await another_instance(app).rotate(TENANT, now=now - OVERLAP + timedelta(hours=1))
    kids = [key["kid"] for key in orjson.loads(await another_instance(app).jwks(TENANT))["keys"]]
    assert kids == [second.kid, first]
    # Rotated again: the second key, retired now, stays; the first, retired longer ago than
    # the overlap at this rotation, is gone from the key set and from the table.
    third = await another_instance(app).rotate(TENANT, now=now + timedelta(hours=1))
    kids = [key["kid"] for key in orjson.loads(await another_instance(app).jwks(TENANT))["keys"]]
    assert kids == [third.kid, second.kid]
    assert await key_rows(app) == 2


async def test_a_company_may_choose_eddsa(app: Frontdesk) -> None:
    rotated = await app.services.identity.rotate(TENANT, "EdDSA")
    identity = another_instance(app)
    token = await mint(identity)
    assert jwt.get_unverified_header(token)["alg"] == "EdDSA"
    assert kid_of(token) == rotated.kid
    assert not rotated.retired_previous
    key = orjson.loads(await identity.jwks(TENANT))["keys"][0]
    assert (key["kty"], key["crv"], key["alg"]) == ("OKP", "Ed25519", "EdDSA")
    assert verified(token, await identity.jwks(TENANT))["sub"] == CUSTOMER.subject


async def test_rotations_at_the_same_moment_leave_one_active_key(app: Frontdesk) -> None:
    """Each rotation commits whole or not at all: one that finds the other's key committed
    under its feet fails (KeyAlreadyActive) rather than leaving two keys signing."""
    await app.services.identity.jwks(TENANT)
    outcomes = await asyncio.gather(
        *(another_instance(app).rotate(TENANT) for _ in range(4)), return_exceptions=True
    )
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert all(isinstance(failure, KeyAlreadyActive) for failure in failures), failures
    assert len(failures) < len(outcomes)
    async with app.services.database.engine.connect() as connection:
        query = select(func.count()).where(signing_keys.c.retired_at.is_(None))
        assert (await connection.execute(query)).scalar_one() == 1


async def test_a_rotation_reaches_another_instance_within_the_company_cache_bound(
    make_settings: Callable[..., Settings], database_url: str
) -> None:
    app = await start_app(make_settings(database_url=database_url, company_cache_seconds=0.5))
    try:
        serving = app.services.identity
        old = kid_of(await mint(serving))
        new = (await another_instance(app).rotate(TENANT)).kid
        # Within the bound, the instance may still sign with the old key (still published);
        # past it, with the new one.
        deadline = time.monotonic() + DEADLINE
        signed_with = kid_of(await mint(serving))
        while signed_with != new:
            assert time.monotonic() < deadline, "the rotation did not reach the instance"
            await anyio.sleep(0.05)
            signed_with = kid_of(await mint(serving))
        kids = [key["kid"] for key in orjson.loads(await serving.jwks(TENANT))["keys"]]
        assert kids == [new, old]
    finally:
        await app.services.stop()
