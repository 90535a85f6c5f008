"""Retention (store.retention): what is past its time goes, in bounded batches, and what
sign-in still reads stays: a company's refresh retry within its window and reuse detection
work after a purge, and a pair kept for the window goes once it is over. On SQLite and
PostgreSQL."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Table, func, insert, select, update

from frontdesk.app import Frontdesk
from frontdesk.store import retention
from frontdesk.store.audit import AuditLog
from frontdesk.store.retention import PurgeReport, RetentionPolicy
from frontdesk.store.tables import (
    access_tokens,
    audit_events,
    authorization_codes,
    oauth_clients,
    refresh_tokens,
    spent_flows,
    token_families,
)
from tests.oauth import flows
from tests.oauth.retry_window import TENANT as RETRYING
from tests.oauth.retry_window import WINDOW_SECONDS, add_retrying_company

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

TABLES: dict[str, Table] = {
    "authorization_codes": authorization_codes,
    "access_tokens": access_tokens,
    "refresh_tokens": refresh_tokens,
    "token_families": token_families,
    "oauth_clients": oauth_clients,
    "spent_flows": spent_flows,
    "audit_events": audit_events,
}


async def rows(app: Frontdesk) -> dict[str, int]:
    """How many rows each table the purge touches holds."""
    counts = {}
    async with app.services.database.engine.connect() as connection:
        for kind, table in TABLES.items():
            query = select(func.count()).select_from(table)
            counts[kind] = int((await connection.execute(query)).scalar_one())
    return counts


async def kept_pairs(app: Frontdesk) -> int:
    """How many refresh tokens keep a sealed successor pair."""
    query = select(func.count()).where(refresh_tokens.c.successor_sealed.is_not(None))
    async with app.services.database.engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())


async def purge_at(app: Frontdesk, moment: datetime, **policy: int) -> PurgeReport:
    return await retention.purge(app.services.database.engine, RetentionPolicy(**policy), moment)


def later(**delta: float) -> datetime:
    return datetime.now(UTC) + timedelta(**delta)


def nothing(report: PurgeReport) -> bool:
    return report.complete and not any(report.counts.values())


async def test_nothing_still_in_use_is_purged(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """Live tokens, a spent refresh token, an unredeemed code and a new client all stay,
    and the tokens keep working."""
    tokens = await flows.obtain_tokens(client)
    refreshed = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    await flows.sign_in(client)
    await flows.register(client)
    before = await rows(app)

    assert nothing(await purge_at(app, later(minutes=5)))

    assert await rows(app) == before
    assert (await flows.whoami(client, refreshed.access)).status_code == 200
    assert (await flows.refresh(client, refreshed)).status_code == 200


async def test_what_is_past_its_time_goes_and_a_dry_run_counts_it_first(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A month and a day later: every code, token and family, and the clients that never
    obtained a token, are gone; the dry run counted exactly that and deleted nothing."""
    tokens = await flows.obtain_tokens(client)  # A client that was granted.
    await flows.sign_in(client)  # A client with a code it never redeemed.
    await flows.register(client)  # A client that never signed anyone in.
    before = await rows(app)
    moment = later(days=31, hours=2)

    dry = await retention.count(app.services.database.engine, RetentionPolicy(), moment)
    assert await rows(app) == before
    report = await purge_at(app, moment)

    assert report == dry
    assert report.counts == {
        "authorization_codes": 2,
        "access_tokens": 1,
        "refresh_tokens": 1,
        "token_families": 1,
        "oauth_clients": 2,
        "spent_flows": before["spent_flows"],
        "audit_events": 0,
        "tool_usage": 0,
        "tool_usage_customers": 0,
        "identity_assertions": 0,
    }
    after = await rows(app)
    assert after == {
        **dict.fromkeys(TABLES, 0),
        "oauth_clients": 1,
        "audit_events": after["audit_events"],
    }
    async with app.services.database.engine.connect() as connection:
        kept = (await connection.execute(select(oauth_clients.c.client_id))).scalars().all()
    assert kept == [tokens.client_id]


async def test_a_client_granted_long_ago_is_kept_and_old_audit_events_go(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A client whose only family was purged long ago is not taken for one never used;
    audit events go after their retention time, and not before."""
    tokens = await flows.obtain_tokens(client)
    await purge_at(app, later(days=31, hours=2))
    events = (await rows(app))["audit_events"]
    assert events > 0

    early = await purge_at(app, later(days=399))
    assert early.counts["audit_events"] == early.counts["oauth_clients"] == 0
    report = await purge_at(app, later(days=401))

    assert report.counts["audit_events"] == events
    assert report.counts["oauth_clients"] == 0
    assert await AuditLog(app.services.database.engine).list(tokens.tenant) == []
    assert (await rows(app))["oauth_clients"] == 1


async def test_zero_days_keeps_clients_and_audit_events_forever(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """FRONTDESK_UNUSED_CLIENT_DAYS=0 and FRONTDESK_AUDIT_RETENTION_DAYS=0 keep them all."""
    await flows.register(client)
    before = await rows(app)

    report = await purge_at(app, later(days=10_000), unused_client_days=0, audit_retention_days=0)

    assert report.counts["oauth_clients"] == report.counts["audit_events"] == 0
    after = await rows(app)
    assert after["oauth_clients"] == before["oauth_clients"] == 1
    assert after["audit_events"] == before["audit_events"] > 0


async def test_a_refresh_retry_within_its_window_works_after_a_purge(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Where the company chose a retry window, the spent token and the pair kept for it
    stay within the window, so the client that lost the answer still gets that pair."""
    await add_retrying_company(app, tmp_path)
    tokens = await flows.obtain_tokens(client, RETRYING)
    lost = await flows.refresh(client, tokens)  # The answer the client never read.

    await purge_at(app, later(seconds=WINDOW_SECONDS / 2))

    retried = await flows.refresh(client, tokens)
    assert retried.status_code == 200, retried.text
    assert retried.json()["access_token"] == lost.json()["access_token"]
    pair = flows.tokens_of(retried, tokens.client_id, RETRYING)
    assert (await flows.whoami(client, pair.access, RETRYING)).status_code == 200


async def test_a_kept_pair_is_cleared_once_the_window_has_passed(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """The pair sealed for the window goes from the row when the window is over; the spent
    token stays, for reuse detection."""
    await add_retrying_company(app, tmp_path)
    tokens = await flows.obtain_tokens(client, RETRYING)
    await flows.refresh(client, tokens)
    assert await kept_pairs(app) == 1
    before = await rows(app)

    await purge_at(app, later(seconds=WINDOW_SECONDS + 1))

    assert await kept_pairs(app) == 0
    assert (await rows(app))["refresh_tokens"] == before["refresh_tokens"]
    assert (await flows.refresh(client, tokens)).status_code == 400


async def test_reuse_of_a_spent_refresh_token_is_detected_after_a_purge(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Days later, every access token gone, a spent refresh token sent again still ends its
    family (RFC 9700 4.14.2): spent tokens are kept for their whole lifetime."""
    tokens = await flows.obtain_tokens(client)
    refreshed = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)

    # Two days later: the rotation is as old, and so past the retry window.
    async with app.services.database.engine.begin() as connection:
        await connection.execute(
            update(refresh_tokens)
            .where(refresh_tokens.c.used_at.is_not(None))
            .values(used_at=later(days=-2))
        )

    report = await purge_at(app, later(days=2))
    assert report.counts["access_tokens"] == 2
    assert report.counts["refresh_tokens"] == 0

    reused = await flows.refresh(client, tokens)
    assert reused.status_code == 400, reused.text
    assert (await flows.refresh(client, refreshed)).status_code == 400
    found = await AuditLog(app.services.database.engine).list(tokens.tenant)
    assert "refresh_reuse_detected" in [event.event for event in found]


async def test_a_revoked_family_goes_an_hour_after_its_revocation(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Its refresh token, still weeks from expiry, goes with it; not before the grace."""
    tokens = await flows.obtain_tokens(client)
    assert (await flows.revoke(client, tokens.refresh, tokens.client_id)).status_code == 200

    assert nothing(await purge_at(app, later(minutes=30)))
    report = await purge_at(app, later(hours=1, minutes=5))

    assert report.counts["refresh_tokens"] == 1
    assert report.counts["token_families"] == 1
    assert report.counts["oauth_clients"] == 0
    assert (await flows.refresh(client, tokens)).status_code == 400


async def test_batches_delete_more_rows_than_one_batch_holds(app: Frontdesk) -> None:
    """250 rows with batches of 100: all of them, in several transactions."""
    await add_old_rows(app, 250)

    report = await purge_at(app, later(days=1), batch_size=100)

    assert report.complete
    assert report.counts["spent_flows"] == report.counts["audit_events"] == 250
    assert (await rows(app))["spent_flows"] == 0


async def test_a_run_stops_when_its_time_is_up_and_the_next_one_finishes(
    app: Frontdesk,
) -> None:
    """A deadline ends the run between batches, having deleted part; nothing is lost."""
    await add_old_rows(app, 250)
    ticks = itertools.count()

    first = await retention.purge(
        app.services.database.engine,
        RetentionPolicy(batch_size=100),
        later(days=1),
        deadline=12,
        clock=lambda: next(ticks),
    )
    second = await purge_at(app, later(days=1), batch_size=100)

    assert not first.complete
    assert 0 < first.counts["spent_flows"] < 250
    assert first.counts["spent_flows"] + second.counts["spent_flows"] == 250
    assert (await rows(app))["spent_flows"] == 0


async def add_old_rows(app: Frontdesk, count: int) -> None:
    """``count`` spent flows and audit events, a week old."""
    week_ago = later(days=-7)
    async with app.services.database.engine.begin() as connection:
        await connection.execute(
            insert(spent_flows),
            [
                {"flow_hash": f"{n:064x}", "tenant_key": "initech", "expires_at": week_ago}
                for n in range(count)
            ],
        )
        await connection.execute(
            insert(audit_events),
            [
                {
                    "tenant_key": "initech",
                    "occurred_at": later(days=-500),
                    "event": "client_registered",
                    "detail": {},
                }
                for _ in range(count)
            ],
        )
