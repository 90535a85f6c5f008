"""Each admin key is held to FRONTDESK_ADMIN_RATE_LIMIT: past it, 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from frontdesk.config import Settings
from tests.admin_api.conftest import MakeKey, admin

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(admin_rate_limit="3/minute")


async def test_each_key_is_held_to_its_rate_limit(
    client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    """Counted per key; requests with no valid key are counted per client address."""
    first, second = await make_key("acme"), await make_key("acme")
    statuses = [
        (await admin(client, "GET", "/companies/acme", first)).status_code for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    refused = await admin(client, "GET", "/companies/acme", first)
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    # Another key has a limit of its own.
    assert (await admin(client, "GET", "/companies/acme", second)).status_code == 200

    for _ in range(3):
        await admin(client, "GET", "/companies/acme", "fdk_co_guessed")
    guessing = await admin(client, "GET", "/companies/acme", "fdk_co_guessed")
    assert guessing.status_code == 429
