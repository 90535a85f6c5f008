"""The enterprise identity providers a company trusts (companies.enterprise_providers): what
the companies file accepts, what it refuses with the field's path, and what production
refuses."""

from __future__ import annotations

import re
from typing import Any

import pytest

from frontdesk.companies.files import parse_companies
from frontdesk.companies.production import production_problems
from frontdesk.errors import ConfigurationError

ISSUER = "https://idp.acme.example"
JWKS = "https://idp.acme.example/keys"


def company(*providers: dict[str, Any]) -> dict[str, Any]:
    signin = {"login": {"type": "dev"}, "enterprise_providers": list(providers)}
    return {"companies": [{"tenant_key": "acme", "name": "Acme", "signin": signin}]}


def provider(**changes: Any) -> dict[str, Any]:
    return {"issuer": ISSUER, "jwks_uri": JWKS, **changes}


def test_a_provider_applies_with_its_defaults_and_none_is_the_default() -> None:
    [parsed] = parse_companies(company(provider())).companies
    assert parsed.signin is not None
    [trusted] = parsed.signin.enterprise_providers
    assert trusted.algorithms == ["RS256", "ES256"]
    assert (trusted.scopes, trusted.subjects, trusted.refresh_tokens) == ([], "issuer", False)
    plain = {"companies": [{"tenant_key": "b", "name": "B", "signin": {"login": {"type": "dev"}}}]}
    [other] = parse_companies(plain).companies
    assert other.signin is not None
    assert other.signin.enterprise_providers == []


@pytest.mark.parametrize(
    ("providers", "problem"),
    [
        ([provider(algorithms=["none"])], "enterprise_providers[0].algorithms[0]"),
        ([provider(algorithms=["HS256"])], "enterprise_providers[0].algorithms[0]"),
        ([provider(algorithms=[])], "enterprise_providers[0].algorithms"),
        ([provider(scopes=["read write"])], "is not a scope"),
        ([provider(jwks_uri="ftp://idp.acme.example/keys")], "enterprise_providers[0].jwks_uri"),
        ([provider(subjects="email")], "enterprise_providers[0].subjects"),
        ([provider(audience="https://x")], "enterprise_providers[0].audience"),
        ([provider(), provider(jwks_uri=JWKS + "2")], "share the issuer"),
    ],
)
def test_a_provider_the_file_cannot_mean_is_refused(
    providers: list[dict[str, Any]], problem: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(problem)):
        parse_companies(company(*providers))


def test_production_refuses_a_provider_reached_over_plain_http() -> None:
    [https] = parse_companies(company(provider())).companies
    [http] = parse_companies(company(provider(jwks_uri="http://idp.acme.example/keys"))).companies
    assert not [p for p in production_problems(https) if "enterprise" in p]
    [problem] = [p for p in production_problems(http) if "enterprise" in p]
    assert problem.startswith(f"acme: the enterprise provider {ISSUER} must be https")
