"""Authorization codes, token families, access and refresh tokens: the SQLAlchemy
backend of oauth.storage.GrantStorage, serving SQLite and PostgreSQL's rarer statements.

Protocol checks and decisions stay on the OAuth side (oauth.grants, oauth.refresh); this
backend keeps the state and executes each step as a compare-and-set on the state the step
was decided from: a code or refresh token is spent by one conditional UPDATE, and the
tokens it buys are written in the same transaction, so of many concurrent redemptions
exactly one wins and none half-issues. Each kind of grant state has a module of its own.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.access_grants import AccessGrants
from frontdesk.store.assertion_grants import AssertionGrants
from frontdesk.store.code_grants import CodeGrants
from frontdesk.store.database import for_reads
from frontdesk.store.refresh_grants import RefreshGrants
from frontdesk.store.token_revocation import TokenRevocation


class GrantRepository(CodeGrants, RefreshGrants, AccessGrants, AssertionGrants, TokenRevocation):
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)
