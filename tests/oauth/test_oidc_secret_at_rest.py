"""The company's OpenID Connect client secret: sealed in its stored row, opened to sign a
customer in; named in the log, and sign-in plainly unavailable, when its variable is unset."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import text

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from tests.oauth import flows
from tests.oauth.test_oidc_login import (
    ALICE,
    RP_CLIENT_ID,
    RP_SECRET,
    TENANT,
    provider_clients,
    sign_in_at,
)
from tests.support.oidc_provider import (
    OidcProvider,
    OidcProviderError,
    ensure_installed,
    run_oidc_provider,
)

pytestmark = pytest.mark.anyio

SECRET_ENV = "UMBRELLA_UNSET_OIDC_SECRET"


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[OidcProvider]:
    try:
        ensure_installed()
    except OidcProviderError as error:
        pytest.skip(f"the OIDC test provider could not be installed: {error}")
    with run_oidc_provider(clients=provider_clients(), accounts=[ALICE]) as running:
        yield running


@pytest.fixture
def make_settings(make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """The test provider listens on loopback, opened to identity providers as to backends."""

    def make(**overrides: Any) -> Settings:
        return make_settings(**{"backend_allowed_networks": ["127.0.0.0/8"], **overrides})

    return make


def company_yaml(issuer: str, secret_line: str) -> str:
    return f"""
companies:
  - tenant_key: {TENANT}
    name: Umbrella Corp
    signin:
      login:
        type: oidc
        issuer: "{issuer}"
        client_id: {RP_CLIENT_ID}
        {secret_line}
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


async def test_a_customer_signs_in_with_the_client_secret_sealed_at_rest(
    app: Frontdesk, client: httpx.AsyncClient, oidc_provider: OidcProvider, tmp_path: Path
) -> None:
    """The secret is given in the file (not by variable): the row holds it sealed, and the
    token request to the provider is authenticated with it all the same."""
    await flows.add_companies(
        app, tmp_path, company_yaml(oidc_provider.issuer, f"client_secret: {RP_SECRET}")
    )
    query = text("SELECT CAST(definition AS TEXT) FROM companies WHERE tenant_key = :key")
    async with app.services.database.engine.connect() as connection:
        row = str((await connection.execute(query, {"key": TENANT})).scalar_one())
    assert RP_SECRET not in row
    tokens = await sign_in_at(client)
    result = await flows.whoami_result(client, tokens.access, TENANT)
    assert result["subject"] == ALICE["sub"]


async def test_an_unset_client_secret_variable_is_named_in_the_log_and_sign_in_unavailable(
    app: Frontdesk,
    client: httpx.AsyncClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The client is sent back temporarily_unavailable (never a 500); the log says which
    company and which variable; the customer's page says neither."""
    monkeypatch.delenv(SECRET_ENV, raising=False)
    await flows.add_companies(
        app,
        tmp_path,
        company_yaml("https://login.umbrella.example", f"client_secret_env: {SECRET_ENV}"),
    )
    client_id = await flows.register(client, TENANT)
    page = await flows.consent_page(client, client_id, flows.Pkce.new(), TENANT, state="s")
    answer = await flows.decide(client, flows.flow_of(page), tenant=TENANT)
    assert answer.status_code == 303
    back = flows.redirect_params(answer)
    assert back["error"] == "temporarily_unavailable"
    assert SECRET_ENV not in answer.headers["location"]
    lines = capsys.readouterr().err.splitlines()
    events = [orjson.loads(line) for line in lines if line.startswith("{")]
    [event] = [event for event in events if event["event"] == "company_secret_unset"]
    assert event["tenant"] == TENANT
    assert event["error"] == (
        f"company '{TENANT}': the environment variable {SECRET_ENV} named by"
        " signin.login.client_secret_env is not set"
    )
