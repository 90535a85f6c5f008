"""Applying companies: idempotent, all-or-nothing, revisioned, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from frontdesk.cli import operations
from frontdesk.companies.files import apply_companies, parse_companies
from frontdesk.config import Settings
from frontdesk.errors import ConfigurationError
from frontdesk.store.companies import ApplyOutcome, CompanyRepository
from frontdesk.store.database import Database

# Explicit, so that anyio keeps the database_url parametrization (the conftest's automatic
# marking comes after it and would replace each backend's test with a single one).
pytestmark = pytest.mark.anyio

CREATED, UPDATED, UNCHANGED = ApplyOutcome.CREATED, ApplyOutcome.UPDATED, ApplyOutcome.UNCHANGED


def document() -> dict[str, Any]:
    echo = {
        "name": "echo",
        "description": "Repeats text.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {
            "title": "Echo",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        "timeout": 2.5,
        "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
    }
    return {
        "companies": [
            {"tenant_key": "acme", "name": "Acme Corp", "tools": [echo]},
            {"tenant_key": "globex", "name": "Globex", "region": "us"},
        ]
    }


@pytest.fixture
def repository(database: Database) -> CompanyRepository:
    return CompanyRepository(database.engine)


async def apply(repository: CompanyRepository, doc: dict[str, Any]) -> dict[str, ApplyOutcome]:
    return await apply_companies(repository, parse_companies(doc))


async def revisions(repository: CompanyRepository) -> dict[str, int]:
    return {stored.tenant_key: stored.revision for stored in await repository.all()}


async def test_a_new_file_creates_every_company_at_revision_one(
    repository: CompanyRepository,
) -> None:
    """The first apply creates each company, at revision 1."""
    assert await apply(repository, document()) == {"acme": CREATED, "globex": CREATED}
    assert await revisions(repository) == {"acme": 1, "globex": 1}


async def test_the_same_file_twice_changes_nothing(repository: CompanyRepository) -> None:
    """Applying an unchanged file again reports every company unchanged and writes nothing."""
    await apply(repository, document())
    before = await repository.all()
    assert await apply(repository, document()) == {"acme": UNCHANGED, "globex": UNCHANGED}
    assert await repository.all() == before


async def test_a_changed_company_is_updated_and_its_revision_increments(
    repository: CompanyRepository,
) -> None:
    """Only the company that changed is updated; its revision goes up by one each time."""
    await apply(repository, document())
    changed = document()
    changed["companies"][0]["name"] = "Acme Anvils"
    assert await apply(repository, changed) == {"acme": UPDATED, "globex": UNCHANGED}
    changed["companies"][0]["tools"][0]["timeout"] = 5
    assert await apply(repository, changed) == {"acme": UPDATED, "globex": UNCHANGED}
    assert await revisions(repository) == {"acme": 3, "globex": 1}
    stored = await repository.get("acme")
    assert stored is not None
    assert stored.definition["name"] == "Acme Anvils"


async def test_an_update_moves_updated_at(repository: CompanyRepository) -> None:
    """updated_at records the last change, not the last apply."""
    await apply(repository, document())
    first = await repository.get("acme")
    await apply(repository, document())
    unchanged = await repository.get("acme")
    changed = document()
    changed["companies"][0]["instructions"] = "Sell anvils."
    await apply(repository, changed)
    updated = await repository.get("acme")
    assert first is not None
    assert unchanged is not None
    assert updated is not None
    assert unchanged.updated_at == first.updated_at
    assert updated.updated_at > first.updated_at


async def test_a_file_adding_a_company_creates_only_that_one(
    repository: CompanyRepository,
) -> None:
    """Companies already stored stay unchanged when a new one joins the file."""
    await apply(repository, document())
    grown = document()
    grown["companies"].append({"tenant_key": "initech", "name": "Initech"})
    assert await apply(repository, grown) == {
        "acme": UNCHANGED,
        "globex": UNCHANGED,
        "initech": CREATED,
    }


async def test_the_stored_definition_is_the_validated_document(
    repository: CompanyRepository,
) -> None:
    """What the store returns is the full validated document, defaults filled in."""
    await apply(repository, document())
    stored = await repository.get("acme")
    assert stored is not None
    expected = parse_companies(document()).companies[0].model_dump(mode="json", by_alias=True)
    assert stored.definition == expected
    assert stored.definition["tools"][0]["annotations"]["readOnlyHint"] is True


async def test_get_and_all_read_what_was_applied(repository: CompanyRepository) -> None:
    """get finds a company by its key (None for a stranger); all lists them by key."""
    assert await repository.all() == []
    await apply(
        repository, {"companies": [{"tenant_key": "zeta", "name": "Z"}, *document()["companies"]]}
    )
    assert [stored.tenant_key for stored in await repository.all()] == ["acme", "globex", "zeta"]
    assert await repository.get("nobody") is None


async def test_a_failing_write_rolls_back_the_whole_apply(repository: CompanyRepository) -> None:
    """When the second company cannot be written, the first is not written either."""
    await apply(repository, document())
    before = await repository.all()
    good = copy.deepcopy(parse_companies(document()).companies[0].model_dump(mode="json"))
    good["name"] = "Renamed"
    unwritable = {"tenant_key": "initech", "name": "Initech", "bad": object()}
    with pytest.raises(Exception, match="not JSON serializable"):
        await repository.apply([good, unwritable])
    assert await repository.all() == before


async def test_a_file_whose_second_company_is_invalid_writes_nothing(
    database: Database, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """`companies apply` validates the whole file first: one bad company, no writes at all."""
    settings = make_settings(database_url=database.url)
    bad = document()
    bad["companies"][1]["tools"] = [
        {
            "name": "sync",
            "description": "Not async.",
            "provider": {"type": "python", "target": "tests.fixtures.tools:not_async"},
            "annotations": {
                "title": "Sync",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }
    ]
    path = tmp_path / "companies.yaml"
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"companies\[1\]\.tools\[0\]\.provider\.target"):
        await operations.apply_companies_file(settings, path)
    assert await CompanyRepository(database.engine).all() == []


async def test_applying_a_file_through_operations_is_idempotent(
    database: Database, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """The operation the CLI runs reports created, then unchanged, for the same file."""
    settings = make_settings(database_url=database.url)
    path = tmp_path / "companies.yaml"
    path.write_text(yaml.safe_dump(document()), encoding="utf-8")
    assert await operations.apply_companies_file(settings, path) == {
        "acme": CREATED,
        "globex": CREATED,
    }
    assert await operations.apply_companies_file(settings, path) == {
        "acme": UNCHANGED,
        "globex": UNCHANGED,
    }
