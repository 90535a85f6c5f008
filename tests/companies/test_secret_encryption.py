"""Company secrets at rest: sealed in the stored row under FRONTDESK_DATA_KEYS, bound to their
company and field, opened when the company is loaded, on SQLite and PostgreSQL
(secret_box.py, company_secrets.py, store/companies.py)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select, text, update
from structlog.typing import EventDict

from frontdesk.companies import registry as registry_module
from frontdesk.companies.files import apply_companies, parse_companies
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.errors import ConfigurationError
from frontdesk.sealing.company_secrets import SecretsUnreadable, redact_secrets
from frontdesk.sealing.secret_box import CannotOpen, KeyNotConfigured, SecretBox
from frontdesk.store.companies import ApplyOutcome, CompanyRepository
from frontdesk.store.database import Database
from frontdesk.store.tables import companies
from tests.support.logs import captured_logs
from tests.support.tool_annotations import read_only

pytestmark = pytest.mark.anyio

OLD_KEY = "old-data-key-for-the-tests-0123456789abcdef"
NEW_KEY = "new-data-key-for-the-tests-0123456789abcdef"
CLIENT_SECRET = "oidc-client-secret-ZQ7x9PLk"
BACKEND_SECRET = "backend-signing-secret-W4rT8nBv"
OTHER_SECRET = "globex-signing-secret-Hq2mY6cJ"


def company(tenant_key: str, backend_secret: str = BACKEND_SECRET) -> dict[str, Any]:
    return {
        "tenant_key": tenant_key,
        "name": tenant_key.title(),
        "signin": {
            "login": {
                "type": "oidc",
                "issuer": "https://login.example",
                "client_id": f"frontdesk-{tenant_key}",
                "client_secret": CLIENT_SECRET,
            }
        },
        "tools": [
            {
                "name": "lookup",
                "description": "Looks an order up.",
                "annotations": read_only("Look an order up"),
                "provider": {
                    "type": "http",
                    "url": "https://backend.example/tools",
                    "secret": backend_secret,
                },
            }
        ],
    }


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await database.migrate()
    try:
        yield database
    finally:
        await database.close()


def repository(database: Database, *keys: str) -> CompanyRepository:
    return CompanyRepository(database.engine, SecretBox(keys or [NEW_KEY]))


async def apply(repo: CompanyRepository, *documents: dict[str, Any]) -> dict[str, ApplyOutcome]:
    return await apply_companies(repo, parse_companies({"companies": list(documents)}))


async def raw_row(database: Database, tenant_key: str) -> str:
    """The stored definition as the database holds it, as text."""
    query = text("SELECT CAST(definition AS TEXT) FROM companies WHERE tenant_key = :key")
    async with database.engine.connect() as connection:
        return str((await connection.execute(query, {"key": tenant_key})).scalar_one())


async def stored_document(database: Database, tenant_key: str) -> dict[str, Any]:
    query = select(companies.c.definition).where(companies.c.tenant_key == tenant_key)
    async with database.engine.connect() as connection:
        document: dict[str, Any] = (await connection.execute(query)).scalar_one()
    return document


async def store_document(database: Database, tenant_key: str, document: dict[str, Any]) -> None:
    """Write a row by hand, as a restored backup or a hand edit would."""
    query = update(companies).where(companies.c.tenant_key == tenant_key)
    async with database.engine.begin() as connection:
        await connection.execute(query.values(definition=document))


def registry_for(
    repo: CompanyRepository, make_settings: Callable[..., Settings]
) -> CompanyRegistry:
    return CompanyRegistry(repo, make_settings(company_cache_seconds=0))


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EventDict]]:
    with captured_logs(monkeypatch, registry_module) as logs:
        yield logs


# The box -----------------------------------------------------------------------------------


def test_a_sealed_value_opens_only_with_its_associated_data() -> None:
    box = SecretBox([NEW_KEY])
    sealed = box.seal("s3cret", "acme/field")
    assert "s3cret" not in sealed
    assert box.open(sealed, "acme/field") == "s3cret"
    with pytest.raises(CannotOpen):
        box.open(sealed, "globex/field")
    # Each sealing draws a fresh nonce: equal secrets do not look equal at rest.
    assert box.seal("s3cret", "acme/field") != sealed


def test_the_first_key_seals_and_every_key_opens() -> None:
    sealed_old = SecretBox([OLD_KEY]).seal("s3cret", "here")
    rotated = SecretBox([NEW_KEY, OLD_KEY])
    assert rotated.open(sealed_old, "here") == "s3cret"
    assert rotated.key_id(rotated.seal("s3cret", "here")) == SecretBox([NEW_KEY]).current_key_id
    with pytest.raises(KeyNotConfigured):
        SecretBox([NEW_KEY]).open(sealed_old, "here")


@pytest.mark.parametrize("value", ["", "fd1.x", "fd1.abc.!!!", "fd1.abc.AAAA", "é" * 5])
def test_a_malformed_value_does_not_open(value: str) -> None:
    with pytest.raises((CannotOpen, KeyNotConfigured)):
        SecretBox([NEW_KEY]).open(value, "here")


def test_production_refuses_to_start_without_data_keys() -> None:
    """As with the secret keys: the development data key is for development only."""
    strong = "k" * 40
    base = {"env": "production", "base_url": "https://eu.frontdesk.example"}
    with pytest.raises(ConfigurationError, match="FRONTDESK_DATA_KEYS is not set"):
        Settings(**base, secret_keys=[strong])
    with pytest.raises(ConfigurationError, match="every data key needs 32 characters"):
        Settings(**base, secret_keys=[strong], data_keys=["short"])
    assert Settings(**base, secret_keys=[strong], data_keys=f"{strong}, {OLD_KEY}").data_keys == [
        strong,
        OLD_KEY,
    ]


# At rest -----------------------------------------------------------------------------------


async def test_the_stored_row_holds_no_secret_in_clear(database: Database) -> None:
    """Both secrets are sealed in the row; loading opens them again."""
    repo = repository(database)
    await apply(repo, company("acme"))
    row = await raw_row(database, "acme")
    assert CLIENT_SECRET not in row
    assert BACKEND_SECRET not in row
    assert "fd1." in row
    stored = await repo.get("acme")
    assert stored is not None
    opened = repo.opened(stored)
    assert opened["signin"]["login"]["client_secret"] == CLIENT_SECRET
    assert opened["tools"][0]["provider"]["secret"] == BACKEND_SECRET


async def test_the_same_file_twice_is_unchanged_though_each_sealing_differs(
    database: Database,
) -> None:
    repo = repository(database)
    assert await apply(repo, company("acme")) == {"acme": ApplyOutcome.CREATED}
    before = await raw_row(database, "acme")
    assert await apply(repo, company("acme")) == {"acme": ApplyOutcome.UNCHANGED}
    assert await raw_row(database, "acme") == before
    changed = company("acme", backend_secret="a-new-backend-secret-0123")
    assert await apply(repo, changed) == {"acme": ApplyOutcome.UPDATED}


async def test_rotation_opens_old_rows_and_the_next_apply_seals_under_the_new_key(
    database: Database, make_settings: Callable[..., Settings]
) -> None:
    """New key first, old key second: served as before; re-applied, sealed under the new key,
    at the same revision; after that the old key can go."""
    await apply(repository(database, OLD_KEY), company("acme"))
    rotated = repository(database, NEW_KEY, OLD_KEY)
    served = await registry_for(rotated, make_settings).active("acme")
    assert served is not None
    assert served.definition.tools[0].provider.secret == BACKEND_SECRET  # type: ignore[union-attr]
    assert await apply(rotated, company("acme")) == {"acme": ApplyOutcome.RESEALED}
    assert await apply(rotated, company("acme")) == {"acme": ApplyOutcome.UNCHANGED}
    stored = await rotated.get("acme")
    assert stored is not None
    assert stored.revision == 1
    new_only = repository(database, NEW_KEY)
    assert new_only.opened(stored)["signin"]["login"]["client_secret"] == CLIENT_SECRET


async def test_a_key_no_longer_configured_is_a_named_error_and_serves_nothing(
    database: Database, make_settings: Callable[..., Settings], logged: list[EventDict]
) -> None:
    await apply(repository(database, OLD_KEY), company("acme"))
    without_old = repository(database, NEW_KEY)
    assert await registry_for(without_old, make_settings).active("acme") is None
    [event] = [line for line in logged if line["event"] == "company_secrets_unreadable"]
    assert event["error"] == (
        "company 'acme': its secrets were encrypted with a key not in FRONTDESK_DATA_KEYS"
    )
    # Applying the file again with the new key replaces what could not be read.
    assert await apply(without_old, company("acme")) == {"acme": ApplyOutcome.UPDATED}
    assert await registry_for(without_old, make_settings).active("acme") is not None


async def test_a_secret_moved_to_another_companys_row_does_not_open(
    database: Database, make_settings: Callable[..., Settings], logged: list[EventDict]
) -> None:
    """Same key, but the associated data names acme: in globex's row it fails, and globex is
    not served with acme's secret."""
    repo = repository(database)
    await apply(repo, company("acme"), company("globex", backend_secret=OTHER_SECRET))
    acme = await stored_document(database, "acme")
    globex = await stored_document(database, "globex")
    pasted = copy.deepcopy(globex)
    pasted["tools"][0]["provider"]["secret"] = acme["tools"][0]["provider"]["secret"]
    await store_document(database, "globex", pasted)
    stored = await repo.get("globex")
    assert stored is not None
    with pytest.raises(SecretsUnreadable, match="company 'globex': its tools"):
        repo.opened(stored)
    assert await registry_for(repo, make_settings).active("globex") is None
    assert await registry_for(repo, make_settings).active("acme") is not None
    [event] = [line for line in logged if line["event"] == "company_secrets_unreadable"]
    assert event["tenant"] == "globex"


async def test_a_secret_moved_to_another_field_does_not_open(database: Database) -> None:
    repo = repository(database)
    await apply(repo, company("acme"))
    document = await stored_document(database, "acme")
    login = document["signin"]["login"]
    login["client_secret"] = document["tools"][0]["provider"]["secret"]
    await store_document(database, "acme", document)
    stored = await repo.get("acme")
    assert stored is not None
    with pytest.raises(SecretsUnreadable, match=r"signin\.login\.client_secret does not open"):
        repo.opened(stored)


async def test_a_row_stored_in_clear_still_loads_and_the_next_apply_seals_it(
    database: Database, make_settings: Callable[..., Settings]
) -> None:
    """Rows written before sealing: read as they are, sealed by the next apply."""
    repo = repository(database)
    await apply(repo, company("acme"))
    clear = parse_companies({"companies": [company("acme")]}).companies[0]
    await store_document(database, "acme", clear.model_dump(mode="json", by_alias=True))
    assert BACKEND_SECRET in await raw_row(database, "acme")
    served = await registry_for(repo, make_settings).active("acme")
    assert served is not None
    assert await apply(repo, company("acme")) == {"acme": ApplyOutcome.RESEALED}
    row = await raw_row(database, "acme")
    assert BACKEND_SECRET not in row
    assert CLIENT_SECRET not in row


async def test_redaction_hides_sealed_and_clear_secrets_alike(database: Database) -> None:
    repo = repository(database)
    await apply(repo, company("acme"))
    document = await stored_document(database, "acme")
    redacted = redact_secrets(document)
    assert redacted["signin"]["login"]["client_secret"] == "<redacted>"
    assert redacted["tools"][0]["provider"]["secret"] == "<redacted>"
    clear = redact_secrets(company("acme"))
    assert CLIENT_SECRET not in str(clear)
    assert BACKEND_SECRET not in str(clear)
    # Applied back, the placeholder is refused rather than taken for the secret.
    with pytest.raises(ConfigurationError, match="placeholder"):
        parse_companies({"companies": [redacted]})
