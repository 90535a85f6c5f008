"""Redirect URIs: which a client may register (RFC 7591 2, interface 2.3) and whether the one
sent to authorize is one it registered (OAuth 2.1 4.1.1, RFC 8252 7.3).

The contract's rule: https, or http on a loopback host. A company may also name private-use
schemes (RFC 8252 7.1) that native clients such as Cursor come back on; none by default.
"""

from __future__ import annotations

import ipaddress
import re
import string
from collections.abc import Collection, Iterable, Mapping
from urllib.parse import SplitResult, urlencode, urlsplit

from frontdesk.oauth.errors import InvalidRedirectUri

LOOPBACK_NAMES = frozenset({"localhost"})
MAX_URI_LENGTH = 2000
# RFC 3986 2.2-2.3: every character a URI may hold. Anything else (a quote, a backslash,
# a caret, non-ASCII) is not a URI: the Location header would carry it re-encoded, so the
# browser would go somewhere other than what was registered and shown on the consent page.
URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
# RFC 3986 3.2.2-3.2.3: a bracketed IP literal or a name, then an optional port. urlsplit
# reads "evil.example[::1]" or "[::1]evil" as the loopback host ::1; browsers refuse both.
HOST_AND_PORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\[\]:]*)(:[0-9]*)?\Z")


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_redirect_uri(uri: str, private_schemes: Collection[str] = ()) -> None:
    """https anywhere, http only on a loopback host, or one of the company's private-use
    schemes; no fragment, no credentials. Raises InvalidRedirectUri naming the URI."""
    shown = uri[:100]
    if len(uri) > MAX_URI_LENGTH or not URI_CHARACTERS.issuperset(uri):
        raise InvalidRedirectUri(f"redirect URI is malformed: {shown!r}")
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        parts.port  # noqa: B018 -- raises ValueError on a malformed port
    except ValueError:
        raise InvalidRedirectUri(f"redirect URI is malformed: {shown!r}") from None
    if not HOST_AND_PORT.match(parts.netloc.rpartition("@")[2]):
        raise InvalidRedirectUri(f"redirect URI is malformed: {shown!r}")
    if parts.fragment or "#" in uri:
        raise InvalidRedirectUri(f"redirect URI must not have a fragment: {shown!r}")
    if parts.username is not None or parts.password is not None:
        raise InvalidRedirectUri(f"redirect URI must not carry credentials: {shown!r}")
    if parts.scheme in private_schemes:
        return
    if parts.scheme not in ("https", "http") or not host:
        raise InvalidRedirectUri(
            f"redirect URI must be https (or http on loopback): {shown!r}"
            + _schemes_hint(parts.scheme, private_schemes)
        )
    if parts.scheme == "http" and not is_loopback(host):
        raise InvalidRedirectUri(f"http redirect URIs must be on a loopback host: {shown!r}")


def _schemes_hint(scheme: str, private_schemes: Collection[str]) -> str:
    if not scheme or scheme in ("http", "https"):
        return ""
    if private_schemes:
        return f"; this company allows the private-use schemes {', '.join(sorted(private_schemes))}"
    return "; this company allows no private-use schemes"


def is_registered(presented: str, registered: Iterable[str]) -> bool:
    """Whether ``presented`` is one of the ``registered`` redirect URIs: the same string
    (OAuth 2.1 4.1.1, RFC 9700 2.1: no prefix, no normalisation), except that the port of
    an http loopback URI is not compared, since a native client takes whatever port is
    free when it starts (RFC 8252 7.3; VS Code does when its usual port is busy)."""
    registered = list(registered)
    if presented in registered:
        return True
    # urlsplit drops tabs and line breaks silently: "local\thost" would compare as localhost.
    if not URI_CHARACTERS.issuperset(presented):
        return False
    portless = _loopback_without_port(presented)
    if portless is None:
        return False
    return any(_loopback_without_port(uri) == portless for uri in registered)


def _loopback_without_port(uri: str) -> SplitResult | None:
    """An http loopback URI with its port taken out, or None for any other URI."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        parts.port  # noqa: B018 -- raises ValueError on a malformed port
    except ValueError:
        return None
    # The scheme as written: urlsplit lowers it, and "HTTP://" was never registered.
    if (
        not uri.startswith("http://")
        or host is None
        or not is_loopback(host)
        or "@" in parts.netloc
    ):
        return None
    # The host as written (127.0.0.1, [::1] or localhost): one never stands for another.
    written_host = parts.netloc
    if written_host.startswith("["):
        written_host = written_host[: written_host.index("]") + 1]
    else:
        written_host = written_host.partition(":")[0]
    return parts._replace(netloc=written_host)


def redirect_with(redirect_uri: str, params: Mapping[str, str | None]) -> str:
    """The client's redirect URI with ``params`` added to any query it already has."""
    query = urlencode({key: value for key, value in params.items() if value is not None})
    separator = "&" if "?" in redirect_uri else "?"
    return f"{redirect_uri}{separator}{query}"
