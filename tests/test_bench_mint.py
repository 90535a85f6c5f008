"""The bench's refresh tokens (bench/mint_refresh_tokens.py), issued through Frontdesk's
own grant code for a real sign-in: the token endpoint takes each as a token the flow
issued, once, for the same customer, client and scope."""

from __future__ import annotations

import httpx
import pytest

from frontdesk.app import Frontdesk
from mint_refresh_tokens import MintError, issue
from tests.oauth import flows

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]


async def test_minted_tokens_refresh_once_each_for_the_signed_in_customer(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    signed_in = await flows.obtain_tokens(client, scope="email profile")
    database_url = app.services.settings.database_url
    minted = await issue(database_url, flows.TENANT, signed_in.access, flows.REDIRECT_URI, 20)
    assert len(set(minted)) == 20
    assert signed_in.refresh not in minted
    me = await flows.whoami_result(client, signed_in.access)
    for token in minted[:3]:
        refreshed = await flows.refresh(client, signed_in, token)
        assert refreshed.status_code == 200, refreshed.text
        assert refreshed.json()["scope"] == signed_in.scope
        assert await flows.whoami_result(client, refreshed.json()["access_token"]) == me
        # Single use, as a flow's token: sent again, it no longer buys a pair.
        again = await flows.refresh(client, signed_in, token)
        assert again.status_code == 400
    # Each heads a family of its own: the reuse above revoked none of the others.
    last = await flows.refresh(client, signed_in, minted[-1])
    assert last.status_code == 200, last.text


async def test_minting_needs_a_live_access_token_of_the_company(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    signed_in = await flows.obtain_tokens(client)
    database_url = app.services.settings.database_url
    with pytest.raises(MintError, match="not a live token"):
        await issue(database_url, "acme", signed_in.access, flows.REDIRECT_URI, 1)
    with pytest.raises(MintError, match="not a live token"):
        await issue(database_url, flows.TENANT, "fdat_unknown", flows.REDIRECT_URI, 1)
