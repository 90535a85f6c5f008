"""Whether a redirect URI sent to authorize is one the client registered (OAuth 2.1 4.1.1,
RFC 8252 7.3), without HTTP."""

from __future__ import annotations

import pytest

from frontdesk.oauth.redirects import is_registered, redirect_with


@pytest.mark.parametrize(
    ("registered", "presented"),
    [
        ("https://app.example/cb", "https://app.example/cb"),
        # A native client takes whatever port is free (VS Code when 33418 is busy).
        ("http://127.0.0.1:33418/callback", "http://127.0.0.1:51234/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback"),
        ("http://[::1]:8080/cb", "http://[::1]:9090/cb"),
        ("http://localhost:6274/oauth/callback", "http://localhost:1/oauth/callback"),
        ("http://127.0.0.1:1/cb?x=1", "http://127.0.0.1:2/cb?x=1"),
        (
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
        ),
    ],
)
def test_registered_redirects_match(registered: str, presented: str) -> None:
    """The same string, or a loopback http URI that differs only in its port."""
    assert is_registered(presented, [registered])


@pytest.mark.parametrize(
    ("registered", "presented"),
    [
        ("https://app.example/cb", "https://app.example/cb/"),
        ("https://app.example/cb", "https://APP.example/cb"),
        # The port of anything but a loopback http URI is compared.
        ("https://app.example:8443/cb", "https://app.example:9443/cb"),
        ("https://127.0.0.1:1/cb", "https://127.0.0.1:2/cb"),
        # Loopback: everything but the port still matches exactly.
        ("http://127.0.0.1:1/callback", "http://127.0.0.1:1/other"),
        ("http://127.0.0.1:1/cb", "http://127.0.0.1:2/cb?x=1"),
        ("http://127.0.0.1:1/cb", "http://localhost:1/cb"),
        ("http://localhost:1/cb", "http://127.0.0.1:1/cb"),
        ("http://127.0.0.1:1/cb", "http://[::1]:1/cb"),
        ("http://127.0.0.1:1/cb", "http://user@127.0.0.1:2/cb"),
        ("http://127.0.0.1:1/cb", "http://127.0.0.1:99999/cb"),
        ("http://127.0.0.1:1/cb", "https://127.0.0.1:1/cb"),
        ("http://127.0.0.1:1/cb", "http://127.0.0.1.nip.io:1/cb"),
        # urlsplit would drop these characters and read the rest as the registered URI.
        ("http://localhost:33418/callback", "http://local\thost:5/callback"),
        ("http://localhost:33418/callback", "http://localhost:5/call\tback"),
        ("http://localhost:33418/callback", "http://localhost:5/callback\n"),
    ],
)
def test_other_redirects_do_not_match(registered: str, presented: str) -> None:
    """No prefix, no normalisation, no other host or scheme, no port outside loopback."""
    assert not is_registered(presented, [registered])


def test_redirect_with_keeps_the_registered_query() -> None:
    """Parameters are added after a query the client registered."""
    assert redirect_with("https://app.example/cb?a=1", {"code": "c", "state": None}) == (
        "https://app.example/cb?a=1&code=c"
    )
