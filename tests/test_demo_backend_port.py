"""One setting, FRONTDESK_DEMO_BACKEND_PORT, names the demo backend's port: the seeded demo
company calls it there, and examples/backend.py and scripts/serve listen there."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import click
import pytest

from frontdesk.cli import operations
from frontdesk.cli.common import settings as cli_settings
from frontdesk.companies.seed import demo_companies
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database
from tests.conftest import ROOT

BACKEND_TOOLS = {"loyalty_points", "cancel_order"}


def backend_urls(definition: dict[str, Any]) -> dict[str, str]:
    return {
        tool["name"]: tool["provider"]["url"]
        for tool in definition["tools"]
        if tool["provider"]["type"] == "http"
    }


def test_the_setting_is_read_from_the_environment_and_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FRONTDESK_DEMO_BACKEND_PORT", "9123")
    assert Settings().demo_backend_port == 9123
    monkeypatch.delenv("FRONTDESK_DEMO_BACKEND_PORT")
    assert Settings().demo_backend_port == 8001
    monkeypatch.setenv("FRONTDESK_DEMO_BACKEND_PORT", "70000")
    with pytest.raises(click.ClickException, match="FRONTDESK_DEMO_BACKEND_PORT"):
        cli_settings()


def test_the_demo_file_is_moved_to_the_port() -> None:
    [moved] = demo_companies(9123).companies
    [default] = demo_companies().companies
    moved_urls = backend_urls(moved.model_dump(mode="json"))
    assert moved_urls == dict.fromkeys(BACKEND_TOOLS, "http://127.0.0.1:9123/tools")
    assert backend_urls(default.model_dump(mode="json")) == dict.fromkeys(
        BACKEND_TOOLS, "http://127.0.0.1:8001/tools"
    )
    # Nothing else of the company changes.
    assert moved.model_copy(update={"tools": default.tools}) == default


def serve_and_read_backend_urls(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Prepare the database as ``frontdesk serve`` does (no server starts), then read the
    demo company's backend URLs as stored."""
    monkeypatch.setattr(operations, "serve_http", lambda *_args, **_options: None)
    monkeypatch.setenv("FRONTDESK_AUTO_MIGRATE", "true")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "true")
    operations.serve(settings, host="127.0.0.1", port=0, workers=1)

    async def stored() -> dict[str, Any]:
        database = Database(settings.database_url)
        try:
            repository = CompanyRepository(database.engine)
            demo = await repository.get("demo")
            assert demo is not None
            return repository.opened(demo)
        finally:
            await database.close()

    return backend_urls(anyio.run(stored))


def test_serve_seeds_the_demo_company_with_the_port(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``frontdesk serve`` stores for the demo company calls the configured port."""
    settings = make_settings(seed_demo=True, demo_backend_port=9123)
    assert serve_and_read_backend_urls(settings, monkeypatch) == dict.fromkeys(
        BACKEND_TOOLS, "http://127.0.0.1:9123/tools"
    )


def test_a_demo_company_seeded_before_follows_the_port(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded on 8001, then served with the backend on 9124 (``./scripts/serve --port
    9123``): the demo company calls 9124, not whatever holds 8001 now."""
    first = make_settings(seed_demo=True, demo_backend_port=8001)
    assert set(serve_and_read_backend_urls(first, monkeypatch).values()) == {
        "http://127.0.0.1:8001/tools"
    }
    moved = first.model_copy(update={"demo_backend_port": 9124})
    assert serve_and_read_backend_urls(moved, monkeypatch) == dict.fromkeys(
        BACKEND_TOOLS, "http://127.0.0.1:9124/tools"
    )


def test_scripts_serve_passes_the_same_setting_to_the_backend() -> None:
    """scripts/serve names no port of its own: the backend gets the setting's value, by
    default the one after the service's (tests/live/test_scripts_serve.py runs it)."""
    script = (ROOT / "scripts" / "serve").read_text()
    assert 'FRONTDESK_DEMO_BACKEND_PORT="${FRONTDESK_DEMO_BACKEND_PORT:-$((port + 1))}"' in script
    assert 'python examples/backend.py "$FRONTDESK_DEMO_BACKEND_PORT"' in script
    code = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    assert not any("8001" in line for line in code)
    assert os.access(ROOT / "scripts" / "serve", os.X_OK)
