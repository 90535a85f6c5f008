"""Each company's signing keys as the store keeps them (table ``signing_keys``, migration
0012): the public JWK in clear, the private one sealed by the caller (identity_tokens).

At most one key per company is active (``retired_at`` null): a partial unique index says so,
so two instances that make a company's first key at once cannot both succeed, and a
rotation retires the active key in the transaction that adds the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.database import for_reads
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import signing_keys


@dataclass(frozen=True, slots=True)
class StoredSigningKey:
    kid: str
    tenant_key: str
    algorithm: str
    public_jwk: dict[str, Any]
    private_sealed: str
    created_at: datetime
    retired_at: datetime | None

    def __repr__(self) -> str:
        # A traceback or a debug print never carries the sealed private half.
        return f"StoredSigningKey(kid={self.kid!r}, tenant_key={self.tenant_key!r})"


class KeyAlreadyActive(Exception):
    """Another instance made the company's active key first."""


def _row(row: Any) -> StoredSigningKey:
    return StoredSigningKey(
        kid=row.kid,
        tenant_key=row.tenant_key,
        algorithm=row.algorithm,
        public_jwk=dict(row.public_jwk),
        private_sealed=row.private_sealed,
        created_at=as_utc(row.created_at),
        retired_at=None if row.retired_at is None else as_utc(row.retired_at),
    )


class SigningKeyRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)

    async def published(
        self, tenant_key: str, now: datetime, overlap: timedelta
    ) -> list[StoredSigningKey]:
        """The company's keys a verifier may still meet: the active one, and each retired
        one until ``overlap`` after it was retired. The active key first."""
        query = (
            select(signing_keys)
            .where(
                signing_keys.c.tenant_key == tenant_key,
                or_(
                    signing_keys.c.retired_at.is_(None),
                    signing_keys.c.retired_at > now - overlap,
                ),
            )
            # The active key first, then the most recently retired: whatever the clocks of
            # the instances that made them said.
            .order_by(signing_keys.c.retired_at.desc().nulls_first(), signing_keys.c.kid)
        )
        async with self._reads.connect() as connection:
            return [_row(row) for row in await connection.execute(query)]

    async def add_first(self, key: StoredSigningKey) -> None:
        """Store the company's first active key; KeyAlreadyActive when it has one."""
        try:
            async with self._engine.begin() as connection:
                await connection.execute(insert(signing_keys).values(**_values(key)))
        except IntegrityError:
            raise KeyAlreadyActive(key.tenant_key) from None

    async def rotate(self, key: StoredSigningKey, now: datetime, overlap: timedelta) -> int:
        """Retire the company's active key (if any) and make ``key`` the active one, in one
        transaction; keys retired longer ago than ``overlap`` are removed, no verifier can
        meet them any more. The number of keys retired now (0 or 1). KeyAlreadyActive when
        a concurrent rotation committed its key in between: nothing is changed then."""
        try:
            async with self._engine.begin() as connection:
                retired = await connection.execute(
                    update(signing_keys)
                    .where(
                        signing_keys.c.tenant_key == key.tenant_key,
                        signing_keys.c.retired_at.is_(None),
                    )
                    .values(retired_at=now)
                )
                await connection.execute(
                    delete(signing_keys).where(
                        signing_keys.c.tenant_key == key.tenant_key,
                        signing_keys.c.retired_at <= now - overlap,
                    )
                )
                await connection.execute(insert(signing_keys).values(**_values(key)))
        except IntegrityError:
            raise KeyAlreadyActive(key.tenant_key) from None
        return retired.rowcount or 0


def _values(key: StoredSigningKey) -> dict[str, Any]:
    return {
        "kid": key.kid,
        "tenant_key": key.tenant_key,
        "algorithm": key.algorithm,
        "public_jwk": key.public_jwk,
        "private_sealed": key.private_sealed,
        "created_at": key.created_at,
        "retired_at": key.retired_at,
    }
