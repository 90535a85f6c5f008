"""What every OAuth endpoint shares: the services it calls, and the company whose
authorization server a request is addressed to (interface 1.2, 1.4)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import SigninSetup
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.limits.ratelimit import RateLimit, RateLimiter, parse_rate_limit
from frontdesk.login.connectors import LoginConnectors
from frontdesk.oauth.clients import ClientDirectory
from frontdesk.oauth.errors import AuthorizePage, RateLimited, SigninNotSetUp
from frontdesk.oauth.flow import FlowSigner
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.tool_consent import ToolConsent
from frontdesk.observability import metrics
from frontdesk.store.consents import ConsentRepository
from frontdesk.store.customers import CustomerRepository
from frontdesk.tools.identity_tokens import IdentityTokens
from frontdesk.web.network import ClientAddressResolver


@dataclass(frozen=True, slots=True)
class SigninCompany:
    """An active company of this region that has set up customer sign-in."""

    company: ServedCompany
    setup: SigninSetup

    @property
    def tenant_key(self) -> str:
        return self.company.tenant_key


@dataclass(frozen=True, slots=True)
class OAuthServices:
    settings: Settings
    registry: CompanyRegistry
    clients: ClientDirectory
    customers: CustomerRepository
    grants: Grants
    logins: LoginConnectors
    limiter: RateLimiter
    addresses: ClientAddressResolver
    flows: FlowSigner
    consents: ConsentRepository
    identity: IdentityTokens
    tool_consent: ToolConsent

    async def limit(
        self, request: Request, limit: RateLimit, *identity: str, page: bool = False
    ) -> None:
        """Count one request of ``identity`` (an endpoint's name, then who): 429 past it,
        with Retry-After, as an OAuth error body for a client, or as a page for the
        customer's browser (``page``). A refusal is counted under the company the path
        names, so one company flooded reads apart from all of them."""
        verdict = await self.limiter.hit(limit, *identity)
        if verdict.allowed:
            return
        metrics.rate_limited(identity[0], request.path_params["tenant"])
        if page:
            raise AuthorizePage(
                429,
                "Too many sign-in attempts",
                "Too many sign-ins have been started from your network. Please wait a"
                " minute, then go back to your assistant and connect it again.",
                retry_after=verdict.retry_after,
            )
        raise RateLimited(verdict.retry_after)

    async def limit_document_fetch(
        self, request: Request, client_id: str | None, *, page: bool = False
    ) -> None:
        """Count a ``client_id`` whose metadata document finding it would fetch now against
        the address's FRONTDESK_CLIENT_DOCUMENT_FETCH_RATE_LIMIT, before the fetch: each
        new URL is one outbound request, to a host the sender chose (the draft's "SSRF
        Attacks"), which the document cache cannot spare. Kept documents cost nothing."""
        if client_id is None or not self.clients.would_fetch(client_id):
            return
        limit = parse_rate_limit(self.settings.client_document_fetch_rate_limit)
        await self.limit(request, limit, "client-document", self.address(request), page=page)

    def address(self, request: Request) -> str:
        return self.addresses.resolve(request.scope)

    async def signin_company(self, request: Request, *, page: bool = False) -> SigninCompany:
        """The company in the path, or 404 (interface 4.1, 7.2): as an OAuth error body for a
        client, or as a page for the customer's browser (``page``)."""
        company = await self.registry.active(request.path_params["tenant"])
        if company is None or company.definition.signin is None:
            if page:
                raise AuthorizePage(
                    404,
                    "Sign-in is not available",
                    "This company has not set up customer sign-in.",
                )
            raise SigninNotSetUp("this company has not set up customer sign-in")
        request.state.company_name = company.name
        # For the error pages of this request (oauth.rendering), in the company's colours.
        request.state.branding = company.definition.branding
        return SigninCompany(company, company.definition.signin)
