"""Remembered consent (store.consents, oauth.remembered): a customer who allowed a client is
not asked again for the same or fewer scopes until the client's grant is revoked; and the
consent page's branding, provenance and wording."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.oauth.remembered import REMEMBERED_COOKIE
from frontdesk.store import consents
from tests.oauth import flows
from tests.oauth.conftest import Serve, Served

pytestmark = pytest.mark.anyio

Browser = Callable[[], httpx.AsyncClient]


async def authorize(
    client: httpx.AsyncClient, client_id: str, scope: str | None = None, tenant: str = flows.TENANT
) -> httpx.Response:
    params = flows.authorize_params(client_id, flows.Pkce.new(), scope=scope)
    return await flows.authorize(client, params, tenant)


def skipped_consent(response: httpx.Response, tenant: str = flows.TENANT) -> bool:
    """True when authorize went straight to the company's login; False for the page."""
    if response.status_code == 200:
        assert response.headers["content-type"].startswith("text/html")
        return False
    assert flows.location_path(response) == f"/v1/{tenant}/oauth/login"
    return True


async def test_a_second_sign_in_with_the_same_scopes_is_not_asked_again(
    client: httpx.AsyncClient,
) -> None:
    """The first sign-in shows the page; the next goes to the login and still gets a code."""
    client_id = await flows.register(client)
    assert not skipped_consent(await authorize(client, client_id))
    await flows.sign_in(client, client_id=client_id)

    again = await authorize(client, client_id)
    assert skipped_consent(again)
    # The login that follows binds this browser as the consent page would have.
    back = flows.redirect_params(await flows.dev_login(client, again))
    assert set(back) == {"code", "state", "iss"}


async def test_someone_else_signing_in_on_a_shared_browser_gets_no_code(
    client: httpx.AsyncClient,
) -> None:
    """The page was skipped for the customer the browser remembers; another customer who
    signs in there never allowed the client: no code, and the next try asks them."""
    client_id = await flows.register(client)
    await flows.sign_in(client, client_id=client_id, email="peter@initech.example")

    again = await authorize(client, client_id)
    assert skipped_consent(again)
    back = flows.redirect_params(
        await flows.dev_login(client, again, email="samir@initech.example")
    )
    assert back["error"] == "access_denied"
    assert "code" not in back
    # The browser no longer names Peter: Samir is asked, and a code follows his consent.
    assert REMEMBERED_COOKIE not in client.cookies
    assert not skipped_consent(await authorize(client, client_id))
    await flows.sign_in(client, client_id=client_id, email="samir@initech.example")


async def test_fewer_scopes_are_not_asked_again_and_more_are(client: httpx.AsyncClient) -> None:
    client_id = await flows.register(client)
    await flows.sign_in(client, client_id=client_id, scope="email")
    assert skipped_consent(await authorize(client, client_id, "email"))
    assert not skipped_consent(await authorize(client, client_id, "profile email"))

    # Allowing the wider request widens what was allowed: both are now skipped.
    await flows.sign_in(client, client_id=client_id, scope="profile email")
    assert skipped_consent(await authorize(client, client_id, "profile"))
    assert skipped_consent(await authorize(client, client_id, "email profile"))


async def test_another_client_and_another_browser_are_asked(
    client: httpx.AsyncClient, browser: Browser
) -> None:
    client_id = await flows.register(client)
    await flows.sign_in(client, client_id=client_id)
    other_client = await flows.register(client)
    assert not skipped_consent(await authorize(client, other_client))
    async with browser() as elsewhere:
        assert not skipped_consent(await authorize(elsewhere, client_id))


async def test_revoking_the_grant_forgets_the_consent(client: httpx.AsyncClient) -> None:
    """RFC 7009 revocation of the refresh token ends the grant: the page is shown again."""
    tokens = await flows.obtain_tokens(client)
    assert skipped_consent(await authorize(client, tokens.client_id))

    revoked = await flows.revoke(client, tokens.refresh, tokens.client_id)
    assert revoked.status_code == 200
    assert not skipped_consent(await authorize(client, tokens.client_id))


@pytest.mark.usefixtures("database_url")
async def test_a_reused_refresh_token_forgets_the_consent(client: httpx.AsyncClient) -> None:
    """Reuse means the token reached someone else (RFC 9700 4.14.2): the family ends and
    the customer is asked again rather than a code handed to whoever asks next."""
    first = await flows.obtain_tokens(client)
    newest = flows.tokens_of(await flows.refresh(client, first), first.client_id)
    assert (await flows.whoami(client, newest.access)).status_code == 200
    assert skipped_consent(await authorize(client, first.client_id))

    assert (await flows.refresh(client, first)).status_code == 400
    assert not skipped_consent(await authorize(client, first.client_id))


@pytest.mark.usefixtures("database_url")
async def test_a_replayed_code_forgets_the_consent(client: httpx.AsyncClient) -> None:
    signed_in = await flows.sign_in(client)
    assert (await flows.exchange(client, signed_in)).status_code == 200
    assert skipped_consent(await authorize(client, signed_in.client_id))

    assert (await flows.exchange(client, signed_in)).status_code == 400
    assert not skipped_consent(await authorize(client, signed_in.client_id))


async def test_a_forged_remembered_cookie_is_ignored(client: httpx.AsyncClient) -> None:
    client_id = await flows.register(client)
    await flows.sign_in(client, client_id=client_id)
    path = f"/v1/{flows.TENANT}/oauth"
    genuine = client.cookies.get(REMEMBERED_COOKIE, path=path)
    assert genuine is not None
    body, _, mac = genuine.partition(".")
    client.cookies.set(REMEMBERED_COOKIE, f"{body}.{mac[::-1]}", path=path)
    assert not skipped_consent(await authorize(client, client_id))


async def test_the_store_widens_checks_and_forgets_on_sqlite(serve: Serve) -> None:
    await check_the_store(await serve())


@pytest.mark.postgres
async def test_the_store_widens_checks_and_forgets_on_postgres(
    serve: Serve, postgres_url: str
) -> None:
    await check_the_store(await serve(database_url=postgres_url))


async def check_the_store(served: Served) -> None:
    """remember / has_consented / forget, per customer and client, never across companies."""
    await flows.sign_in(served.client, email="ann@initech.example")
    engine = served.app.services.database.engine
    async with engine.connect() as connection:
        customer_id = (await connection.exec_driver_sql("SELECT id FROM customers")).scalar_one()
    now = datetime.now(UTC)
    async with engine.begin() as connection:
        await consents.remember(connection, "initech", customer_id, "app", "email", now)
        await consents.remember(connection, "initech", customer_id, "app", "profile", now)
        await consents.remember(connection, "initech", customer_id, "other", "email", now)
    async with engine.begin() as connection:
        assert await consents.has_consented(
            connection, "initech", customer_id, "app", "email profile"
        )
        assert await consents.has_consented(connection, "initech", customer_id, "app", "")
        assert not await consents.has_consented(
            connection, "initech", customer_id, "other", "profile"
        )
        assert not await consents.has_consented(connection, "hooli", customer_id, "app", "email")
        await consents.forget(connection, "hooli", customer_id, "app")
        assert await consents.has_consented(connection, "initech", customer_id, "app", "email")
        await consents.forget(connection, "initech", customer_id, "app")
        assert not await consents.has_consented(connection, "initech", customer_id, "app", "email")
        assert await consents.has_consented(connection, "initech", customer_id, "other", "email")


BRANDED = """
companies:
  - tenant_key: roasters
    name: Demo Coffee Roasters
    signin:
      login: {type: dev}
    branding:
      logo_url: https://cdn.roasters.example:8443/logo.svg
      logo_alt: Demo Coffee Roasters logo
      accent_color: "#FFD500"
      privacy_url: https://roasters.example/privacy
      terms_url: https://roasters.example/terms
      support: help@roasters.example
"""


async def test_the_consent_page_is_branded_and_allows_only_the_logo_origin_for_images(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    await flows.add_companies(app, tmp_path, BRANDED)
    client_id = await flows.register(client, "roasters")
    page = await authorize(client, client_id, tenant="roasters")
    assert page.status_code == 200, page.text
    text = html.unescape(page.text)
    assert "use Demo Coffee Roasters' assistant tools as you" in text
    assert "Roasters's" not in text
    assert (
        'src="https://cdn.roasters.example:8443/logo.svg" alt="Demo Coffee Roasters logo"' in text
    )
    assert 'href="https://roasters.example/privacy"' in text
    assert 'href="https://roasters.example/terms"' in text
    assert 'href="mailto:help@roasters.example"' in text
    # Yellow takes black text: white on it would be 1.4:1.
    assert "--accent: #ffd500;" in text
    assert "--accent-text: #000000;" in text
    assert "this app's name was chosen by" in text
    policy = page.headers["content-security-policy"]
    assert policy == (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none';"
        " base-uri 'none'; img-src https://cdn.roasters.example:8443"
    )

    # Its error pages too; another company's pages allow no image at all.
    error = await flows.authorize(client, {"client_id": "nobody"}, "roasters")
    assert error.status_code == 400
    assert "img-src https://cdn.roasters.example:8443" in error.headers["content-security-policy"]
    assert 'href="mailto:help@roasters.example"' in error.text
    plain = await authorize(client, await flows.register(client))
    assert "img-src" not in plain.headers["content-security-policy"]
    assert "cdn.roasters.example" not in plain.text
