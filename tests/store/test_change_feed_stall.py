"""The feed of grant changes on a stalled PostgreSQL (store.change_feed): a session that
stops answering is no longer trusted within TRUST_SECONDS, opening one against a stalled
server is bounded, and the feed is trusted again by itself once the server answers."""

from __future__ import annotations

import time

import pytest
from sqlalchemy.engine import make_url

from frontdesk.store import change_feed
from frontdesk.store.bounds import Timeouts
from frontdesk.store.change_feed import ChangeFeed
from tests.support.grant_changes import until
from tests.support.stall_proxy import StallProxy

pytestmark = pytest.mark.postgres

BOUNDS = Timeouts(statement=0.5, connect=0.5, acquire=0.5)


async def test_a_stalled_session_loses_trust_and_the_feed_recovers(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(change_feed, "RECONNECT_SECONDS", 0.05)
    upstream = make_url(postgres_url)
    async with StallProxy(upstream.host or "127.0.0.1", upstream.port or 5432) as proxy:
        feed = ChangeFeed(proxy.rewrite(postgres_url), BOUNDS)
        try:
            feed.start()
            await until(feed.confirmed)
            generation = feed.generation
            proxy.stall()
            stalled_at = time.monotonic()
            await until(lambda: not feed.confirmed())
            assert time.monotonic() - stalled_at <= change_feed.TRUST_SECONDS + 0.5
            # The lost session is announced ("anything may have changed") once its heartbeat
            # is past its bound; the sessions tried during the stall each give up within
            # the connect bound, and none is trusted.
            await until(lambda: feed.generation > generation, change_feed.TRUST_SECONDS + 0.5)
            stalled_for = BOUNDS.connect * 3
            await until(lambda: time.monotonic() - stalled_at > stalled_for, stalled_for + 1)
            assert not feed.confirmed()
            proxy.resume()
            await until(feed.confirmed, BOUNDS.connect + 2.0)
        finally:
            await feed.close()
