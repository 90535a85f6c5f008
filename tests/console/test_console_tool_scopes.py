"""The console's tools page names the scope of its own a tool asks of a grant, and an edit
that would make such a tool public is refused, saying why."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.console.support import console_sign_in, csrf_of, post
from tests.oauth import flows

pytestmark = pytest.mark.anyio

COMPANY = """
companies:
  - tenant_key: vandelay
    name: Vandelay Industries
    signin:
      login: {type: dev}
    console:
      login: {type: dev}
      staff: {domains: [vandelay.example]}
    tools:
      - name: cancel_order
        description: Cancels one of the customer's orders.
        access: personal
        scope: orders:cancel
        annotations:
          {title: Cancel my order, readOnlyHint: false, destructiveHint: true,
          idempotentHint: true, openWorldHint: false}
        provider: {type: python, target: "tests.fixtures.tools:whoami"}
"""


@pytest.fixture
async def companies(app: Frontdesk, tmp_path: Path) -> Frontdesk:
    await flows.add_companies(app, tmp_path, COMPANY)
    return app


async def test_a_tools_scope_is_shown_and_kept_to_personal_tools(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    page = (await client.get("/console/vandelay/tools")).text
    assert (
        "Access: <strong>personal</strong>, for grants with the scope <code>orders:cancel</code>."
        in page
    )
    refused = await post(
        client,
        "/console/vandelay/tools/edit",
        {"csrf": csrf_of(page), "tool": "cancel_order", "access": "public"},
    )
    assert refused.status_code == 400
    assert "only a personal tool can have a scope" in refused.text
