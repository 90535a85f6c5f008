"""Discovery documents: authorization server metadata (RFC 8414, SPEC 2.1) and protected
resource metadata (RFC 9728, SPEC 2.2). Every URL is built from the base URL."""

from __future__ import annotations

from typing import Any

from frontdesk.config import Settings
from frontdesk.oauth import scopes


def authorization_server(settings: Settings, tenant_key: str) -> dict[str, Any]:
    issuer = settings.issuer(tenant_key)
    return {
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
        "scopes_supported": list(scopes.SUPPORTED),
        "authorization_response_iss_parameter_supported": True,
    }


def protected_resource(settings: Settings, tenant_key: str) -> dict[str, Any]:
    return {
        "resource": settings.mcp_url(tenant_key),
        "authorization_servers": [settings.issuer(tenant_key)],
        "scopes_supported": list(scopes.SUPPORTED),
        "bearer_methods_supported": ["header"],
        "resource_name": tenant_key,
    }


def resource_metadata_url(settings: Settings, tenant_key: str) -> str:
    return f"{settings.base_url}/.well-known/oauth-protected-resource/v1/{tenant_key}/mcp"
