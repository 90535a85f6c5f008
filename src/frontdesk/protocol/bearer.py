"""Who is calling the MCP endpoint: a guest, or a customer by their bearer token
(SPEC 5.2-5.5), and the ``WWW-Authenticate`` challenges that send a client to sign in."""

from __future__ import annotations

from frontdesk.companies.catalog import ServedCompany
from frontdesk.config import Settings
from frontdesk.domain import Caller
from frontdesk.oauth import scopes
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.metadata import resource_metadata_url
from frontdesk.protocol.errors import Unauthorized

NO_SIGNIN_CHALLENGE = (
    'Bearer error="invalid_token", error_description="This company has not set up customer sign-in"'
)


class BearerResolver:
    def __init__(self, grants: Grants, settings: Settings) -> None:
        self._grants = grants
        self._settings = settings
        # Every request to a company with sign-in carries its challenge (for a personal
        # tool a guest might call); one string per such company, built once.
        self._sign_in_challenges: dict[str, str] = {}

    def _challenge(self, tenant_key: str, error: str, description: str) -> str:
        return (
            f'Bearer resource_metadata="{resource_metadata_url(self._settings, tenant_key)}",'
            f' error="{error}", error_description="{description}",'
            f' scope="{scopes.ALL}"'
        )

    def sign_in_challenge(self, tenant_key: str) -> str:
        """For a guest calling a personal tool: sign the customer in and retry."""
        challenge = self._sign_in_challenges.get(tenant_key)
        if challenge is None:
            challenge = self._sign_in_challenges[tenant_key] = self._challenge(
                tenant_key, "insufficient_scope", "Sign in to use this tool"
            )
        return challenge

    async def customer(self, authorization: bytes, company: ServedCompany, address: str) -> Caller:
        """The signed-in caller behind a request's Authorization header, or Unauthorized
        for a token we cannot accept. (A request with no header is a guest's.)"""
        if not company.has_signin:
            # SPEC 5.4: no sign-in, so no token can be valid here; no discovery to point at.
            raise Unauthorized(
                f"{company.name} has not set up customer sign-in; send no token",
                challenge=NO_SIGNIN_CHALLENGE,
            )
        scheme, _, token = authorization.decode("latin-1").partition(" ")
        token = token.strip()
        bearer = None
        if scheme.lower() == "bearer" and token:
            bearer = await self._grants.bearer(company.tenant_key, token)
        if bearer is None:
            raise Unauthorized(
                "The access token is invalid, expired or revoked",
                challenge=self._challenge(
                    company.tenant_key,
                    "invalid_token",
                    "The access token is invalid, expired or revoked",
                ),
            )
        return Caller(address=address, customer=bearer.customer, client_id=bearer.client_id)
