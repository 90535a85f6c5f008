"""`frontdesk serve` prepares the database once, before any worker starts."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from frontdesk import operations
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database


def test_serve_migrates_and_seeds_before_workers_and_tells_them_not_to(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers started together would race on migrations and the seed; serve does both first."""
    settings = make_settings(seed_demo=True)
    seen: dict[str, Any] = {}

    def fake_run(*_args: Any, **options: Any) -> None:
        seen["workers"] = options["workers"]
        seen["auto_migrate"] = os.environ.get("FRONTDESK_AUTO_MIGRATE")
        seen["seed_demo"] = os.environ.get("FRONTDESK_SEED_DEMO")

    monkeypatch.setattr("uvicorn.run", fake_run)
    # Set through monkeypatch, so that what serve writes is undone after the test.
    monkeypatch.setenv("FRONTDESK_AUTO_MIGRATE", "true")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "true")
    operations.serve(settings, host="127.0.0.1", port=0, workers=2)

    assert seen == {"workers": 2, "auto_migrate": "false", "seed_demo": "false"}

    async def stored_keys() -> list[str]:
        database = Database(settings.database_url)
        try:
            return [row.tenant_key for row in await CompanyRepository(database.engine).all()]
        finally:
            await database.close()

    assert anyio.run(stored_keys) == ["demo"]
