"""Customers, recorded on their first sign-in and updated on each later one.

Each sign-in writes what the company's login says now, the email's verification included:
an address that was verified and is no longer said to be is recorded unverified.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.tables import customers

# The sizes of the name and email columns (store/tables.py).
MAX_NAME = 200
MAX_EMAIL = 320
# What PostgreSQL cannot store in text (NUL) or encode as UTF-8 (a lone surrogate).
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


class CustomerRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def record(
        self,
        tenant_key: str,
        subject: str,
        email: str | None,
        name: str | None,
        *,
        email_verified: bool = False,
    ) -> int:
        """Create or update the customer; returns its id."""
        # A company's login is not bound by our columns (login.oidc.identity_from checks
        # first; this is the last line): a long name is clipped, and an address too long to
        # be real is dropped rather than failing the sign-in. Neither may hold what
        # PostgreSQL cannot store.
        if name:
            name = _UNSTORABLE.sub("", name)[:MAX_NAME] or None
        if email is not None and (len(email) > MAX_EMAIL or _UNSTORABLE.search(email)):
            email = None
        # No address, nothing verified.
        verified = email_verified and email is not None
        try:
            return await self._record(tenant_key, subject, email, name, verified)
        except IntegrityError:
            # The same customer signed in twice at once and the other insert won; this
            # second try finds that row and updates it.
            return await self._record(tenant_key, subject, email, name, verified)

    async def _record(
        self, tenant_key: str, subject: str, email: str | None, name: str | None, verified: bool
    ) -> int:
        now = datetime.now(UTC)
        async with self._engine.begin() as connection:
            found = (
                await connection.execute(
                    select(customers.c.id).where(
                        customers.c.tenant_key == tenant_key, customers.c.subject == subject
                    )
                )
            ).scalar()
            if found is not None:
                await connection.execute(
                    update(customers)
                    .where(customers.c.id == found)
                    .values(email=email, email_verified=verified, name=name, updated_at=now)
                )
                return int(found)
            inserted = await connection.execute(
                insert(customers)
                .values(
                    tenant_key=tenant_key,
                    subject=subject,
                    email=email,
                    email_verified=verified,
                    name=name,
                    created_at=now,
                    updated_at=now,
                )
                .returning(customers.c.id)
            )
            return int(inserted.scalar_one())
