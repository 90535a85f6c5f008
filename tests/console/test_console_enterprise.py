"""The console's sign-in page names the enterprise identity providers a company trusts
(companies.enterprise_providers), and says nothing of them where there are none."""

from __future__ import annotations

from typing import Any

import pytest

from tests.console.support import console_sign_in
from tests.support.serving import Serve

pytestmark = pytest.mark.anyio

ISSUER = "https://idp.vandelay.example"


def company(**signin: Any) -> dict[str, Any]:
    return {
        "tenant_key": "vandelay",
        "name": "Vandelay Industries",
        "signin": {"login": {"type": "dev"}, **signin},
        "console": {"login": {"type": "dev"}, "staff": {"domains": ["vandelay.example"]}},
    }


@pytest.mark.parametrize("trusted", [True, False])
async def test_the_signin_page_names_the_trusted_issuers(serve: Serve, trusted: bool) -> None:
    providers = [{"issuer": ISSUER, "jwks_uri": f"{ISSUER}/keys"}] if trusted else []
    served = await serve(company(enterprise_providers=providers), company_cache_seconds=0)
    await console_sign_in(served.client)

    page = await served.client.get("/console/vandelay/signin")

    assert page.status_code == 200, page.text
    assert ("Enterprise identity providers" in page.text) is trusted
    assert (ISSUER in page.text) is trusted
