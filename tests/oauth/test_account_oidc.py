"""The customer's own page signed in through a company's OpenID Connect provider (a real
one, npm ``oidc-provider``, on loopback): the same login and callback as a client's
sign-in, ending on the page instead of at a client."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import BASE_URL
from tests.oauth import flows
from tests.oauth import test_oidc_login as oidc
from tests.oauth.test_account_page import SAME_ORIGIN, account_path, csrf_of, listed
from tests.support.oidc_provider import OidcProvider

pytestmark = pytest.mark.anyio

# The provider and the company of the OpenID Connect tests, shared as fixtures here.
provider_installed = oidc.provider_installed
provider = oidc.provider
make_settings = oidc.make_settings
oidc_company = oidc.oidc_company


async def test_the_page_signs_in_through_the_companys_provider(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: oidc.ApplyCompany
) -> None:
    """Provider login → our callback → the page, listing the assistant; removing it makes
    its next call 401."""
    await oidc_company(provider.issuer)
    tokens = await oidc.sign_in_at(client)
    started = await client.get(account_path(oidc.TENANT, "/signin"))
    assert started.status_code == 303
    assert started.headers["location"].startswith(f"{provider.issuer}/")
    back = await client.get(await oidc.at_provider(started.headers["location"]))
    assert back.status_code == 303
    assert back.headers["location"] == f"{BASE_URL}{account_path(oidc.TENANT)}"

    page = (await client.get(account_path(oidc.TENANT))).text
    assert listed(page) == [tokens.client_id]
    assert "Alice Abernathy" in page
    await client.post(
        account_path(oidc.TENANT, "/revoke"),
        data={"client_id": tokens.client_id, "csrf": csrf_of(page)},
        headers={**flows.FORM, **SAME_ORIGIN},
    )
    assert (await flows.whoami(client, tokens.access, oidc.TENANT)).status_code == 401


async def test_a_refused_login_ends_on_a_page_not_at_a_client(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: oidc.ApplyCompany
) -> None:
    """The provider's access_denied for the account's sign-in is a page: no redirect, no
    session."""
    await oidc_company(provider.issuer)
    started = await client.get(account_path(oidc.TENANT, "/signin"))
    callback = await oidc.at_provider(started.headers["location"], login="nobody")
    refused = await client.get(callback)
    assert refused.status_code == 400
    assert "location" not in refused.headers
    assert "You are not signed in" in refused.text
    page = await client.get(account_path(oidc.TENANT))
    assert "Sign in" in page.text
