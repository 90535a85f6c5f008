"""The authorize endpoint's checks (interface 4.3, 7.2): errors before the redirect URI is verified
are pages; every later error is a 303 back to the client with ``error``, ``state``, ``iss``."""

from __future__ import annotations

import httpx
import pytest

from tests.oauth import flows

pytestmark = pytest.mark.anyio

STATE = "af0ifjsldkj"


def assert_error_page(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers
    assert "frontdesk_signin" not in response.headers.get("set-cookie", "")


async def test_an_unknown_client_gets_a_page_and_no_redirect(client: httpx.AsyncClient) -> None:
    """An unregistered client_id: 400 HTML, nothing is sent to its redirect URI."""
    params = flows.authorize_params("fdc_nobody", flows.Pkce.new(), state=STATE)
    assert_error_page(await flows.authorize(client, params))


async def test_a_missing_client_id_gets_a_page_and_no_redirect(client: httpx.AsyncClient) -> None:
    """No client_id at all: 400 HTML."""
    params = flows.authorize_params("x", flows.Pkce.new())
    del params["client_id"]
    assert_error_page(await flows.authorize(client, params))


async def test_a_repeated_client_id_gets_a_page(client: httpx.AsyncClient) -> None:
    """client_id given twice cannot be trusted to name one client: 400 HTML."""
    client_id = await flows.register(client)
    params = list(flows.authorize_params(client_id, flows.Pkce.new()).items())
    assert_error_page(await flows.authorize(client, [*params, ("client_id", client_id)]))


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://127.0.0.1:33418/callback/",
        "http://127.0.0.1:33418/callback/evil",
        "http://127.0.0.1:33418/callback?x=1",
        "http://localhost:33418/callback",
        "https://evil.example/callback",
        "HTTP://127.0.0.1:33418/callback",
        "",
    ],
)
async def test_an_unregistered_redirect_uri_gets_a_page_and_no_redirect(
    client: httpx.AsyncClient, redirect_uri: str
) -> None:
    """The redirect URI must match a registered one exactly (a loopback port aside,
    tests/oauth/test_client_shapes.py); otherwise 400 HTML."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), redirect_uri=redirect_uri)
    assert_error_page(await flows.authorize(client, params))


async def test_a_missing_redirect_uri_gets_a_page(client: httpx.AsyncClient) -> None:
    """Without redirect_uri there is no verified place to send an error: 400 HTML."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new())
    del params["redirect_uri"]
    assert_error_page(await flows.authorize(client, params))


async def test_a_client_of_another_company_is_unknown(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """A hooli client at initech's authorize: 400 HTML, as for an unknown client."""
    client_id = await flows.register(client, "hooli")
    params = flows.authorize_params(client_id, flows.Pkce.new())
    assert_error_page(await flows.authorize(client, params, "initech"))


def _drop(name: str) -> dict[str, str | None]:
    return {name: None}


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"response_type": "code id_token"}, "unsupported_response_type"),
        (_drop("response_type"), "unsupported_response_type"),
        (_drop("code_challenge_method"), "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": "s256"}, "invalid_request"),
        (_drop("code_challenge"), "invalid_request"),
        ({"code_challenge": "tooshort"}, "invalid_request"),
        ({"code_challenge": "A" * 42}, "invalid_request"),
        ({"code_challenge": "A" * 44}, "invalid_request"),
        ({"code_challenge": "A" * 42 + "="}, "invalid_request"),
        ({"code_challenge": "A" * 43 + "\n"}, "invalid_request"),
        ({"resource": "https://evil.example/v1/initech/mcp"}, "invalid_target"),
        ({"resource": "http://127.0.0.1:8000/v1/acme/mcp"}, "invalid_target"),
        ({"resource": "http://127.0.0.1:8000/v1/initech/oauth"}, "invalid_target"),
        ({"state": "s" * 2049}, "invalid_request"),
    ],
)
async def test_errors_after_the_redirect_uri_is_verified_go_back_to_the_client(
    client: httpx.AsyncClient, changes: dict[str, str | None], error: str
) -> None:
    """303 to the redirect URI with error, the client's state and our iss (RFC 9207)."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), state=STATE)
    for name, value in changes.items():
        if value is None:
            del params[name]
        else:
            params[name] = value
    response = await flows.authorize(client, params)
    back = flows.redirect_params(response)
    assert back["error"] == error
    assert back["state"] == params["state"]
    assert back["iss"] == flows.issuer()
    assert "code" not in back
    assert "no-store" in response.headers["cache-control"]


@pytest.mark.parametrize("repeated", ["scope", "state", "code_challenge", "resource"])
async def test_a_repeated_parameter_goes_back_as_invalid_request(
    client: httpx.AsyncClient, repeated: str
) -> None:
    """Any parameter after the redirect URI given twice: 303 invalid_request (RFC 6749 3.1)."""
    client_id = await flows.register(client)
    params = flows.authorize_params(
        client_id, flows.Pkce.new(), scope="email", resource=flows.mcp_url()
    )
    pairs = [*params.items(), (repeated, params[repeated])]
    back = flows.redirect_params(await flows.authorize(client, pairs))
    assert back["error"] == "invalid_request"
    assert back["iss"] == flows.issuer()


async def test_an_error_without_state_carries_no_state(client: httpx.AsyncClient) -> None:
    """No state was sent, so none comes back."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), state=None)
    params["code_challenge_method"] = "plain"
    back = flows.redirect_params(await flows.authorize(client, params))
    assert back["error"] == "invalid_request"
    assert "state" not in back


async def test_an_error_keeps_the_query_of_the_registered_redirect_uri(
    client: httpx.AsyncClient,
) -> None:
    """A redirect URI with a query keeps it; the error parameters are added to it."""
    redirect_uri = "https://app.example/cb?tenant=7"
    client_id = await flows.register(client, redirect_uris=[redirect_uri])
    params = flows.authorize_params(client_id, flows.Pkce.new(), redirect_uri=redirect_uri)
    params["response_type"] = "token"
    response = await flows.authorize(client, params)
    location = response.headers["location"]
    assert location.startswith("https://app.example/cb?tenant=7&")
    assert "error=unsupported_response_type" in location


@pytest.mark.parametrize(
    "state",
    [
        'quote"d',
        "single'quote",
        "line\r\nSet-Cookie: injected=1",
        "new\nline",
        "<script>alert(1)</script>",
        "spaces and &amp; = ?",
    ],
)
async def test_state_comes_back_url_encoded_and_unchanged(
    client: httpx.AsyncClient, state: str
) -> None:
    """Odd state returns verbatim inside the query, never as a header injection."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), state=state)
    params["response_type"] = "token"
    response = await flows.authorize(client, params)
    location = response.headers["location"]
    assert not any(char in location for char in "\r\n\"'<> ")
    assert flows.redirect_params(response)["state"] == state
    assert "injected" not in response.headers.get("set-cookie", "")
    assert all(name != "injected" for name in response.cookies)


async def test_odd_state_comes_back_unchanged_with_the_code(client: httpx.AsyncClient) -> None:
    """The state of a successful sign-in also returns verbatim (flows.sign_in checks it)."""
    signed_in = await flows.sign_in(client, state='x"y\r\nz')
    assert signed_in.state == 'x"y\r\nz'


@pytest.mark.parametrize(
    ("scope", "shown"),
    [
        (None, {"see your name", "see your email address"}),
        ("", {"see your name", "see your email address"}),
        ("email", {"see your email address"}),
        ("profile", {"see your name"}),
        ("openid offline_access email", {"see your email address"}),
        ("openid offline_access", {"see your name", "see your email address"}),
    ],
)
async def test_scopes_are_resolved_before_consent(
    client: httpx.AsyncClient, scope: str | None, shown: set[str]
) -> None:
    """openid and offline_access are dropped, not refused; none asked means both."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), scope=scope)
    response = await flows.authorize(client, params)
    assert response.status_code == 200, response.headers.get("location")
    for text in {"see your name", "see your email address"}:
        assert (text in response.text) == (text in shown)


@pytest.mark.parametrize(
    ("scope", "granted"),
    [(None, "profile email"), ("openid email", "email"), ("profile openid", "profile")],
)
async def test_the_granted_scope_reaches_the_token(
    client: httpx.AsyncClient, scope: str | None, granted: str
) -> None:
    """The token response names the scope the customer consented to."""
    tokens = await flows.obtain_tokens(client, scope=scope)
    assert set(tokens.scope.split()) == set(granted.split())


@pytest.mark.parametrize("resource", [flows.mcp_url(), flows.mcp_url() + "/"])
async def test_this_companys_mcp_endpoint_is_an_accepted_resource(
    client: httpx.AsyncClient, resource: str
) -> None:
    """resource naming initech's MCP endpoint (RFC 8707) leads to the consent page."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), resource=resource)
    response = await flows.authorize(client, params)
    assert response.status_code == 200, response.headers.get("location")


async def test_a_state_of_the_longest_allowed_length_survives_the_sign_in(
    client: httpx.AsyncClient,
) -> None:
    """A 2048-character state goes through consent and login and comes back verbatim."""
    state = "s" * 2048
    signed_in = await flows.sign_in(client, state=state)
    assert signed_in.state == state


@pytest.mark.parametrize("state", ["\u00e9" * 2048, "\x01" * 600, '"' * 1500])
async def test_a_request_too_large_to_carry_through_the_sign_in_is_refused_at_once(
    client: httpx.AsyncClient, state: str
) -> None:
    """A state that cannot travel in the sealed flow is refused before consent, not after."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new(), state=state)
    back = flows.redirect_params(await flows.authorize(client, params))
    assert back["error"] == "invalid_request"
    assert back["state"] == state
