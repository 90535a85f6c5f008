"""Every error the OAuth endpoints answer with, rendered in one place (``oauth/rendering``).

    OAuthError                     JSON body {"error", "error_description"} (interface 2.8)
    ├── InvalidRequest             400  invalid_request
    ├── InvalidClient              401  invalid_client          unknown client (interface 4.5)
    ├── InvalidGrant               400  invalid_grant
    ├── UnsupportedGrantType       400  unsupported_grant_type
    ├── InvalidScope               400  invalid_scope
    ├── InvalidTarget              400  invalid_target          resource not ours (RFC 8707)
    ├── InvalidRedirectUri         400  invalid_redirect_uri    registration (RFC 7591)
    ├── InvalidClientMetadata      400  invalid_client_metadata registration (RFC 7591)
    ├── SigninNotSetUp             404  not_found               no sign-in for this company
    ├── RateLimited                429  rate_limited            with Retry-After
    ├── TemporarilyUnavailable     503  temporarily_unavailable with Retry-After
    └── AuthorizeRedirect          303  to the client's redirect_uri with ``error``
    AuthorizePage                  400/404/429/503 HTML page: the redirect target is not
                                   trusted (429 with Retry-After)

Each class carries its wire code and status, so errors can be checked without HTTP.
"""

from __future__ import annotations

from typing import ClassVar


class OAuthError(Exception):
    error: ClassVar[str] = "server_error"
    status: ClassVar[int] = 400

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class InvalidRequest(OAuthError):
    """A parameter is missing, repeated or malformed."""

    error = "invalid_request"


class InvalidClient(OAuthError):
    """The client is unknown to this company."""

    error = "invalid_client"
    status = 401


class InvalidGrant(OAuthError):
    """The code or refresh token is unknown, spent, expired or not this client's."""

    error = "invalid_grant"


class UnsupportedGrantType(OAuthError):
    """A grant other than authorization_code or refresh_token."""

    error = "unsupported_grant_type"


class InvalidScope(OAuthError):
    """A refresh asking for more of the offered scopes than its grant holds."""

    error = "invalid_scope"


class InvalidTarget(OAuthError):
    """A ``resource`` that is not this company's MCP endpoint (RFC 8707 2.2)."""

    error = "invalid_target"


class InvalidRedirectUri(OAuthError):
    """A redirect URI that is not https, http on a loopback host, or one of the company's
    private-use schemes."""

    error = "invalid_redirect_uri"


class InvalidClientMetadata(OAuthError):
    """Registration metadata that cannot be accepted."""

    error = "invalid_client_metadata"


class SigninNotSetUp(OAuthError):
    """The company has not set up customer sign-in, or no active company has the key."""

    error = "not_found"
    status = 404


class RateLimited(OAuthError):
    """Too many requests from this caller."""

    error = "rate_limited"
    status = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many requests; retry after {retry_after} seconds")
        self.retry_after = retry_after


class TemporarilyUnavailable(OAuthError):
    """Something the request needs cannot be had now (a client's metadata document whose
    host does not answer); the client should retry, and keep its tokens meanwhile."""

    error = "temporarily_unavailable"
    status = 503

    def __init__(self, description: str, retry_after: int) -> None:
        super().__init__(description)
        self.retry_after = retry_after


class AuthorizeRedirect(OAuthError):
    """An authorize error sent back to a verified redirect URI (RFC 6749 4.1.2.1)."""

    status = 303

    def __init__(
        self,
        error: str,
        description: str,
        *,
        redirect_uri: str,
        state: str | None,
        issuer: str,
    ) -> None:
        super().__init__(description)
        self.code = error
        self.redirect_uri = redirect_uri
        self.state = state
        self.issuer = issuer


class AuthorizePage(Exception):
    """An error shown to the customer as a page, never redirected (unverified target);
    ``retry_after`` (seconds) for a 429."""

    def __init__(
        self, status: int, title: str, message: str, *, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.retry_after = retry_after
