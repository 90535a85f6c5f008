"""The abandoned refresh, reproduced on real PostgreSQL over a real socket: the database
answers after the client gave up. Where the company chose a retry window, the client's
retry gets the pair it never read and the customer stays signed in. Also on PostgreSQL: a
spent token sent to another instance ends the family at both, and a first use of an
access token, marked by the batched lookup (store.access_lookups), sends no notice."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from granian.constants import HTTPModes, Interfaces
from granian.server.embed import Server as EmbeddedServer

from frontdesk.oauth.credentials import digest
from frontdesk.store.audit import AuditLog
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.postgres import driver_dsn
from frontdesk.web.asgi import Message, Receive, Scope, Send
from tests.oauth import flows
from tests.oauth.conftest import Serve, Served
from tests.oauth.retry_window import TENANT as RETRYING
from tests.oauth.retry_window import add_retrying_company
from tests.support.grant_changes import until

pytestmark = pytest.mark.anyio

DEADLINE = 10.0
# How long the client waits for its refresh before giving up.
CLIENT_TIMEOUT = 1.0


class TokenAnswers:
    """The app behind a recorder of the token endpoint's answers: the test sees the answer
    the client gave up on, which the client never read."""

    def __init__(self, app: Served) -> None:
        self._app = app.app
        self.bodies: list[bytes] = []
        self.answered = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/oauth/token"):
            await self._app(scope, receive, send)
            return
        body = bytearray()

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self.bodies.append(bytes(body))
                    self.answered.set()
            await send(message)

        await self._app(scope, receive, recording)


@pytest.fixture
async def instance(serve: Serve, postgres_url: str, tmp_path: Path) -> Served:
    served = await serve(database_url=postgres_url)
    await add_retrying_company(served.app, tmp_path)
    return served


@pytest.fixture
async def served_over_tcp(instance: Served) -> AsyncIterator[tuple[str, TokenAnswers]]:
    """The instance on a real socket, served by the HTTP server ``frontdesk serve`` runs,
    embedded in this event loop (the instance's lifespan is the fixture's: none here)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    answers = TokenAnswers(instance)
    server = EmbeddedServer(
        answers,
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGINL,
        http=HTTPModes.http1,
        websockets=False,
        log_enabled=False,
    )
    task = asyncio.create_task(server.serve())
    await until(lambda: _accepts(port))
    try:
        yield f"http://127.0.0.1:{port}", answers
    finally:
        server.stop()  # type: ignore[no-untyped-call]  # granian leaves it unannotated
        async with asyncio.timeout(DEADLINE):
            await task


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def rotation_waits_on_a_lock(postgres_url: str) -> None:
    """Until a session of the test's database waits for a row lock, at most DEADLINE."""
    watch = await asyncpg.connect(driver_dsn(postgres_url))
    deadline = time.monotonic() + DEADLINE
    try:
        while not await watch.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ):
            assert time.monotonic() < deadline, "the rotation never waited for the row lock"
            await asyncio.sleep(0.01)
    finally:
        await watch.close()


async def test_an_abandoned_refresh_is_retried_and_the_customer_stays_signed_in(
    instance: Served, served_over_tcp: tuple[str, TokenAnswers], postgres_url: str
) -> None:
    """A rotation waits on the token's row lock past the client's timeout, then commits;
    the client sends the same refresh token again within its company's window and gets the
    pair it never read, which works, and the audit log holds the retry, not a reuse."""
    base_url, answers = served_over_tcp
    tokens = await flows.obtain_tokens(instance.client, RETRYING)
    form = {
        "grant_type": "refresh_token",
        "client_id": tokens.client_id,
        "refresh_token": tokens.refresh,
    }
    sql = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        # Another transaction holds the token's row, so the rotation's UPDATE waits.
        holding = sql.transaction()
        await holding.start()
        await sql.execute(
            "SELECT 1 FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE", digest(tokens.refresh)
        )
        async with httpx.AsyncClient(base_url=base_url, timeout=CLIENT_TIMEOUT) as client:
            giving_up = asyncio.create_task(
                client.post(flows.oauth_path("token", RETRYING), data=form, headers=flows.FORM)
            )
            await rotation_waits_on_a_lock(postgres_url)
            with pytest.raises(httpx.ReadTimeout):
                await giving_up
        assert not answers.answered.is_set()
        await holding.rollback()
        async with asyncio.timeout(DEADLINE):
            await answers.answered.wait()
    finally:
        await sql.close()
    lost = flows.tokens_of(
        httpx.Response(200, content=answers.bodies[0]), tokens.client_id, RETRYING
    )

    async with httpx.AsyncClient(base_url=base_url, timeout=DEADLINE) as client:
        retried = await client.post(
            flows.oauth_path("token", RETRYING), data=form, headers=flows.FORM
        )

    assert flows.tokens_of(retried, tokens.client_id, RETRYING) == lost
    assert (await flows.whoami_result(instance.client, lost.access, RETRYING))["subject"] == (
        "dev:peter@initech.example"
    )
    events = [
        event.event
        for event in await AuditLog(instance.app.services.database.engine).list(RETRYING)
    ]
    assert "refresh_retried" in events
    assert "refresh_reuse_detected" not in events
    assert "family_revoked" not in events


async def test_a_spent_token_at_another_instance_ends_the_family_at_both(
    serve: Serve, postgres_url: str
) -> None:
    """The new access token is used, and so kept in memory, at one instance; the old
    refresh token sent to another is reuse, and the family ends at both."""
    first = await serve(database_url=postgres_url)
    second = await serve(database_url=postgres_url)
    tokens = await flows.obtain_tokens(first.client)
    newest = flows.tokens_of(await flows.refresh(first.client, tokens), tokens.client_id)
    assert (await flows.whoami(first.client, newest.access)).status_code == 200

    reused = await flows.refresh(second.client, tokens)

    assert reused.status_code == 400, reused.text
    assert reused.json()["error"] == "invalid_grant"
    feed = first.app.services.database.grant_changes
    assert feed is not None
    await feed.caught_up()
    assert (await flows.whoami(first.client, newest.access)).status_code == 401


async def test_a_first_use_sends_no_grant_change_notice(instance: Served) -> None:
    """Marking a token used changes nothing a signed-in call reads: no notice goes out, so
    no instance drops what it keeps (migration 0005's trigger)."""
    feed: ChangeFeed | None = instance.app.services.database.grant_changes
    assert feed is not None
    tokens = await flows.obtain_tokens(instance.client)
    feed.start()
    await until(feed.confirmed)
    generation = feed.generation

    assert (await flows.whoami(instance.client, tokens.access)).status_code == 200
    await feed.caught_up()

    assert feed.generation == generation
