"""Fixtures of the admin API's tests: keys made as `frontdesk keys create` makes them, and
requests sent with one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.store.admin_keys import AdminKeys

MakeKey = Callable[..., Awaitable[str]]


@pytest.fixture
def make_key(app: Frontdesk) -> MakeKey:
    """A new key's secret: an operator's, or ``company``'s."""

    async def make(company: str | None = None, name: str | None = None) -> str:
        keys = AdminKeys(app.services.database.engine)
        return (await keys.create(company, name, datetime.now(UTC))).secret

    return make


@pytest.fixture
async def operator_key(make_key: MakeKey) -> str:
    return await make_key()


async def admin(
    client: httpx.AsyncClient, method: str, path: str, key: str | None, **options: Any
) -> httpx.Response:
    """A request to /admin/v1``path`` with ``key`` as its bearer (none when None)."""
    headers = dict(options.pop("headers", {}))
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return await client.request(method, f"/admin/v1{path}", headers=headers, **options)
