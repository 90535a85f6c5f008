"""Issue many refresh tokens straight into a bench database, for the refresh-grant load.

Runs with Frontdesk's own Python (the project's .venv), never in a served instance. A
refresh token works once, so every request of the load needs its own; running the whole
OAuth flow for each of tens of thousands would take longer than the load itself. Instead
this copies the token family a real sign-in produced (found by its access token) into
COUNT new families, each with one fresh refresh token, minted and hashed by Frontdesk's
own ``credentials`` module and written into its own tables: to the token endpoint each
is exactly a token the flow issued (same client, customer, scope, resource and code),
and each family is independent, as if COUNT customers' clients were refreshing.

Prints the tokens, one a line, to OUT and a JSON summary to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from frontdesk.oauth.credentials import Kind, digest, mint
from frontdesk.store.database import create_engine
from frontdesk.store.tables import access_tokens, refresh_tokens, token_families
from sqlalchemy import insert, select

CHUNK = 5_000


async def issue(database_url: str, access_token: str, count: int, days: int) -> list[str]:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            family = (
                await connection.execute(
                    select(token_families)
                    .join(access_tokens, access_tokens.c.family_id == token_families.c.id)
                    .where(access_tokens.c.token_hash == digest(access_token))
                )
            ).one()
            now = datetime.now(UTC)
            tokens = [mint(Kind.REFRESH) for _ in range(count)]
            for start in range(0, count, CHUNK):
                chunk = tokens[start : start + CHUNK]
                rows = [
                    {
                        "tenant_key": family.tenant_key,
                        "client_id": family.client_id,
                        "customer_id": family.customer_id,
                        "scope": family.scope,
                        "resource": family.resource,
                        "code_hash": family.code_hash,
                        "created_at": now,
                    }
                    for _ in chunk
                ]
                ids = (
                    await connection.execute(
                        insert(token_families).returning(
                            token_families.c.id, sort_by_parameter_order=True
                        ),
                        rows,
                    )
                ).scalars()
                await connection.execute(
                    insert(refresh_tokens),
                    [
                        {
                            "token_hash": digest(token),
                            "family_id": family_id,
                            "expires_at": now + timedelta(days=days),
                            "created_at": now,
                        }
                        for token, family_id in zip(chunk, ids, strict=True)
                    ],
                )
    finally:
        await engine.dispose()
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--like-access-token", required=True, help="from a real sign-in")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--days", type=int, default=30, help="refresh token lifetime")
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    started = time.perf_counter()
    tokens = asyncio.run(
        issue(arguments.database_url, arguments.like_access_token, arguments.count, arguments.days)
    )
    arguments.out.write_text("".join(token + "\n" for token in tokens), encoding="ascii")
    print(json.dumps({"issued": len(tokens), "seconds": round(time.perf_counter() - started, 2)}))


if __name__ == "__main__":
    main()
