"""The enterprise identity providers a company trusts for enterprise-managed sign-in: the
``signin.enterprise_providers`` list of its definition.

A customer's own identity provider (the enterprise's IdP) issues an Identity Assertion JWT
Authorization Grant (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant), and the MCP
client trades it at the company's token endpoint for an access token with no browser step
(the MCP ``ext-auth`` extension "Enterprise-Managed Authorization", section 5;
frontdesk.oauth.assertion_grant). Each entry names one trusted issuer: where its keys are,
which signature algorithms it may use, which scopes it may grant, and how its subjects
become the company's customers.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

# The asymmetric JWS algorithms an ID-JAG may be signed with (RFC 7518 3.1, RFC 8037). The
# extension (7.4.1) asks for an explicit allow-list and forbids ``none``; an HMAC is left
# out too, since the issuer's key would then be a secret shared with Frontdesk.
Algorithm = Literal["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
DEFAULT_ALGORITHMS: tuple[Algorithm, ...] = ("RS256", "ES256")
# A scope token (RFC 6749 3.3: printable ASCII but space, quote and backslash).
SCOPE_PATTERN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,64}\Z")
# A URL of the provider: https (http is refused in production, companies.production).
PROVIDER_URL_PATTERN = r"^https?://[^\s?#]+$"
MAX_PROVIDERS = 10


class EnterpriseProvider(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The ID-JAG's ``iss``, exactly (draft section 4.4.1, RFC 7523 3 item 1).
    issuer: str = Field(pattern=PROVIDER_URL_PATTERN, max_length=200)
    # Where the issuer publishes its public keys (RFC 7517 5), fetched through the outbound
    # policy and cached (frontdesk.login.assertion_keys).
    jwks_uri: str = Field(pattern=PROVIDER_URL_PATTERN, max_length=2000)
    algorithms: list[Algorithm] = Field(default_factory=lambda: [*DEFAULT_ALGORITHMS], min_length=1)
    # The scopes this issuer may grant; the token's scopes are those asked for, asserted in
    # the ID-JAG and listed here (extension 7.2.1). Empty: every scope the company offers.
    scopes: list[str] = Field(default_factory=list, max_length=50)
    # How the ID-JAG's ``sub`` names a customer. ``issuer``: a customer of this provider
    # alone (the subject kept is qualified by the issuer, draft section 6: a ``sub`` is
    # unique only within its issuer). ``login``: the customer the company's own login knows
    # by the same ``sub``, for a company whose login is this very issuer.
    subjects: Literal["issuer", "login"] = "issuer"
    # Whether the grant also returns a refresh token (interface 3.2 applies to it). Off by
    # default: the client can ask the enterprise's IdP for a new ID-JAG, and the IdP then
    # decides again (extension 1.1).
    refresh_tokens: bool = False

    @field_validator("scopes")
    @classmethod
    def _scopes_are_tokens(cls, value: list[str]) -> list[str]:
        for scope in value:
            if not SCOPE_PATTERN.match(scope):
                raise ValueError(f"{scope!r} is not a scope (RFC 6749 3.3)")
        return value

    def customer_subject(self, sub: str) -> str:
        """The subject the customer is kept under: ``sub`` itself for ``login``, else ``sub``
        behind a short digest of the issuer, so that two issuers' equal ``sub`` never name
        one customer and the subject still fits its column (255)."""
        if self.subjects == "login":
            return sub
        return f"{self.issuer_tag}:{sub}"

    @property
    def issuer_tag(self) -> str:
        return "idjag-" + hashlib.sha256(self.issuer.encode()).hexdigest()[:16]


def _unique_issuers(providers: list[EnterpriseProvider]) -> list[EnterpriseProvider]:
    issuers = [provider.issuer for provider in providers]
    repeated = sorted({issuer for issuer in issuers if issuers.count(issuer) > 1})
    if repeated:
        raise ValueError(f"two enterprise providers share the issuer {repeated[0]!r}")
    return providers


# The field of SigninSetup (companies.definition): each issuer at most once.
EnterpriseProviders = Annotated[
    list[EnterpriseProvider],
    Field(max_length=MAX_PROVIDERS),
    AfterValidator(_unique_issuers),
]
