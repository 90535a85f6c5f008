"""Discovery (interface 4.1): authorization server metadata (RFC 8414, interface 2.1) and protected
resource metadata (RFC 9728, interface 2.2). Every URL is built from the base URL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from frontdesk import scopes
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.config import Settings
from frontdesk.oauth.rendering import JSON

if TYPE_CHECKING:
    # The MCP endpoint's challenges need only resource_metadata_url: importing this module
    # must not bring the sign-in services along.
    from frontdesk.oauth.context import OAuthServices


def authorization_server(
    settings: Settings,
    tenant_key: str,
    enterprise_signin: bool = False,
    offers: Sequence[str] = scopes.SUPPORTED,
) -> dict[str, Any]:
    issuer = settings.issuer(tenant_key)
    document = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "revocation_endpoint": f"{issuer}/revoke",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        # The service's scopes and the company's tools' own (companies.tool_scopes).
        "scopes_supported": list(offers),
        "authorization_response_iss_parameter_supported": True,
        # An https client_id URL is accepted as the client's metadata document
        # (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25 authorization).
        "client_id_metadata_document_supported": True,
        # The keys that sign the identity tokens a company's APIs receive (RFC 8414
        # section 2; frontdesk.tools.identity_tokens).
        "jwks_uri": f"{issuer}/jwks.json",
    }
    if enterprise_signin:
        # A company that trusts an enterprise identity provider takes its ID-JAGs (MCP
        # ext-auth "Enterprise-Managed Authorization" section 6; RFC 7523 2.1).
        document["grant_types_supported"] = [
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:jwt-bearer",
        ]
        document["authorization_grant_profiles_supported"] = [
            "urn:ietf:params:oauth:grant-profile:id-jag"
        ]
    return document


def protected_resource(
    settings: Settings, tenant_key: str, offers: Sequence[str] = scopes.SUPPORTED
) -> dict[str, Any]:
    return {
        "resource": settings.mcp_url(tenant_key),
        "authorization_servers": [settings.issuer(tenant_key)],
        "scopes_supported": list(offers),
        "bearer_methods_supported": ["header"],
        "resource_name": tenant_key,
    }


def resource_metadata_url(settings: Settings, tenant_key: str) -> str:
    return f"{settings.base_url}/.well-known/oauth-protected-resource/v1/{tenant_key}/mcp"


class Discovery:
    # The four paths of the authorization server metadata (interface 4.1): RFC 8414's
    # path-inserted form, OpenID Connect's, and both appended to the issuer.
    ISSUER_PATHS = (
        "/.well-known/oauth-authorization-server/v1/{tenant}/oauth",
        "/.well-known/openid-configuration/v1/{tenant}/oauth",
        "/v1/{tenant}/oauth/.well-known/oauth-authorization-server",
        "/v1/{tenant}/oauth/.well-known/openid-configuration",
    )
    RESOURCE_PATH = "/.well-known/oauth-protected-resource/v1/{tenant}/mcp"

    def __init__(self, services: OAuthServices) -> None:
        self._services = services

    async def server_metadata(self, request: Request) -> Response:
        signin = await self._services.signin_company(request)
        enterprise = bool(signin.setup.enterprise_providers)
        offers = company_scopes(signin.company).offered
        return JSON(
            authorization_server(self._services.settings, signin.tenant_key, enterprise, offers)
        )

    async def resource_metadata(self, request: Request) -> Response:
        signin = await self._services.signin_company(request)
        offers = company_scopes(signin.company).offered
        return JSON(protected_resource(self._services.settings, signin.tenant_key, offers))
