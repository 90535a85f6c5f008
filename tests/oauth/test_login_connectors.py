"""Which login a company's stored setup may use on this instance (login.connectors)."""

from __future__ import annotations

import pytest

from frontdesk.companies.definition import DevLogin, OidcLogin, SigninSetup
from frontdesk.config import Settings
from frontdesk.login.connector import LoginFailed
from frontdesk.login.connectors import LoginConnectors
from frontdesk.outbound.clients import OutboundClients

PRODUCTION = Settings(
    env="production",
    base_url="https://eu.frontdesk.example",
    secret_keys=["production-secret-key-0123456789-abcdefghijkl"],
    data_keys=["production-data-key-0123456789-abcdefghijklm"],
)


def oidc(issuer: str) -> SigninSetup:
    login = OidcLogin(type="oidc", issuer=issuer, client_id="frontdesk", client_secret="s")
    return SigninSetup(login=login)


@pytest.mark.parametrize(
    "setup",
    [SigninSetup(login=DevLogin(type="dev")), oidc("http://login.example")],
    ids=["dev", "http-issuer"],
)
def test_production_serves_no_login_it_would_refuse_at_apply(setup: SigninSetup) -> None:
    """A company stored before production refused it cannot sign anyone in there."""
    with pytest.raises(LoginFailed):
        LoginConnectors(PRODUCTION, OutboundClients()).for_company("shop", setup)


def test_production_serves_an_https_issuer_and_development_an_http_one() -> None:
    assert LoginConnectors(PRODUCTION, OutboundClients()).for_company(
        "shop", oidc("https://login.example")
    )
    assert LoginConnectors(Settings(), OutboundClients()).for_company(
        "shop", oidc("http://127.0.0.1:9000")
    )
