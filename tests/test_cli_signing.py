"""`frontdesk keys rotate-signing`, against the database a running app uses: the new key is
published beside the old one, the app signs with it from its next read of the keys, and a
company that does not exist is a usage error; deleting a company deletes its keys. On
SQLite and PostgreSQL."""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
import httpx
import jwt
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.config import Settings
from frontdesk.domain import Customer
from frontdesk.store.tables import signing_keys
from tests.conftest import COMPANIES_FILE

pytestmark = [pytest.mark.anyio]

JWKS = "/v1/initech/oauth/jwks.json"
CUSTOMER = Customer("dev:ada@initech.example", None, None, frozenset({"profile"}))


@pytest.fixture
def settings(
    make_settings: Callable[..., Settings], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The app re-reads the keys at every use; the command gets the same database."""
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", database_url)
    return make_settings(database_url=database_url, company_cache_seconds=0)


async def command(*arguments: str) -> Result:
    invoke = functools.partial(CliRunner().invoke, main, list(arguments))
    return await anyio.to_thread.run_sync(invoke)


async def kids(client: httpx.AsyncClient) -> list[str]:
    response = await client.get(JWKS)
    assert response.status_code == 200
    return [key["kid"] for key in response.json()["keys"]]


async def signing_kid(app: Frontdesk) -> str:
    token = await app.services.identity.mint(
        "initech", "https://api.example", CUSTOMER, None, CUSTOMER.scopes
    )
    return str(jwt.get_unverified_header(token)["kid"])


async def test_a_rotation_publishes_the_new_key_beside_the_old_and_signs_with_it(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    [first] = await kids(client)
    rotated = await command("keys", "rotate-signing", "initech")
    assert rotated.exit_code == 0, rotated.output
    lines = rotated.output.splitlines()
    second = lines[0].split()[5]
    assert second != first
    assert lines == [
        f"company initech signs with key {second} (ES256) from now on",
        "the previous key stays published for 24 hours",
    ]
    assert await kids(client) == [second, first]
    assert await signing_kid(app) == second


async def test_a_company_may_rotate_to_eddsa_before_its_first_call(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    rotated = await command("keys", "rotate-signing", "initech", "--algorithm", "EdDSA")
    assert rotated.exit_code == 0, rotated.output
    # No key signed before: there is none to keep published.
    assert "previous" not in rotated.output
    response = await client.get(JWKS)
    [key] = response.json()["keys"]
    assert (key["kty"], key["alg"]) == ("OKP", "EdDSA")
    assert await signing_kid(app) == key["kid"]


async def test_a_company_that_does_not_exist_is_a_usage_error(app: Frontdesk) -> None:
    result = await command("keys", "rotate-signing", "nobody")
    assert result.exit_code == 2
    assert "no company has the tenant key 'nobody'" in result.output


async def test_an_algorithm_frontdesk_does_not_sign_with_is_refused(app: Frontdesk) -> None:
    result = await command("keys", "rotate-signing", "initech", "--algorithm", "HS256")
    assert result.exit_code == 2
    assert "HS256" in result.output


async def test_deleting_a_company_deletes_its_keys(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A company applied again under a deleted one's key signs with new keys: the old ones,
    and every token they signed, are not its."""
    [first] = await kids(client)
    assert (await command("keys", "rotate-signing", "initech")).exit_code == 0
    old = {first, *await kids(client)}
    deleted = await command("companies", "delete", "initech", "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert "signing_keys removed: 2" in deleted.output.splitlines()
    async with app.services.database.engine.connect() as connection:
        query = select(func.count()).where(signing_keys.c.tenant_key == "initech")
        assert (await connection.execute(query)).scalar_one() == 0
    applied = await command("companies", "apply", str(COMPANIES_FILE))
    assert applied.exit_code == 0, applied.output
    [new] = await kids(client)
    assert new not in old
