"""Header injection through ``state`` and redirect URIs (RFC 6749 4.1.2, DESIGN: authorize
errors): whatever the client sends, every header the service writes stays one line, and
the Location is exactly the registered redirect URI plus encoded parameters."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.adversarial.conftest import FUZZ, RawClient, assert_clean_headers
from tests.oauth import flows

pytestmark = pytest.mark.anyio

ODD_STATES = (
    "line\r\nSet-Cookie: injected=1",
    "\r\n\r\n<html>body</html>",
    "%0d%0aSet-Cookie:%20injected=1",
    "%0D%0ALocation: https://evil.example",
    "quote\"d'single",
    "nul\x00byte",
    "tab\tand\vvertical",
    "caf\u00e9 \u2028 \U0001f600",
    "a&b=c?d#e",
    "s" * 2048,
)


def assert_exact_location(location: str, registered: str, expected: dict[str, str]) -> None:
    """``registered`` plus one encoded query of ``expected`` (in any order), nothing else."""
    separator = "&" if "?" in registered else "?"
    assert location.startswith(registered + separator), location
    added = location[len(registered) + 1 :]
    pairs = parse_qsl(added, keep_blank_values=True, strict_parsing=True)
    assert urlencode(pairs) == added, location
    assert dict(pairs) == expected, location
    assert len(pairs) == len(expected)
    assert not any(char in location for char in "\r\n\x00\"' <>\\"), location


async def start(raw_client: RawClient, redirect_uri: str, state: str, **extra: str) -> str:
    """Register a client for ``redirect_uri`` and ask to authorize it; the client id."""
    client = raw_client.client
    client_id = await flows.register(client, redirect_uris=[redirect_uri])
    params = {**flows.authorize_params(client_id, flows.Pkce.new(), redirect_uri=redirect_uri)}
    params.update(extra)
    params["state"] = state
    # Sent as bytes, so nothing on the way tidies the state up.
    raw_client.raw.query = "&".join(
        f"{name}={quote(value, safe='')}" for name, value in params.items()
    ).encode()
    return client_id


@hypothesis_settings(FUZZ, max_examples=150)
@given(st.text(max_size=300) | st.sampled_from(ODD_STATES))
async def test_any_state_comes_back_encoded_in_an_exact_location(
    raw_client: RawClient, state: str
) -> None:
    """Any state: clean headers, and a Location of the redirect URI plus encoded params."""
    await start(raw_client, flows.REDIRECT_URI, state, response_type="token")
    response = await raw_client.client.get(flows.oauth_path("authorize"))
    assert_clean_headers(raw_client.raw.headers())
    assert response.status_code == 303
    [location] = raw_client.raw.values(b"location")
    back = dict(parse_qsl(location.decode("ascii").partition("?")[2]))
    assert_exact_location(
        location.decode("ascii"),
        flows.REDIRECT_URI,
        {
            "error": "unsupported_response_type",
            "error_description": back["error_description"],
            "state": state,
            "iss": flows.issuer(),
        },
    )
    assert not raw_client.raw.values(b"set-cookie")


REGISTERED = (
    flows.REDIRECT_URI,
    "https://app.example/cb?tenant=7&x=%22",
    "https://app.example/cb%0d%0aSet-Cookie:x=1",
    "https://app.example/a;b=c/cb?q=%0A",
)


async def test_a_finished_sign_in_sends_an_exact_location_and_clean_headers(
    raw_client: RawClient,
) -> None:
    """Odd states and redirect URIs: every step's headers clean, the code on the exact URI."""
    client = raw_client.client
    for redirect_uri in REGISTERED:
        for state in ODD_STATES:
            await start(raw_client, redirect_uri, state)
            page = await client.get(flows.oauth_path("authorize"))
            allowed = await flows.decide(client, flows.flow_of(page))
            back = await flows.dev_login(client, allowed)
            assert back.status_code == 303, back.text
            [location] = raw_client.raw.values(b"location")
            code = dict(parse_qsl(location.decode("ascii").partition("?")[2]))["code"]
            assert_exact_location(
                location.decode("ascii"),
                redirect_uri,
                {"code": code, "state": state, "iss": flows.issuer()},
            )
    assert_clean_headers(raw_client.raw.every_header())


async def test_a_denied_sign_in_sends_an_exact_location_and_clean_headers(
    raw_client: RawClient,
) -> None:
    """Deny with odd states and redirect URIs: access_denied on exactly the registered URI."""
    client = raw_client.client
    for redirect_uri in REGISTERED:
        for state in ODD_STATES:
            await start(raw_client, redirect_uri, state)
            page = await client.get(flows.oauth_path("authorize"))
            denied = await flows.decide(client, flows.flow_of(page), "deny")
            assert denied.status_code == 303
            [location] = raw_client.raw.values(b"location")
            assert_exact_location(
                location.decode("ascii"),
                redirect_uri,
                {
                    "error": "access_denied",
                    "error_description": "the customer denied the request",
                    "state": state,
                    "iss": flows.issuer(),
                },
            )
    assert_clean_headers(raw_client.raw.every_header())


async def test_redirect_uris_that_would_inject_are_never_registered(
    raw_client: RawClient,
) -> None:
    """CR, LF, NUL, quotes and spaces in a redirect URI are refused at registration."""
    for uri in (
        "https://app.example/cb\r\nSet-Cookie: x=1",
        "https://app.example/cb\nLocation: https://evil.example",
        "https://app.example/cb\x00",
        'https://app.example/cb"',
        "https://app.example/c b",
    ):
        response = await flows.register_response(raw_client.client, {"redirect_uris": [uri]})
        assert response.status_code == 400, uri
    assert_clean_headers(raw_client.raw.every_header())
