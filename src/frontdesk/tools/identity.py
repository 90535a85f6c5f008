"""What a provider needs to tell a company's API who is calling: a minter of identity tokens
(frontdesk.tools.identity_tokens), handed in from above so that tools/ imports no store."""

from __future__ import annotations

from typing import Protocol

from frontdesk.domain import Customer


class IdentityMinter(Protocol):
    async def mint(
        self,
        tenant_key: str,
        audience: str,
        customer: Customer,
        client_id: str | None,
        scope: frozenset[str],
    ) -> str: ...
