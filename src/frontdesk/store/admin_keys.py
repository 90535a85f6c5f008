"""Keys for the admin API (table ``admin_keys``, migration 0010): made, listed, revoked and
checked here, for the ``frontdesk keys`` commands and the admin API alike.

A key is shown once, when it is made; only its SHA-256 is kept. A key is 32 random bytes
(256 bits) behind a prefix that says what it is (``fdk_op_`` an operator's, ``fdk_co_`` a
company's), so a key pasted where it does not belong is recognisable, and secret scanners
can match it. Hashing a key of that entropy needs no salt nor slow hash: no guess can
reach it. A check looks the hash up (the unique index) and compares it again with
``hmac.compare_digest``, so no comparison of ours takes a time that depends on the key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store import audit
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import admin_keys

OPERATOR_PREFIX = "fdk_op_"
COMPANY_PREFIX = "fdk_co_"
# 32 bytes, 43 characters in URL-safe base64.
KEY_BYTES = 32
# The longest key accepted at all: a longer bearer value is refused before it is hashed.
LONGEST_KEY = 100


class KeyKind(StrEnum):
    OPERATOR = "operator"
    COMPANY = "company"


@dataclass(frozen=True, slots=True)
class AdminKey:
    """A key as listed and as a request holds it: never the key itself."""

    key_id: str
    tenant_key: str | None  # None for an operator key
    name: str | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None

    @property
    def kind(self) -> KeyKind:
        return KeyKind.OPERATOR if self.tenant_key is None else KeyKind.COMPANY

    def may_manage(self, tenant_key: str) -> bool:
        """An operator key manages every company, a company key its own only."""
        return self.tenant_key is None or self.tenant_key == tenant_key


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: ``secret`` is shown once and never again."""

    key: AdminKey
    secret: str


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _row_key(row: Any) -> AdminKey:  # a Row of the _COLUMNS at least
    return AdminKey(
        key_id=row.key_id,
        tenant_key=row.tenant_key,
        name=row.name,
        created_at=as_utc(row.created_at),
        last_used_at=None if row.last_used_at is None else as_utc(row.last_used_at),
        revoked_at=None if row.revoked_at is None else as_utc(row.revoked_at),
    )


_COLUMNS = (
    admin_keys.c.key_id,
    admin_keys.c.tenant_key,
    admin_keys.c.name,
    admin_keys.c.created_at,
    admin_keys.c.last_used_at,
    admin_keys.c.revoked_at,
)


class AdminKeys:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def create(self, tenant_key: str | None, name: str | None, now: datetime) -> NewKey:
        """A new key: an operator's when ``tenant_key`` is None, else that company's (the
        caller checks the company exists). A company key's making is audited under it."""
        prefix = OPERATOR_PREFIX if tenant_key is None else COMPANY_PREFIX
        secret = prefix + secrets.token_urlsafe(KEY_BYTES)
        key = AdminKey(
            key_id="key_" + secrets.token_hex(8),
            tenant_key=tenant_key,
            name=name,
            created_at=now,
            last_used_at=None,
            revoked_at=None,
        )
        async with self._engine.begin() as connection:
            await connection.execute(
                insert(admin_keys).values(
                    key_id=key.key_id,
                    key_hash=key_hash(secret),
                    tenant_key=tenant_key,
                    name=name,
                    created_at=now,
                )
            )
            if tenant_key is not None:
                await audit.record(
                    connection, tenant_key, audit.Event.ADMIN_KEY_CREATED, now, key_id=key.key_id
                )
        return NewKey(key, secret)

    async def list(self) -> list[AdminKey]:
        """Every key, oldest first, revoked ones too."""
        query = select(*_COLUMNS).order_by(admin_keys.c.created_at, admin_keys.c.key_id)
        async with self._engine.connect() as connection:
            return [_row_key(row) for row in (await connection.execute(query)).all()]

    async def get(self, key_id: str) -> AdminKey | None:
        query = select(*_COLUMNS).where(admin_keys.c.key_id == key_id)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else _row_key(row)

    async def revoke(self, key_id: str, now: datetime) -> bool:
        """Whether the key was live and is now revoked (False: it already was)."""
        async with self._engine.begin() as connection:
            row = (
                await connection.execute(
                    update(admin_keys)
                    .where(admin_keys.c.key_id == key_id, admin_keys.c.revoked_at.is_(None))
                    .values(revoked_at=now)
                    .returning(admin_keys.c.tenant_key)
                )
            ).first()
            if row is None:
                return False
            if row.tenant_key is not None:
                await audit.record(
                    connection, row.tenant_key, audit.Event.ADMIN_KEY_REVOKED, now, key_id=key_id
                )
        return True

    async def authenticate(self, secret: str, now: datetime) -> AdminKey | None:
        """The live key whose secret this is, its last use set to ``now``; None for an
        unknown, malformed or revoked one."""
        if len(secret) > LONGEST_KEY or not secret.startswith((OPERATOR_PREFIX, COMPANY_PREFIX)):
            return None
        wanted = key_hash(secret)
        async with self._engine.begin() as connection:
            row = (
                await connection.execute(
                    select(admin_keys.c.key_hash, *_COLUMNS).where(admin_keys.c.key_hash == wanted)
                )
            ).first()
            if row is None or not hmac.compare_digest(row.key_hash, wanted):
                return None
            if row.revoked_at is not None:
                return None
            await connection.execute(
                update(admin_keys).where(admin_keys.c.key_id == row.key_id).values(last_used_at=now)
            )
        return _row_key(row)

    async def record_use(
        self, key_id: str, tenant_key: str, method: str, route: str, status: int, now: datetime
    ) -> None:
        """A request the key made about the company, in the company's audit log."""
        async with self._engine.begin() as connection:
            await audit.record(
                connection,
                tenant_key,
                audit.Event.ADMIN_REQUEST,
                now,
                key_id=key_id,
                method=method,
                route=route,
                status=status,
            )


async def revoke_company_keys(connection: AsyncConnection, tenant_key: str, now: datetime) -> None:
    """Within the caller's transaction (a company's deletion): every live key of the
    company revoked, so that a company made again under its tenant key starts with none."""
    await connection.execute(
        update(admin_keys)
        .where(admin_keys.c.tenant_key == tenant_key, admin_keys.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
