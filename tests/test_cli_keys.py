"""`frontdesk keys create`, `list` and `revoke`, against the database a running app uses:
the key is printed once, on the last line; only its hash is kept; a revoked key no longer
authenticates."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime

import anyio
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.config import Settings
from frontdesk.store.admin_keys import AdminKeys
from frontdesk.store.audit import AuditLog
from frontdesk.store.tables import admin_keys

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def settings(
    make_settings: Callable[..., Settings], sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", sqlite_url)
    return make_settings(database_url=sqlite_url)


async def command(*arguments: str) -> Result:
    invoke = functools.partial(CliRunner().invoke, main, list(arguments))
    return await anyio.to_thread.run_sync(invoke)


async def test_a_company_key_is_printed_once_and_only_its_hash_is_kept(app: Frontdesk) -> None:
    made = await command("keys", "create", "--company", "initech", "--name", "billing sync")
    assert made.exit_code == 0, made.output
    secret = made.stdout.splitlines()[-1]
    assert secret.startswith("fdk_co_")
    assert len(secret) >= 7 + 43

    async with app.services.database.engine.connect() as connection:
        stored = (await connection.execute(select(admin_keys))).one()
    assert stored.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in repr(tuple(stored))

    listed = await command("keys", "list")
    assert listed.exit_code == 0, listed.output
    [line] = [row.split("\t") for row in listed.stdout.splitlines()]
    assert line[:4] == [stored.key_id, "company", "initech", "billing sync"]
    assert line[5:] == ["-", "-"]  # never used, not revoked
    assert secret not in listed.output

    key = await AdminKeys(app.services.database.engine).authenticate(secret, datetime.now(UTC))
    assert key is not None
    assert key.tenant_key == "initech"
    [event] = await AuditLog(app.services.database.engine).list("initech")
    assert (event.event, event.detail) == ("admin_key_created", {"key_id": stored.key_id})


async def test_an_operator_key_manages_every_company(app: Frontdesk) -> None:
    made = await command("keys", "create", "--operator")
    assert made.exit_code == 0, made.output
    secret = made.stdout.splitlines()[-1]
    assert secret.startswith("fdk_op_")
    key = await AdminKeys(app.services.database.engine).authenticate(secret, datetime.now(UTC))
    assert key is not None
    assert key.tenant_key is None
    assert key.may_manage("initech")
    assert key.may_manage("acme")


async def test_a_revoked_key_no_longer_authenticates(app: Frontdesk) -> None:
    secret = (await command("keys", "create", "--company", "acme")).stdout.splitlines()[-1]
    [line] = (await command("keys", "list")).stdout.splitlines()
    key_id = line.split("\t")[0]

    revoked = await command("keys", "revoke", key_id)
    assert (revoked.exit_code, revoked.stdout) == (0, f"{key_id}: revoked\n")
    again = await command("keys", "revoke", key_id)
    assert (again.exit_code, again.stdout) == (0, f"{key_id}: already revoked\n")

    keys = AdminKeys(app.services.database.engine)
    assert await keys.authenticate(secret, datetime.now(UTC)) is None
    [line] = (await command("keys", "list")).stdout.splitlines()
    assert line.split("\t")[6] != "-"
    events = [event.event for event in await AuditLog(app.services.database.engine).list("acme")]
    assert events == ["admin_key_revoked", "admin_key_created"]


async def test_what_keys_refuses(app: Frontdesk) -> None:
    unknown_company = await command("keys", "create", "--company", "nosuch")
    assert unknown_company.exit_code == 2
    assert "no company has the tenant key 'nosuch'" in unknown_company.output
    neither = await command("keys", "create")
    both = await command("keys", "create", "--operator", "--company", "acme")
    for result in (neither, both):
        assert result.exit_code == 2
        assert "exactly one of --operator and --company" in result.output
    unknown_key = await command("keys", "revoke", "key_0000000000000000")
    assert unknown_key.exit_code == 2
    assert "no admin key has the id" in unknown_key.output
    assert (await command("keys", "list")).stdout == ""
