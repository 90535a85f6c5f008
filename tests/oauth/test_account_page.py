"""The customer's own page (``/v1/{tenantKey}/account``): signed in through the company's
login, it lists the assistants connected to the customer and cuts one off, and refuses
forms from anywhere but itself."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import UTC, datetime
from http.cookies import SimpleCookie

import httpx
import pytest

from frontdesk.account.routes import _entry
from frontdesk.app import Frontdesk
from frontdesk.oauth.account_session import COOKIE_NAME, SESSION_TTL_SECONDS, sessions_for
from frontdesk.oauth.flow import COOKIE_NAME as SIGNIN_COOKIE
from frontdesk.store.connected_clients import ConnectedClient
from frontdesk.store.consents import ConsentRepository
from tests.conftest import BASE_URL, TEST_SECRET
from tests.oauth import flows

# Each test runs on SQLite and PostgreSQL: a revocation must reach PostgreSQL's kept tokens.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

EMAIL = "peter@initech.example"
SAME_ORIGIN = {"origin": BASE_URL, "sec-fetch-site": "same-origin"}


def account_path(tenant: str = flows.TENANT, step: str = "") -> str:
    return f"/v1/{tenant}/account{step}"


async def account_sign_in(
    client: httpx.AsyncClient, tenant: str = flows.TENANT, email: str = EMAIL
) -> httpx.Response:
    """Sign in to the account page through the dev login; the login's answer."""
    started = await client.get(account_path(tenant, "/signin"))
    assert flows.location_path(started) == flows.oauth_path("login", tenant)
    form = await client.get(started.headers["location"])
    page = flows.form_of(form.text)
    assert form.status_code == 200, form.text
    assert page.action is not None
    return await client.post(
        page.action,
        data={"flow": page.inputs["flow"], "email": email, "name": "Peter Gibbons"},
        headers=flows.FORM,
    )


async def signed_in_page(client: httpx.AsyncClient, tenant: str = flows.TENANT) -> str:
    done = await account_sign_in(client, tenant)
    assert done.headers["location"] == f"{BASE_URL}{account_path(tenant)}"
    page = await client.get(account_path(tenant))
    assert page.status_code == 200, page.text
    return page.text


def listed(page: str) -> list[str]:
    """The client ids the page offers to remove."""
    return [html.unescape(found) for found in re.findall(r'name="client_id" value="([^"]*)"', page)]


def csrf_of(page: str) -> str:
    return flows.form_of(page).inputs["csrf"]


async def remove(
    client: httpx.AsyncClient,
    client_id: str,
    csrf: str,
    tenant: str = flows.TENANT,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(
        account_path(tenant, "/revoke"),
        data={"client_id": client_id, "csrf": csrf},
        headers={**flows.FORM, **(SAME_ORIGIN if headers is None else headers)},
    )


async def test_an_unsigned_customer_is_offered_the_company_login(
    client: httpx.AsyncClient,
) -> None:
    """Without a session the page lists nothing and links to the sign-in."""
    page = await client.get(account_path())
    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    assert "no-store" in page.headers["cache-control"]
    assert f'action="{BASE_URL}{account_path(step="/signin")}"' in page.text
    assert listed(page.text) == []


async def test_signing_in_ends_on_the_page_with_a_narrow_session_cookie(
    client: httpx.AsyncClient,
) -> None:
    """The login ends with a 303 to the page, no code, and an HttpOnly, Lax cookie scoped
    to the page's path for 30 minutes; the sign-in's own cookie is spent."""
    done = await account_sign_in(client)
    assert done.status_code == 303
    assert done.headers["location"] == f"{BASE_URL}{account_path()}"
    cookies = SimpleCookie()
    for header in done.headers.get_list("set-cookie"):
        cookies.load(header)
    session = cookies[COOKIE_NAME]
    assert session["path"] == account_path()
    assert session["httponly"] is True
    assert session["samesite"].lower() == "lax"
    assert session["max-age"] == str(SESSION_TTL_SECONDS)
    # The value says only whose page it is, and until when.
    payload = sessions_for((TEST_SECRET,)).open(session.value, flows.TENANT)
    assert payload is not None
    assert cookies[SIGNIN_COOKIE]["max-age"] == "0"


async def test_the_page_lists_each_connected_assistant_once(client: httpx.AsyncClient) -> None:
    """A client allowed twice is one row, with its name, unverified, and its scopes."""
    tokens = await flows.obtain_tokens(client, scope="email")
    await flows.obtain_tokens(client, client_id=tokens.client_id, scope="profile")
    other = await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    assert sorted(listed(page)) == sorted([tokens.client_id, other.client_id])
    headings = re.findall(r'<h2 class="client-name"[^>]*>([^<]*)</h2>', page)
    assert headings == [flows.CLIENT_NAME, flows.CLIENT_NAME]
    assert "is not verified" in page
    assert "see your name" in page
    assert "see your email address" in page
    assert "Not used yet." in page
    await flows.whoami_result(client, other.access)
    assert "Last used" in (await client.get(account_path())).text


async def test_removing_an_assistant_ends_its_whole_family(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Its access token is refused at the next MCP call, its refresh token buys nothing,
    and it leaves the page; another assistant keeps working."""
    kept = await flows.obtain_tokens(client)
    tokens = await flows.obtain_tokens(client)
    renewed = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    await flows.whoami_result(client, renewed.access)  # kept in memory on PostgreSQL
    page = await signed_in_page(client)

    answer = await remove(client, tokens.client_id, csrf_of(page))
    assert flows.location_path(answer) == account_path()

    assert (await flows.whoami(client, renewed.access)).status_code == 401
    assert (await flows.refresh(client, renewed)).json()["error"] == "invalid_grant"
    assert listed((await client.get(account_path())).text) == [kept.client_id]
    await flows.whoami_result(client, kept.access)


async def test_a_form_without_the_sessions_csrf_token_is_refused(client: httpx.AsyncClient) -> None:
    """A missing, wrong or other session's token is 403, and the assistant keeps working."""
    tokens = await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    token = csrf_of(page)
    for wrong in ("", "x" * len(token), token[:-1], token + "A", "é"):
        answer = await remove(client, tokens.client_id, wrong)
        assert answer.status_code == 403, wrong
        assert "location" not in answer.headers
    await flows.whoami_result(client, tokens.access)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"origin": "https://attacker.example"},
        {"origin": "https://attacker.example", "sec-fetch-site": "cross-site"},
        {"origin": BASE_URL, "sec-fetch-site": "cross-site"},
        {"origin": BASE_URL, "sec-fetch-site": "same-site"},
        {"origin": "null"},
        {"origin": "null", "sec-fetch-site": "cross-site"},
    ],
)
async def test_a_form_from_another_origin_is_refused(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    """With the right token, a form whose Origin or Fetch Metadata names no page of ours is
    still 403, and the assistant keeps working."""
    tokens = await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    answer = await remove(client, tokens.client_id, csrf_of(page), headers=headers)
    assert answer.status_code == 403
    await flows.whoami_result(client, tokens.access)


async def test_a_browsers_null_origin_is_taken_with_same_origin_fetch_metadata(
    client: httpx.AsyncClient,
) -> None:
    """Under our no-referrer policy a browser posts ``Origin: null``; with
    ``Sec-Fetch-Site: same-origin`` that is our own page."""
    tokens = await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    headers = {"origin": "null", "sec-fetch-site": "same-origin"}
    answer = await remove(client, tokens.client_id, csrf_of(page), headers=headers)
    assert answer.status_code == 303
    assert (await flows.whoami(client, tokens.access)).status_code == 401


async def test_a_customer_sees_and_ends_only_their_own_grants(
    client: httpx.AsyncClient, browser: Callable[[], httpx.AsyncClient]
) -> None:
    """Another customer of the same company, with the same client, is neither listed nor
    touched when this customer removes it."""
    mine = await flows.obtain_tokens(client)
    async with browser() as milton:
        theirs = await flows.obtain_tokens(
            milton, client_id=mine.client_id, email="milton@initech.example"
        )
        only_theirs = await flows.obtain_tokens(milton, email="milton@initech.example")
    page = await signed_in_page(client)
    assert listed(page) == [mine.client_id]

    await remove(client, mine.client_id, csrf_of(page))
    # Naming a client only the other customer holds ends nothing either.
    await remove(client, only_theirs.client_id, csrf_of(page))
    assert (await flows.whoami(client, mine.access)).status_code == 401
    await flows.whoami_result(client, theirs.access)
    await flows.whoami_result(client, only_theirs.access)


async def test_a_session_is_worth_nothing_at_another_company(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """The same customer's session of initech, sent to hooli's page, is no session there,
    and hooli's grants of the same email address stay apart."""
    at_hooli = await flows.obtain_tokens(client, "hooli")
    await signed_in_page(client)
    value = client.cookies.get(COOKIE_NAME, path=account_path())
    assert value is not None
    client.cookies.set(COOKIE_NAME, value, path=account_path("hooli"))
    page = await client.get(account_path("hooli"))
    assert listed(page.text) == []
    assert "Sign in" in page.text
    answer = await remove(client, at_hooli.client_id, "anything", "hooli")
    assert answer.status_code == 401
    await flows.whoami_result(client, at_hooli.access, "hooli")


async def test_a_forged_session_is_no_session(client: httpx.AsyncClient) -> None:
    """A session cookie signed under another key, or for a purpose not its own, is ignored."""
    tokens = await flows.obtain_tokens(client)
    forged = sessions_for(("another-secret-key-of-at-least-32-chars!",)).issue(flows.TENANT, 1)
    client.cookies.set(COOKIE_NAME, forged, path=account_path())
    page = await client.get(account_path())
    assert listed(page.text) == []
    assert (await remove(client, tokens.client_id, "x")).status_code in (401, 403)
    await flows.whoami_result(client, tokens.access)


async def test_signing_out_ends_the_session(client: httpx.AsyncClient) -> None:
    """Sign out clears the cookie; the page then asks to sign in again."""
    await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    answer = await client.post(
        account_path(step="/signout"),
        data={"csrf": csrf_of(page)},
        headers={**flows.FORM, **SAME_ORIGIN},
    )
    assert answer.status_code == 303
    assert listed((await client.get(account_path())).text) == []


async def test_removing_an_assistant_forgets_the_customers_consent(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """What the customer allowed the client is forgotten: its next sign-in asks again."""
    tokens = await flows.obtain_tokens(client)
    page = await signed_in_page(client)
    current = sessions_for((TEST_SECRET,)).open(
        client.cookies.get(COOKIE_NAME, path=account_path()), flows.TENANT
    )
    assert current is not None
    consents = ConsentRepository(app.services.database.engine)
    await consents.remember(flows.TENANT, current.customer_id, tokens.client_id, "profile email")
    await remove(client, tokens.client_id, csrf_of(page))
    assert not await consents.has_consented(
        flows.TENANT, current.customer_id, tokens.client_id, "profile"
    )


async def test_a_metadata_document_client_is_shown_by_its_verified_host() -> None:
    """A client whose id is its metadata document's URL is named by that URL's host, the one
    thing about it that was verified, and is not marked unverified."""
    moment = datetime.now(UTC)
    shown = _entry(
        ConnectedClient("https://app.example.com/oauth/client.json", None, (), moment, None),
        "Claude",
    )
    assert shown["name"] == "app.example.com"
    assert shown["shown"].verified_host == "app.example.com"
    assert shown["shown"].calls_itself == "Claude"
    assert shown["last_used_at"] is None
