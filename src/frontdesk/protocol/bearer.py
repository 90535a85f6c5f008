"""Who is calling the MCP endpoint: a guest, or a customer by their bearer token
(interface 5.2-5.5), and the ``WWW-Authenticate`` challenges that send a client to sign in."""

from __future__ import annotations

from dataclasses import dataclass

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.config import Settings
from frontdesk.domain import Caller
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.metadata import resource_metadata_url
from frontdesk.oauth.tool_consent import NOTHING, ToolConsent
from frontdesk.protocol.errors import Unauthorized

NO_SIGNIN_CHALLENGE = (
    'Bearer error="invalid_token", error_description="This company has not set up customer sign-in"'
)
REFUSAL = "The access token is invalid, expired or revoked"
TOOL_CHANGED = "This tool changed since the customer allowed this client: ask them again"


@dataclass(frozen=True, slots=True)
class Challenges:
    """One sign-in company's challenges, built once: every request to it may need one."""

    # The company's loaded definition they were built for: its scopes are in them.
    company: ServedCompany
    # ``Bearer resource_metadata="..."``: where to sign in (RFC 9728 5.1).
    where: str
    # RFC 6750 3.1: a request without credentials gets no error code; the client learns
    # where to sign in (RFC 9728 5.1) and what to ask for.
    guest: str
    # The same in the reply (a tool result's _meta["mcp/www_authenticate"], SEP-1489, or an
    # error's data), with error and error_description: ChatGPT reads them there (OpenAI Apps
    # SDK authentication guide).
    guest_in_reply: str
    # RFC 6750 3.1: a token that is invalid, expired or revoked.
    refused_token: str
    # A tool that changed since the grant's consent (oauth.tool_consent): the step-up
    # challenge, in the header and in the tool's result alike.
    tool_changed: str


class BearerResolver:
    def __init__(self, grants: Grants, settings: Settings, tool_consent: ToolConsent) -> None:
        self._grants = grants
        self._settings = settings
        self._tool_consent = tool_consent
        self._challenges: dict[str, Challenges] = {}

    def challenges(self, company: ServedCompany) -> Challenges:
        """The challenges of a company with sign-in, built again when it is reloaded: they
        name every scope it offers, its tools' own among them (companies.tool_scopes)."""
        tenant_key = company.tenant_key
        challenges = self._challenges.get(tenant_key)
        if challenges is None or challenges.company is not company:
            where = (
                f'Bearer resource_metadata="{resource_metadata_url(self._settings, tenant_key)}"'
            )
            what = f'scope="{company_scopes(company).text}"'
            challenges = self._challenges[tenant_key] = Challenges(
                company=company,
                where=where,
                guest=f"{where}, {what}",
                guest_in_reply=(
                    f'{where}, error="insufficient_scope",'
                    f' error_description="Sign in to use this tool", {what}'
                ),
                refused_token=(
                    f'{where}, error="invalid_token", error_description="{REFUSAL}", {what}'
                ),
                tool_changed=(
                    f'{where}, error="insufficient_scope",'
                    f' error_description="{TOOL_CHANGED}", {what}'
                ),
            )
        return challenges

    async def customer(self, authorization: bytes, company: ServedCompany, address: str) -> Caller:
        """The signed-in caller behind a request's Authorization header, or Unauthorized
        for a token we cannot accept. (A request with no header is a guest's.)"""
        if not company.has_signin:
            # interface 5.4: no sign-in, so no token can be valid here; no discovery to point at.
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
                REFUSAL,
                challenge=self.challenges(company).refused_token,
            )
        snapshot = bearer.tool_snapshot
        asked_again = NOTHING
        if snapshot is not None and snapshot != company.consent_snapshot:
            asked_again = await self._tool_consent.asking(company, snapshot)
        return Caller(address, bearer.customer, bearer.client_id, asked_again)
