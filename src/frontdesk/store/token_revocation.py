"""Token revocation (RFC 7009): a client revokes a refresh token, which ends its whole
family, or one access token; a token the client does not hold is left alone, and the
caller answers 200 either way (RFC 7009 2.2).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.families import revoke_family_in
from frontdesk.store.grant_records import Ending
from frontdesk.store.tables import access_tokens, refresh_tokens, token_families


class TokenRevocation:
    """The revocation part of store.grants.GrantRepository."""

    _engine: AsyncEngine

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime, ending: Ending
    ) -> None:
        """Revoke a refresh token's family, as ``ending`` says (oauth.grants decides), or
        one access token, if this client holds it."""
        family = token_families.c
        ours = and_(family.tenant_key == tenant_key, family.client_id == client_id)
        async with self._engine.begin() as connection:
            refresh_family = (
                await connection.execute(
                    select(refresh_tokens.c.family_id)
                    .join(token_families, family.id == refresh_tokens.c.family_id)
                    .where(refresh_tokens.c.token_hash == token_hash, ours)
                )
            ).scalar()
            if refresh_family is not None:
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKEN_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=int(refresh_family),
                    revoked="refresh_token",
                )
                await revoke_family_in(
                    connection,
                    int(refresh_family),
                    now,
                    ending.reason,
                    forget_consent=ending.forgets_consent,
                )
                return
            access_family = (
                select(family.id).where(family.id == access_tokens.c.family_id, ours).exists()
            )
            revoked = await connection.execute(
                update(access_tokens)
                .where(
                    access_tokens.c.token_hash == token_hash,
                    access_tokens.c.revoked_at.is_(None),
                    access_family,
                )
                .values(revoked_at=now)
                .returning(access_tokens.c.family_id)
            )
            for (family_id,) in revoked.all():
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKEN_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=family_id,
                    revoked="access_token",
                )
