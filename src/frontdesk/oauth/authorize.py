"""Checking an authorize request (SPEC 4.3) before the customer sees the consent page.

Until the client and its redirect URI are verified, nothing may be sent to the redirect
URI: those errors are pages (400). Every later error goes back to the client (303) with
``error``, ``state`` and ``iss``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from frontdesk.config import Settings
from frontdesk.oauth import scopes
from frontdesk.oauth.errors import AuthorizePage, AuthorizeRedirect
from frontdesk.oauth.flow import Flow, FlowSigner
from frontdesk.oauth.pkce import CHALLENGE
from frontdesk.store.clients import Client, ClientRepository

MAX_STATE_LENGTH = 2048

UNKNOWN_CLIENT = AuthorizePage(
    400,
    "Unknown application",
    "The application asking to sign you in is not registered here. Go back to your"
    " assistant and connect it again.",
)
BAD_REDIRECT = AuthorizePage(
    400,
    "Sign-in cannot continue",
    "The application gave an address to return to that it never registered, so this"
    " sign-in was stopped to keep your account safe.",
)


def redirect_with(redirect_uri: str, params: Mapping[str, str | None]) -> str:
    """The client's redirect URI with ``params`` added to any query it already has."""
    query = urlencode({key: value for key, value in params.items() if value is not None})
    separator = "&" if "?" in redirect_uri else "?"
    return f"{redirect_uri}{separator}{query}"


def _single(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = params.get(name) or []
    return values[0] if len(values) == 1 else None


async def check_authorize_request(
    params: Mapping[str, Sequence[str]],
    tenant_key: str,
    clients: ClientRepository,
    settings: Settings,
) -> tuple[Client, Flow]:
    """The verified client and the sign-in to run, or an error page or redirect."""
    client_id = _single(params, "client_id")
    client = await clients.get(tenant_key, client_id) if client_id else None
    if client is None:
        raise UNKNOWN_CLIENT
    redirect_uri = _single(params, "redirect_uri")
    # Exact string match (OAuth 2.1, RFC 9700 2.1): no prefix, no normalisation.
    if redirect_uri is None or redirect_uri not in client.redirect_uris:
        raise BAD_REDIRECT

    state = _single(params, "state")
    issuer = settings.issuer(tenant_key)

    def refuse(error: str, description: str) -> AuthorizeRedirect:
        return AuthorizeRedirect(
            error, description, redirect_uri=redirect_uri, state=state, issuer=issuer
        )

    repeated = sorted(name for name, values in params.items() if len(values) > 1)
    if repeated:
        raise refuse("invalid_request", f"parameters given more than once: {', '.join(repeated)}")
    if state is not None and len(state) > MAX_STATE_LENGTH:
        raise refuse("invalid_request", "state is too long")
    if _single(params, "response_type") != "code":
        raise refuse("unsupported_response_type", "response_type must be code")
    method = _single(params, "code_challenge_method")
    if method != "S256":
        raise refuse("invalid_request", "code_challenge_method must be S256 (PKCE is required)")
    challenge = _single(params, "code_challenge")
    if challenge is None or not CHALLENGE.match(challenge):
        raise refuse("invalid_request", "code_challenge must be a base64url SHA-256 (43 chars)")
    try:
        scope = scopes.resolve(_single(params, "scope"))
    except scopes.ScopeError as error:
        raise refuse("invalid_scope", str(error)) from None
    resource = _single(params, "resource")
    if resource is not None and resource.rstrip("/") != settings.mcp_url(tenant_key):
        raise refuse("invalid_target", "resource must be this company's MCP endpoint")

    flow = Flow(
        tenant_key=tenant_key,
        client_id=client.client_id,
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=challenge,
        scope=scope,
        resource=settings.mcp_url(tenant_key) if resource is not None else None,
        nonce=FlowSigner.new_nonce(),
    )
    return client, flow
