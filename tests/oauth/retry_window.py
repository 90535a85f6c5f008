"""A company that chose a refresh retry window (``signin.refresh_retry_seconds``,
oauth.refresh): a spent refresh token sent again within it gets the same pair again. The
test companies keep the contract's rule (no window); tests of the window add this one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import update

from frontdesk.app import Frontdesk
from frontdesk.oauth.credentials import digest
from frontdesk.store.tables import refresh_tokens
from tests.oauth.flows import add_companies

TENANT = "vandelay"
# The longest a company may choose: the resilience tests' retries come after a stall.
WINDOW_SECONDS = 60

COMPANY = f"""
companies:
  - tenant_key: {TENANT}
    name: Vandelay Industries
    signin:
      login: {{type: dev}}
      refresh_retry_seconds: {WINDOW_SECONDS}
    tools:
      - name: whoami
        description: Says who is asking.
        access: personal
        annotations:
          title: Whoami
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
"""


async def add_retrying_company(app: Frontdesk, directory: Path) -> None:
    await add_companies(app, directory, COMPANY)


async def rotated_long_ago(app: Frontdesk, refresh_token: str, seconds: float) -> None:
    """Move the rotation of ``refresh_token`` ``seconds`` into the past."""
    async with app.services.database.engine.begin() as connection:
        await connection.execute(
            update(refresh_tokens)
            .where(refresh_tokens.c.token_hash == digest(refresh_token))
            .values(used_at=datetime.now(UTC) - timedelta(seconds=seconds))
        )
