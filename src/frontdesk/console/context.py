"""What the console's pages use: the service's own parts, shared with the MCP endpoint
and the sign-in pages, so the console reads and changes what they serve."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request

from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.limits.ratelimit import RateLimiter, parse_rate_limit
from frontdesk.login.connectors import LoginConnectors
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.outbound.clients import OutboundClients
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database
from frontdesk.web.asgi import Receive, Scope, Send
from frontdesk.web.network import ClientAddressResolver

# The MCP endpoint as the console's test call enters it: (scope, receive, send, tenant key,
# request id), the signature of protocol.endpoint.McpEndpoint.
McpHandler = Callable[[Scope, Receive, Send, str, str], Awaitable[int]]


@dataclass(frozen=True, slots=True)
class ConsoleServices:
    settings: Settings
    database: Database
    companies: CompanyRepository
    registry: CompanyRegistry
    logins: LoginConnectors
    limiter: RateLimiter
    addresses: ClientAddressResolver
    # An OpenAPI document named by URL is fetched as metadata documents are.
    outbound: OutboundClients
    mcp: McpHandler

    @property
    def base(self) -> str:
        return f"{self.settings.base_url}/console"

    @property
    def secure(self) -> bool:
        return self.settings.base_scheme == "https"

    async def limit(self, request: Request, what: str) -> None:
        """Count one request of the address against FRONTDESK_OAUTH_RATE_LIMIT: each
        sign-in may cost a round trip to a login, each change a write."""
        limit = parse_rate_limit(self.settings.oauth_rate_limit)
        verdict = await self.limiter.hit(
            limit, f"console-{what}", self.addresses.resolve(request.scope)
        )
        if not verdict.allowed:
            raise AuthorizePage(
                429,
                "Too many requests",
                "Too many requests came from your network. Please wait a minute and retry.",
                retry_after=verdict.retry_after,
            )
