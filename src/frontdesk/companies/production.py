"""What a company's definition may not hold where real customers sign in.

A development deployment may use the ``dev`` login (whoever types an address is signed in
as it) and an identity provider on plain ``http``; production refuses both when a companies
file is applied, names at start-up every stored company that still holds one (applied
before the instance ran in production), and the login connectors refuse them at use
(login.connectors), so an instance never signs a customer in that way.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from frontdesk.companies.console_setup import ConsoleDevLogin
from frontdesk.companies.definition import FROM_STORE, CompanyDefinition, DevLogin, OidcLogin


def production_problems(company: CompanyDefinition) -> list[str]:
    """Why ``company`` cannot be served in production, one line each (none: it can)."""
    return _signin_problems(company) + _enterprise_problems(company) + _console_problems(company)


def _signin_problems(company: CompanyDefinition) -> list[str]:
    signin = company.signin
    if signin is None:
        return []
    login = signin.login
    if isinstance(login, DevLogin):
        return [f"{company.tenant_key}: the dev login signs in anyone who types an address"]
    if isinstance(login, OidcLogin) and not issuer_is_safe(login.issuer):
        return [
            f"{company.tenant_key}: the identity provider's issuer must be https"
            f" ({login.issuer}): its code, tokens and client secret would travel in clear"
        ]
    return []


def _enterprise_problems(company: CompanyDefinition) -> list[str]:
    """The enterprise providers a company trusts (companies.enterprise_providers): their
    keys are fetched over authenticated TLS only (MCP ext-auth "Enterprise-Managed
    Authorization", 7.3 and 7.4.1)."""
    providers = company.signin.enterprise_providers if company.signin is not None else []
    return [
        f"{company.tenant_key}: the enterprise provider {provider.issuer} must be https"
        " (issuer and jwks_uri): a forged key set would let anyone sign in"
        for provider in providers
        if not (issuer_is_safe(provider.issuer) and issuer_is_safe(provider.jwks_uri))
    ]


def _console_problems(company: CompanyDefinition) -> list[str]:
    """The staff's console login (companies.console_setup), held to the customers' rules."""
    console = company.console
    if console is None:
        return []
    login = console.login
    if isinstance(login, ConsoleDevLogin):
        return [
            f"{company.tenant_key}: the console's dev login signs in anyone who types a"
            " staff address"
        ]
    if not issuer_is_safe(login.issuer):
        return [f"{company.tenant_key}: the console's identity provider must be https"]
    return []


def stored_problems(document: dict[str, Any]) -> list[str]:
    """``production_problems`` of a stored definition (its secrets opened). One that does
    not validate is none of this check's business: loading it refuses it, and says why."""
    try:
        company = CompanyDefinition.model_validate(document, context=FROM_STORE)
    except ValidationError:
        return []
    return production_problems(company)


def issuer_is_safe(issuer: str) -> bool:
    """An issuer production talks to: https (OpenID Connect Discovery 1.0, section 3)."""
    return urlsplit(issuer).scheme == "https"
