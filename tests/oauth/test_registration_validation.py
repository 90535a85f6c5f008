"""Registration metadata checks without HTTP (RFC 7591; interface 2.3; DESIGN: redirect URIs):
as lenient as RFC 7591 3.2.1 allows, strict on redirect URIs."""

from __future__ import annotations

from typing import Any

import pytest

from frontdesk.oauth.errors import InvalidClientMetadata, InvalidRedirectUri, OAuthError
from frontdesk.oauth.redirects import check_redirect_uri, is_loopback
from frontdesk.oauth.register import parse_registration

OK = "https://app.example/cb"


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb",
        "https://app.example:8443/cb?x=1",
        "https://127.0.0.1/cb",
        "http://localhost/cb",
        "http://localhost:6274/oauth/callback",
        "http://LOCALHOST:1/cb",
        "http://127.0.0.1:33418/callback",
        "http://[::1]:8080/cb",
    ],
)
def test_https_and_loopback_http_are_accepted(uri: str) -> None:
    """https anywhere, http on localhost, 127.0.0.1 or [::1]."""
    check_redirect_uri(uri)


@pytest.mark.parametrize(
    "uri",
    [
        "http://app.example/cb",
        "http://localhost.evil.example/cb",
        "http://127.0.0.1.nip.io/cb",
        "http://0.0.0.0/cb",
        "http://10.0.0.1/cb",
        "https://app.example/cb#",
        "https://app.example/cb#frag",
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "ftp://app.example/cb",
        "custom.scheme:/cb",
        "https:///cb",
        "/relative",
        "https://user:pw@app.example/cb",
        "https://user@app.example/cb",
        "https://app.example:99999/cb",
        "https://app.example/c b",
        "https://app.example/cb\n",
        "https://app.example/" + "a" * 2000,
        "",
    ],
)
def test_other_redirect_uris_are_refused(uri: str) -> None:
    """Not https, http elsewhere, fragments, dangerous schemes, credentials, malformed."""
    with pytest.raises(InvalidRedirectUri):
        check_redirect_uri(uri)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost.example", False),
        ("0.0.0.0", False),  # noqa: S104 -- a host under test; nothing binds to it
        ("::", False),
        ("app.example", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    """Which hosts count as loopback for http redirect URIs."""
    assert is_loopback(host) is loopback


def test_a_minimal_registration_parses() -> None:
    """redirect_uris alone is a registration."""
    parsed = parse_registration({"redirect_uris": [OK]}, [])
    assert parsed.redirect_uris == [OK]
    assert parsed.client_name is None


def test_unknown_fields_are_tolerated() -> None:
    """Fields we do not use do not refuse a registration."""
    parsed = parse_registration(
        {"redirect_uris": [OK], "logo_uri": "https://x/logo.png", "software_statement": "e30"},
        [],
    )
    assert parsed.redirect_uris == [OK]


@pytest.mark.parametrize(
    ("document", "error"),
    [
        ({}, InvalidRedirectUri),
        ({"redirect_uris": []}, InvalidRedirectUri),
        ({"redirect_uris": [OK] * 21}, InvalidRedirectUri),
        ({"redirect_uris": None}, InvalidRedirectUri),
        ({"redirect_uris": [None]}, InvalidRedirectUri),
        ({"redirect_uris": ["http://app.example/cb"]}, InvalidRedirectUri),
        ({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"]}, InvalidRedirectUri),
        ([], InvalidClientMetadata),
        ("text", InvalidClientMetadata),
        (None, InvalidClientMetadata),
        (
            {
                "redirect_uris": [OK],
                "grant_types": ["urn:ietf:params:oauth:grant-type:device_code"],
            },
            InvalidClientMetadata,
        ),
        ({"redirect_uris": [OK], "grant_types": ["client_credentials"]}, InvalidClientMetadata),
        ({"redirect_uris": [OK], "response_types": ["token"]}, InvalidClientMetadata),
        ({"redirect_uris": [OK], "response_types": []}, InvalidClientMetadata),
    ],
)
def test_invalid_registrations_raise_their_wire_error(
    document: Any, error: type[OAuthError]
) -> None:
    """Each refusal carries the RFC 7591 error code and a 400."""
    with pytest.raises(error) as refused:
        parse_registration(document, [])
    assert refused.value.status == 400
    assert refused.value.description


@pytest.mark.parametrize(
    "document",
    [
        {"redirect_uris": [OK], "token_endpoint_auth_method": "none"},
        # Claude's connector asks for a secret method: registered as public (RFC 7591 3.2.1).
        {"redirect_uris": [OK], "token_endpoint_auth_method": "client_secret_post"},
        {"redirect_uris": [OK], "token_endpoint_auth_method": "client_secret_basic"},
        {"redirect_uris": [OK], "grant_types": ["authorization_code"]},
        {"redirect_uris": [OK], "grant_types": ["authorization_code", "refresh_token"]},
        {"redirect_uris": [OK], "grant_types": ["authorization_code", "implicit"]},
        {"redirect_uris": [OK], "response_types": ["code"]},
        {"redirect_uris": [OK], "response_types": ["code", "token"]},
        {"redirect_uris": [OK], "client_name": "n" * 200},
        {"redirect_uris": [OK] * 20},
    ],
)
def test_what_real_clients_declare_is_accepted(document: dict[str, Any]) -> None:
    """Secret methods, more grants and response types than ours, up to 20 redirect URIs."""
    parse_registration(document, [])


def test_a_refused_uri_among_several_is_named() -> None:
    """The error names the refused URI and its place, not just "a redirect URI"."""
    with pytest.raises(InvalidRedirectUri) as refused:
        parse_registration({"redirect_uris": [OK, "http://evil.example/cb"]}, [])
    assert "redirect_uris[1]" in refused.value.description
    assert "http://evil.example/cb" in refused.value.description


def test_a_private_use_scheme_is_accepted_only_where_the_company_allows_it() -> None:
    """cursor:// redirects pass for a company that named the scheme, and no other."""
    uri = "cursor://anysphere.cursor-mcp/oauth/callback"
    parse_registration({"redirect_uris": [uri]}, ["cursor"])
    with pytest.raises(InvalidRedirectUri) as refused:
        parse_registration({"redirect_uris": [uri]}, ["vscode"])
    assert "vscode" in refused.value.description
