"""What ``frontdesk keys`` does, as typed functions the CLI forwards to (and tests call):
make, list and revoke the admin API's keys (store.admin_keys)."""

from __future__ import annotations

from datetime import UTC, datetime

from frontdesk.administration.command_database import opened
from frontdesk.administration.company_state import UnknownTarget, require_company
from frontdesk.config import Settings
from frontdesk.store.admin_keys import AdminKey, AdminKeys, NewKey


async def create_key(settings: Settings, tenant_key: str | None, name: str | None) -> NewKey:
    """A new operator key (``tenant_key`` None) or a key of that company, which must exist."""
    async with opened(settings) as database:
        if tenant_key is not None:
            await require_company(database, tenant_key)
        return await AdminKeys(database.engine).create(tenant_key, name, datetime.now(UTC))


async def list_keys(settings: Settings) -> list[AdminKey]:
    async with opened(settings) as database:
        return await AdminKeys(database.engine).list()


async def revoke_key(settings: Settings, key_id: str) -> bool:
    """Whether the key was revoked now (False: it already was); UnknownTarget when no key
    has this id."""
    async with opened(settings) as database:
        keys = AdminKeys(database.engine)
        if await keys.get(key_id) is None:
            raise UnknownTarget(f"no admin key has the id {key_id!r}")
        return await keys.revoke(key_id, datetime.now(UTC))
