"""What the database holds for a client's token family, read directly: the proof that no
token was half-issued (every pair the database holds was handed to the client, and every
refresh token the client spent is marked spent)."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import create_async_engine

from frontdesk.oauth.credentials import digest
from frontdesk.store.tables import access_tokens, refresh_tokens, token_families
from tests.oauth.flows import tool_call
from tests.resilience.load import Chain, Outcome, judge_mcp

CONCURRENCY = 8


@dataclass(frozen=True)
class Family:
    refresh_rows: int
    access_rows: int
    unspent: int
    spent: frozenset[str]
    revoked: bool


async def read_families(database_url: str, chains: list[Chain]) -> list[Family]:
    """Each chain's family as stored, found by the digest of its first refresh token."""
    engine = create_async_engine(database_url)
    families = []
    try:
        async with engine.connect() as connection:
            for chain in chains:
                family_id = (
                    await connection.execute(
                        select(refresh_tokens.c.family_id).where(
                            refresh_tokens.c.token_hash == digest(chain.pairs[0][1])
                        )
                    )
                ).scalar_one()
                refresh = (
                    await connection.execute(
                        select(refresh_tokens.c.token_hash, refresh_tokens.c.used_at).where(
                            refresh_tokens.c.family_id == family_id
                        )
                    )
                ).all()
                access_rows = (
                    await connection.execute(
                        select(func.count()).where(access_tokens.c.family_id == family_id)
                    )
                ).scalar_one()
                revoked_at = (
                    await connection.execute(
                        select(token_families.c.revoked_at).where(token_families.c.id == family_id)
                    )
                ).scalar_one()
                families.append(
                    Family(
                        refresh_rows=len(refresh),
                        access_rows=int(access_rows),
                        unspent=sum(1 for row in refresh if row.used_at is None),
                        spent=frozenset(row.token_hash for row in refresh if row.used_at),
                        revoked=revoked_at is not None,
                    )
                )
    finally:
        await engine.dispose()
    return families


def assert_whole(chain: Chain, family: Family) -> bool:
    """The family holds exactly what the client was given, plus at most the pair bought by
    a refresh whose answer was lost with a killed process. True when that refresh happened."""
    spent = {digest(token) for token in chain.spent}
    lost = chain.in_flight is not None and digest(chain.in_flight) in family.spent
    if lost:
        assert chain.in_flight is not None
        spent.add(digest(chain.in_flight))
    expected_rows = len(chain.pairs) + (1 if lost else 0)
    assert not family.revoked, "no refresh token was presented twice, yet the family is revoked"
    assert family.spent == spent, "the spent refresh tokens are not the ones that got a 200"
    assert family.refresh_rows == expected_rows, (
        f"{family.refresh_rows} refresh tokens stored, {expected_rows} issued"
    )
    assert family.access_rows == expected_rows, (
        f"{family.access_rows} access tokens stored, {expected_rows} issued"
    )
    assert family.unspent == 1
    return lost


async def refused_tokens(client: httpx.AsyncClient, tenant: str, tokens: list[str]) -> list[str]:
    """The access tokens among ``tokens`` the service does not accept (``whoami`` not ok)."""
    refused: list[str] = []
    limiter = anyio.CapacityLimiter(CONCURRENCY)

    async def check(token: str) -> None:
        async with limiter:
            response = await client.post(
                f"/v1/{tenant}/mcp",
                json=tool_call("whoami"),
                headers={"authorization": f"Bearer {token}"},
            )
        outcome, detail = judge_mcp(response)
        if outcome is not Outcome.OK:
            refused.append(f"{token[:12]}…: {detail}")

    async with anyio.create_task_group() as group:
        for token in tokens:
            group.start_soon(check, token)
    return refused
