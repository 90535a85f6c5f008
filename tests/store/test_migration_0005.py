"""Migration 0005 on a database already in use: the grants issued before it keep working,
tokens spent before it read as reuse, and every client id column holds a URL's length."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from frontdesk.companies.definition import SigninSetup
from frontdesk.config import DEV_DATA_KEY
from frontdesk.oauth.credentials import Kind, digest, mint
from frontdesk.oauth.errors import InvalidGrant
from frontdesk.oauth.forms import RefreshTokenRequest
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.storage import GrantStorage
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.database import MIGRATIONS, Database
from frontdesk.store.grants import GrantRepository
from frontdesk.store.tables import (
    CLIENT_ID_LENGTH,
    access_tokens,
    audit_events,
    authorization_codes,
    customers,
    oauth_clients,
    refresh_tokens,
    token_families,
)

pytestmark = pytest.mark.anyio

TENANT = "initech"


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """This module's tests begin where a deployment does: a database without any schema
    (not a copy of the session's migrated template)."""
    return empty_database_url


CLIENT = "fdc_registered_before_0005"
RETRYING_SETUP = SigninSetup.model_validate({"login": {"type": "dev"}, "refresh_retry_seconds": 30})
BOX = SecretBox([DEV_DATA_KEY])
# A Client ID Metadata Document's URL, as long as a client id may be.
URL_CLIENT = "https://client.example/" + "m" * (CLIENT_ID_LENGTH - len("https://client.example/"))


def migration_to(revision: str, *, down: bool = False) -> Callable[[Connection], None]:
    """What Database.migrate runs, to a revision of the test's choosing."""

    def migrate(connection: Connection) -> None:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)

    return migrate


async def at_0004(url: str) -> AsyncIterator[Database]:
    database = Database(url)
    try:
        async with database.engine.begin() as connection:
            await connection.run_sync(migration_to("0004"))
        yield database
    finally:
        await database.close()


@pytest.fixture
async def old_database(database_url: str) -> AsyncIterator[Database]:
    """A database at revision 0004, as a deployment before this change left it."""
    async for database in at_0004(database_url):
        yield database


def storage_of(database: Database) -> GrantStorage:
    """The grant storage the application builds for this backend."""
    if database.driver_pool is None or database.lookup_pool is None:
        return GrantRepository(database.engine)
    from frontdesk.store.grants_postgres import PostgresGrantRepository

    assert database.grant_changes is not None
    return PostgresGrantRepository(
        database.engine, database.driver_pool, database.lookup_pool, database.grant_changes
    )


async def issue_as_0004_did(database: Database, *, spent: bool) -> tuple[str, str]:
    """A family with one pair, written with 0004's columns only; its tokens in clear."""
    now = datetime.now(UTC)
    access, refresh = mint(Kind.ACCESS), mint(Kind.REFRESH)
    async with database.engine.begin() as connection:
        customer = (
            await connection.execute(
                insert(customers)
                .values(
                    tenant_key=TENANT,
                    subject=f"dev:{refresh[-8:]}@initech.example",
                    created_at=now,
                    updated_at=now,
                )
                .returning(customers.c.id)
            )
        ).scalar_one()
        family = (
            await connection.execute(
                insert(token_families)
                .values(
                    tenant_key=TENANT,
                    client_id=CLIENT,
                    customer_id=customer,
                    scope="profile email",
                    code_hash=digest(mint(Kind.CODE)),
                    created_at=now,
                )
                .returning(token_families.c.id)
            )
        ).scalar_one()
        await connection.execute(
            insert(access_tokens).values(
                token_hash=digest(access),
                family_id=family,
                expires_at=now + timedelta(hours=1),
                created_at=now,
            )
        )
        await connection.execute(
            insert(refresh_tokens).values(
                token_hash=digest(refresh),
                family_id=family,
                expires_at=now + timedelta(days=30),
                used_at=now - timedelta(seconds=5) if spent else None,
                created_at=now,
            )
        )
    return access, refresh


async def store_url_client_ids(database: Database) -> None:
    """A client id of 2,048 characters in every table that holds one."""
    now = datetime.now(UTC)
    async with database.engine.begin() as connection:
        await connection.execute(
            insert(oauth_clients).values(
                client_id=URL_CLIENT,
                tenant_key=TENANT,
                redirect_uris=["https://client.example/callback"],
                metadata={},
                created_at=now,
            )
        )
        customer = (
            await connection.execute(
                insert(customers)
                .values(tenant_key=TENANT, subject="dev:url", created_at=now, updated_at=now)
                .returning(customers.c.id)
            )
        ).scalar_one()
        await connection.execute(
            insert(authorization_codes).values(
                code_hash=digest(mint(Kind.CODE)),
                tenant_key=TENANT,
                client_id=URL_CLIENT,
                customer_id=customer,
                redirect_uri="https://client.example/callback",
                code_challenge="c" * 43,
                scope="email",
                expires_at=now,
                created_at=now,
            )
        )
        await connection.execute(
            insert(token_families).values(
                tenant_key=TENANT,
                client_id=URL_CLIENT,
                customer_id=customer,
                scope="email",
                code_hash="h" * 64,
                created_at=now,
            )
        )
        await connection.execute(
            insert(audit_events).values(
                tenant_key=TENANT,
                occurred_at=now,
                event="client_registered",
                client_id=URL_CLIENT,
                detail={},
            )
        )


async def client_ids_in(database: Database, table: Table) -> list[str]:
    async with database.engine.connect() as connection:
        rows = await connection.execute(select(table.c.client_id).distinct())
        return [str(client_id) for client_id in rows.scalars()]


async def test_grants_issued_before_0005_keep_working(old_database: Database) -> None:
    """A pair issued at 0004: after the migrations its access token is accepted and its
    refresh token rotates, and where the company chose a retry window, a retry gets the
    new pair again."""
    access, refresh = await issue_as_0004_did(old_database, spent=False)

    await old_database.migrate()

    grants = Grants(storage_of(old_database), BOX)
    assert await grants.bearer(TENANT, access) is not None
    request = RefreshTokenRequest(grant_type="refresh_token", refresh_token=refresh)
    rotated = await grants.refresh(TENANT, CLIENT, RETRYING_SETUP, request)
    retried = await grants.refresh(TENANT, CLIENT, RETRYING_SETUP, request)
    assert retried["access_token"] == rotated["access_token"]
    assert retried["refresh_token"] == rotated["refresh_token"]
    assert await grants.bearer(TENANT, retried["access_token"]) is not None


async def test_a_token_spent_before_0005_is_reuse(old_database: Database) -> None:
    """A token spent at 0004 has no record of the pair it produced, and no pair kept:
    presented again, it ends the family as before, even where the company chose a retry
    window."""
    access, refresh = await issue_as_0004_did(old_database, spent=True)

    await old_database.migrate()

    grants = Grants(storage_of(old_database), BOX)
    with pytest.raises(InvalidGrant):
        await grants.refresh(
            TENANT,
            CLIENT,
            RETRYING_SETUP,
            RefreshTokenRequest(grant_type="refresh_token", refresh_token=refresh),
        )
    async with old_database.engine.connect() as connection:
        revoked = (await connection.execute(select(token_families.c.revoked_at))).scalar()
    assert revoked is not None
    assert await grants.bearer(TENANT, access) is None


async def test_every_client_id_column_holds_a_url_after_0005(old_database: Database) -> None:
    """A 2,048-character client id is stored whole in each client_id column (PostgreSQL
    refused it at 0004; SQLite never enforced a length)."""
    if old_database.backend == "postgresql":
        with pytest.raises(DBAPIError):
            await store_url_client_ids(old_database)

    await old_database.migrate()
    await store_url_client_ids(old_database)

    for table in (oauth_clients, authorization_codes, token_families, audit_events):
        assert await client_ids_in(old_database, table) == [URL_CLIENT]


async def test_a_first_use_is_recorded_after_0005(old_database: Database) -> None:
    """The migrated access_tokens table takes the mark of a first use."""
    access, _refresh = await issue_as_0004_did(old_database, spent=False)
    await old_database.migrate()

    assert await Grants(storage_of(old_database), BOX).bearer(TENANT, access) is not None

    async with old_database.engine.connect() as connection:
        used_at = (
            await connection.execute(
                select(access_tokens.c.used_at).where(access_tokens.c.token_hash == digest(access))
            )
        ).scalar()
    assert used_at is not None


async def test_0005_downgrades_and_upgrades_again(old_database: Database) -> None:
    """Down to 0004 and up again, with grants stored: the schema round-trips."""
    await issue_as_0004_did(old_database, spent=False)
    await old_database.migrate()
    async with old_database.engine.begin() as connection:
        await connection.run_sync(migration_to("0004", down=True))

    await old_database.migrate()

    async with old_database.engine.connect() as connection:
        rows = (await connection.execute(select(refresh_tokens.c.successor_hash))).all()
    assert rows == [(None,)]
