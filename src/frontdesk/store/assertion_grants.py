"""Identity Assertion JWT Authorization Grants (ID-JAG) redeemed at the token endpoint: the
assertion is spent and the token family it starts written in one transaction, so of many
concurrent presentations of one assertion, on any instance, exactly one issues tokens.

Spending is an insert keyed by the company and a hash of the issuer and ``jti``
(store.tables.identity_assertions): the database's primary key, not a read before the
write, refuses the replay (the MCP ``ext-auth`` extension "Enterprise-Managed
Authorization", 7.4.2). The protocol checks stay on the OAuth side
(oauth.assertion_grant).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.families import insert_access, insert_pair
from frontdesk.store.grant_records import NewTokens
from frontdesk.store.tables import identity_assertions, token_families

GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class AssertionRecord:
    """A checked assertion about to be spent: whom and what it grants."""

    client_id: str
    customer_id: int
    scope: str
    resource: str
    # SHA-256 of the issuer and ``jti``: what is kept, and what a replay collides with.
    assertion_hash: str
    # The assertion's own ``exp``: until then a replay is refused.
    expires_at: datetime


class AssertionGrants:
    """The assertions part of store.grants.GrantRepository."""

    _engine: AsyncEngine

    async def redeem_assertion(
        self,
        tenant_key: str,
        record: AssertionRecord,
        tokens: NewTokens,
        with_refresh: bool,
        now: datetime,
    ) -> bool:
        """Spend the assertion and start a token family with an access token (and the
        refresh token of ``tokens`` when ``with_refresh``); False when it was spent before."""
        try:
            async with self._engine.begin() as connection:
                await connection.execute(
                    insert(identity_assertions).values(
                        tenant_key=tenant_key,
                        assertion_hash=record.assertion_hash,
                        expires_at=record.expires_at,
                    )
                )
                family = await connection.execute(
                    insert(token_families)
                    .values(
                        tenant_key=tenant_key,
                        client_id=record.client_id,
                        customer_id=record.customer_id,
                        scope=record.scope,
                        resource=record.resource,
                        # What started the family: here the assertion, as a code's hash
                        # names the code that started the others.
                        code_hash=record.assertion_hash,
                        created_at=now,
                    )
                    .returning(token_families.c.id)
                )
                family_id = int(family.scalar_one())
                if with_refresh:
                    await insert_pair(connection, family_id, tokens, now)
                else:
                    await insert_access(connection, family_id, tokens, now)
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKENS_ISSUED,
                    now,
                    client_id=record.client_id,
                    family_id=family_id,
                    grant=GRANT,
                )
        except IntegrityError:
            # The primary key of identity_assertions: this assertion was spent already.
            return False
        return True
