"""``GET /v1/{tenantKey}/oauth/jwks.json``: the company's public signing keys (RFC 7517
section 5), named by its metadata's ``jwks_uri``, with which its APIs verify the identity
token a signed-in customer's call carries (frontdesk.tools.identity_tokens). Only a company with
sign-in has one: any other key answers 404, as its metadata does."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from frontdesk.oauth.context import OAuthServices
from frontdesk.tools.identity_tokens import JWKS_MAX_AGE_SECONDS

# Verifiers keep it for a short while (a new key is met by its kid; identity_tokens);
# shared caches may too: the document is public.
CACHE_CONTROL = f"public, max-age={JWKS_MAX_AGE_SECONDS}"


class PublishedKeys:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services

    async def jwks(self, request: Request) -> Response:
        signin = await self._services.signin_company(request)
        document = await self._services.identity.jwks(signin.tenant_key)
        return Response(
            document,
            media_type="application/json",
            headers={"cache-control": CACHE_CONTROL},
        )
