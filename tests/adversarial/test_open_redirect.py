"""Open-redirect attempts at authorize (interface 4.3, RFC 9700 4.1): a redirect_uri that is not
exactly a registered one gets a 400 page, never a Location, never a sign-in cookie.
tests/oauth/test_authorize.py covers trailing slash, added path and query, another port,
another host and scheme case; these are the tricks that fool URL parsers."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from frontdesk.app import Frontdesk
from tests.adversarial.conftest import FUZZ, snapshot
from tests.oauth import flows

pytestmark = pytest.mark.anyio

REGISTERED = "https://app.example/cb"
LOOPBACK = flows.REDIRECT_URI

TRICKS = (
    "https://app.example@evil.example/cb",
    "https://app.example:pw@evil.example/cb",
    "https://evil.example@app.example/cb",
    "https://evil.example#@app.example/cb",
    "https://evil.example?@app.example/cb",
    "https://evil.example\\@app.example/cb",
    "https://app.example\\@evil.example/cb",
    "https://app.example\\.evil.example/cb",
    "https://app.example%2F@evil.example/cb",
    "https://app.example%2Fcb",
    "https://app.example/cb%2F..%2F..%2Fevil",
    "https://app.example/cb/../cb",
    "https://app.example/./cb",
    "https://app.example//cb",
    "https://app.example/CB",
    "https://APP.example/cb",
    "https://app.EXAMPLE/cb",
    "HTTPS://app.example/cb",
    "https://app.example:443/cb",
    "https://app.example./cb",
    "https://app.example/cb#",
    "https://app.example/cb#@evil.example",
    "https://app.example/cb?",
    "https://app.example/cb&redirect=https://evil.example",
    "https://app.example/cb;evil",
    "https://app.example/cb%00",
    "https://app.example/cb\x00",
    "https://app.example/cb ",
    " https://app.example/cb",
    "https://app.example/cb\t",
    "https://app.example/cb\r\n",
    "https://app.exampl\u0435/cb",
    "https://xn--app-example/cb",
    "//evil.example/cb",
    "/cb",
    "https:/app.example/cb",
    "https:app.example/cb",
    "http://app.example/cb",
    "https://app.example",
    LOOPBACK.replace("127.0.0.1", "localhost"),
    LOOPBACK.replace("127.0.0.1", "[::1]"),
    LOOPBACK.replace("127.0.0.1", "127.0.0.2"),
    LOOPBACK.replace("127.0.0.1", "2130706433"),
    LOOPBACK.replace("127.0.0.1", "0x7f.1"),
    # (Without the port it is the registered URI: RFC 8252 7.3, any loopback port.)
    LOOPBACK.replace("http:", "https:"),
)


@pytest.fixture
async def client_id(client: httpx.AsyncClient) -> str:
    """A client registered for one https and one loopback redirect URI."""
    return await flows.register(client, redirect_uris=[REGISTERED, LOOPBACK])


def assert_refused(response: httpx.Response) -> None:
    """The 400 page: no Location, no cookie binding a sign-in to the browser."""
    assert response.status_code == 400, response.headers.get("location")
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers
    assert "set-cookie" not in response.headers


async def test_parser_tricks_on_the_redirect_uri_get_a_page_and_no_redirect(
    app: Frontdesk, client: httpx.AsyncClient, client_id: str
) -> None:
    """Userinfo, backslash, encoded slash, case, port and lookalike tricks: a 400 page."""
    before = await snapshot(app)
    for trick in TRICKS:
        params = flows.authorize_params(client_id, flows.Pkce.new(), redirect_uri=trick)
        response = await flows.authorize(client, params)
        assert_refused(response)
    assert await snapshot(app) == before
    # Control: the registered URIs themselves lead to the consent page.
    for registered in (REGISTERED, LOOPBACK):
        await flows.consent_page(client, client_id, flows.Pkce.new(), redirect_uri=registered)


async def test_a_redirect_uri_another_client_registered_is_refused(
    client: httpx.AsyncClient,
) -> None:
    """The attacker's own registered URI, named with the victim client's id: 400 page."""
    victim = await flows.register(client, redirect_uris=[REGISTERED])
    await flows.register(client, redirect_uris=["https://evil.example/cb"])
    params = flows.authorize_params(
        victim, flows.Pkce.new(), redirect_uri="https://evil.example/cb"
    )
    assert_refused(await flows.authorize(client, params))


@hypothesis_settings(FUZZ, max_examples=200)
@given(
    st.one_of(
        st.builds(
            lambda cut, insert: REGISTERED[:cut] + insert + REGISTERED[cut:],
            st.integers(min_value=0, max_value=len(REGISTERED)),
            st.text(min_size=1, max_size=4),
        ),
        st.builds(
            lambda start, end: REGISTERED[:start] + REGISTERED[end:],
            st.integers(min_value=0, max_value=len(REGISTERED)),
            st.integers(min_value=1, max_value=len(REGISTERED)),
        ),
        st.text(max_size=40),
    )
)
async def test_any_other_redirect_uri_gets_a_page_and_no_redirect(
    client: httpx.AsyncClient, client_id: str, uri: str
) -> None:
    """Any string that differs from every registered URI, however slightly: 400 page."""
    assume(uri not in (REGISTERED, LOOPBACK))
    params = flows.authorize_params(client_id, flows.Pkce.new(), redirect_uri=uri)
    assert_refused(await flows.authorize(client, params))
