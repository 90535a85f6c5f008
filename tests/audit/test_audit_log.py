"""The audit log records every security event of a company, and only that company's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.config import Settings
from frontdesk.store.audit import AuditLog
from tests.conftest import BASE_URL, start_app
from tests.oauth import flows


async def events_of(app: Frontdesk, tenant: str = "initech") -> list[dict[str, Any]]:
    """The company's events, oldest first."""
    found = await AuditLog(app.services.database.engine).list(tenant)
    return [event.to_json() for event in reversed(found)]


async def test_a_sign_in_records_registration_and_issuance(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Registering a client and exchanging a code are both recorded, with the client id."""
    tokens = await flows.obtain_tokens(client)
    events = await events_of(app)
    assert [event["event"] for event in events] == ["client_registered", "tokens_issued"]
    assert all(event["client_id"] == tokens.client_id for event in events)
    assert events[1]["grant"] == "authorization_code"


async def test_refresh_reuse_is_recorded_with_the_family_revocation(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A spent refresh token presented again, once its new pair is in use, records reuse
    and the family's revocation."""
    tokens = await flows.obtain_tokens(client)
    refreshed = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    assert (await flows.whoami(client, refreshed.access)).status_code == 200
    assert (await flows.refresh(client, tokens)).status_code == 400
    kinds = [event["event"] for event in await events_of(app)]
    assert kinds == [
        "client_registered",
        "tokens_issued",
        "tokens_issued",
        "refresh_reuse_detected",
        "family_revoked",
    ]
    revoked = (await events_of(app))[-1]
    assert revoked["reason"] == "refresh_token_reuse"


async def test_code_replay_and_revocation_are_recorded(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A replayed code and an explicit revocation each leave their events."""
    signed_in = await flows.sign_in(client)
    first = flows.tokens_of(await flows.exchange(client, signed_in), signed_in.client_id)
    assert (await flows.exchange(client, signed_in)).status_code == 400
    assert (await flows.revoke(client, first.access, first.client_id)).status_code == 200
    kinds = [event["event"] for event in await events_of(app)]
    assert "code_replayed" in kinds
    assert kinds.count("family_revoked") == 1


async def test_events_never_hold_a_secret(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """No token or code issued in the flow appears anywhere in the recorded events."""
    tokens = await flows.obtain_tokens(client)
    refreshed = await flows.refresh(client, tokens)
    await flows.revoke(client, refreshed.json()["refresh_token"], tokens.client_id)
    text = repr(await events_of(app))
    for secret in (tokens.access, tokens.refresh, refreshed.json()["access_token"]):
        assert secret not in text


async def test_one_companys_events_are_not_anothers(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Events are kept per company: another company's log stays empty."""
    await flows.obtain_tokens(client)
    assert await events_of(app, "acme") == []


def test_the_operator_lists_events_with_the_command(
    make_settings: Callable[..., Settings], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`frontdesk audit list KEY` prints the company's events as JSON lines."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"

    async def sign_in_once() -> None:
        app = await start_app(make_settings(database_url=url))
        try:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
                await flows.obtain_tokens(http)
        finally:
            await app.services.stop()

    anyio.run(sign_in_once)
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", url)
    result = CliRunner().invoke(main, ["audit", "list", "initech", "--event", "tokens_issued"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert '"event":"tokens_issued"' in lines[0]
