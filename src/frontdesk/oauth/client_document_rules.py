"""What a Client ID Metadata Document URL and document must be
(draft-ietf-oauth-client-id-metadata-document), checked without any I/O.

A document is public and describes a public client: it declares no client authentication
(``token_endpoint_auth_method`` absent or ``none``, no ``client_secret``). A client that asks
to authenticate with a key (``private_key_jwt``) is refused rather than treated as public,
since the draft (section "Client Authentication") then requires that authentication, which
Frontdesk does not perform. Redirect URIs are only shape-checked here; each company's
redirect rules apply afterwards (``oauth.clients``).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from frontdesk.oauth.client_names import ClientNameRefused, clean_client_name

# A client_id is a URI like a redirect URI, and is shown, compared and fetched: it holds
# the characters, host and port redirect URIs may (oauth.redirects), up to the same length.
from frontdesk.oauth.redirects import HOST_AND_PORT, MAX_URI_LENGTH, URI_CHARACTERS

MAX_REDIRECT_URIS = 10
MAX_PORT_DIGITS = 5
PERCENT_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# RFC 1123 2.1 and RFC 1035 2.3.4: letters, digits and hyphens, 1 to 63 of them a label,
# at most 253 in all. A name that breaks them cannot be resolved or named by a certificate,
# and the resolver's IDNA codec raises on an empty or long label rather than failing it.
HOST_LABEL = re.compile(r"[A-Za-z0-9-]{1,63}\Z")
MAX_HOST_NAME_LENGTH = 253
DOT_SEGMENTS = frozenset({".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})


@dataclass(frozen=True, slots=True)
class ClientDocument:
    client_id: str
    # The URL's host: what answered for the client over verified TLS, so what the consent
    # page may show as verified (the draft's section "OAuth Phishing Attacks").
    host: str
    client_name: str | None
    redirect_uris: tuple[str, ...]
    client_uri: str | None
    logo_uri: str | None


def is_client_document_url(client_id: str) -> bool:
    """Whether ``client_id`` is a metadata document URL (the draft's section "Client
    Identifier"): https, a host, a path other than "/", no fragment, no user or password,
    no "." or ".." segment, at most MAX_URI_LENGTH characters. A query string is accepted:
    the draft only advises clients against one."""
    return url_problem(client_id) is None


def url_problem(url: str) -> str | None:
    """What makes ``url`` no metadata document URL, or None."""
    if not url.startswith("https://"):
        return "its client_id must be an https URL"
    if len(url) > MAX_URI_LENGTH:
        return f"its client_id is longer than {MAX_URI_LENGTH} characters"
    if "#" in url:
        return "its client_id must not have a fragment"
    if not URI_CHARACTERS.issuperset(url) or PERCENT_ESCAPE.search(url):
        return "its client_id holds characters a URL may not"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "its client_id has no valid host and port"
    if "@" in parts.netloc:
        return "its client_id must not carry a user name or password"
    match = HOST_AND_PORT.match(parts.netloc)
    if match is None or not _is_host(match.group(1)) or not _is_port(match.group(2)):
        return "its client_id has no valid host and port"
    if parts.path in ("", "/"):
        return "its client_id must have a path"
    if any(segment.lower() in DOT_SEGMENTS for segment in parts.path.split("/")):
        return 'its client_id must not hold "." or ".." path segments'
    return None


def _is_host(host: str) -> bool:
    if host.startswith("["):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    return len(host) <= MAX_HOST_NAME_LENGTH and all(
        HOST_LABEL.match(label) for label in host.split(".")
    )


def _is_port(port: str | None) -> bool:
    # HOST_AND_PORT's port group is the colon and what follows it, if anything.
    if port is None:
        return True
    digits = port[1:]
    return 0 < len(digits) <= MAX_PORT_DIGITS and 0 < int(digits) <= 65535


def parse_document(url: str, document: Any) -> ClientDocument:
    """The checked document; ValueError names the first rule it breaks. Members this service
    does not use are ignored."""
    if not isinstance(document, dict):
        raise ValueError("the document is not a JSON object")
    if document.get("client_id") != url:
        # The draft: equal by simple string comparison (RFC 3986 6.2.1), so no trailing
        # slash or case difference is forgiven.
        raise ValueError("its client_id is not exactly the URL it was fetched from")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise ValueError(
            f"token_endpoint_auth_method is {str(method)[:50]!r}; only none is accepted,"
            " as Frontdesk's clients are public"
        )
    for member in ("client_secret", "client_secret_expires_at"):
        if member in document:
            raise ValueError(f"it carries {member}, which a metadata document must not")
    redirect_uris = document.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        raise ValueError("redirect_uris must be a non-empty list")
    if len(redirect_uris) > MAX_REDIRECT_URIS:
        raise ValueError(f"redirect_uris holds more than {MAX_REDIRECT_URIS} URIs")
    if not all(isinstance(uri, str) and 0 < len(uri) <= MAX_URI_LENGTH for uri in redirect_uris):
        raise ValueError(f"redirect_uris must hold strings of 1 to {MAX_URI_LENGTH} characters")
    _require_member(document, "grant_types", "authorization_code")
    _require_member(document, "response_types", "code")
    try:
        client_name = clean_client_name(document.get("client_name"))
    except ClientNameRefused as refused:
        raise ValueError(str(refused)) from None
    return ClientDocument(
        client_id=url,
        host=urlsplit(url).hostname or "",
        client_name=client_name,
        redirect_uris=tuple(redirect_uris),
        client_uri=_display_url(document.get("client_uri")),
        logo_uri=_display_url(document.get("logo_uri")),
    )


def _require_member(document: dict[str, Any], name: str, required: str) -> None:
    # RFC 7591 2: the client lists what it will use; it must use the code flow, and may
    # list more (VS Code's document also lists the device grant).
    values = document.get(name)
    if values is None:
        return
    if not isinstance(values, list) or required not in values:
        raise ValueError(f"{name} must be a list that includes {required}")


def _display_url(value: Any) -> str | None:
    # Only ever shown or linked, never fetched: kept when it is an https URL, dropped (not
    # refused) otherwise, since a broken link is no reason to turn the client away.
    if (
        not isinstance(value, str)
        or not value.startswith("https://")
        or len(value) > MAX_URI_LENGTH
        or not URI_CHARACTERS.issuperset(value)
    ):
        return None
    try:
        return value if urlsplit(value).hostname else None
    except ValueError:
        return None
