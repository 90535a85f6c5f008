"""Picks and keeps the login connector for each company's sign-in setup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from frontdesk.companies.definition import DevLogin as DevSetup
from frontdesk.companies.definition import OidcLogin as OidcSetup
from frontdesk.companies.definition import SigninSetup
from frontdesk.companies.production import issuer_is_safe
from frontdesk.config import Settings
from frontdesk.login.connector import LoginConnector, LoginFailed
from frontdesk.login.dev import DevLogin
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.clients import (
    LOGIN_MAX_ANSWER_BYTES,
    LOGIN_TIMEOUT_SECONDS,
    OutboundClients,
)
from frontdesk.outbound.policy import OutboundPolicy
from frontdesk.sealing.company_secrets import secret_from_environment

if TYPE_CHECKING:
    from frontdesk.login.issuer_keys import IssuerKeys
    from frontdesk.login.oidc import OidcSettings

UNAVAILABLE = "Sign-in is not available for this company right now."


class LoginConnectors:
    def __init__(self, settings: Settings, outbound: OutboundClients) -> None:
        self._settings = settings
        self._outbound = outbound
        # Keyed by the setup's JSON (the model holds a list, so it cannot be hashed): a
        # changed setup gets a new connector, an unchanged one keeps its cached provider
        # metadata and keys.
        self._oidc: dict[tuple[str, str], LoginConnector] = {}
        # A company's identity provider is named in the operator-reviewed companies file,
        # like its backends: the same networks are open to both. Plain http only outside
        # production (which also refuses an http issuer, companies.production).
        self._policy = OutboundPolicy(
            AddressPolicy(settings.backend_allowed_networks),
            allow_http=not settings.is_production,
            limit_bytes=LOGIN_MAX_ANSWER_BYTES,
            deadline_seconds=LOGIN_TIMEOUT_SECONDS,
        )
        self._issuer_keys: IssuerKeys | None = None

    def for_company(self, tenant_key: str, setup: SigninSetup) -> LoginConnector:
        login = setup.login
        match login:
            case DevSetup():
                if self._settings.is_production:
                    raise LoginFailed(UNAVAILABLE)
                return DevLogin(f"{self._settings.issuer(tenant_key)}/login")
            case OidcSetup():
                if self._settings.is_production and not issuer_is_safe(login.issuer):
                    # Stored before production refused it at apply (companies.production).
                    raise LoginFailed(UNAVAILABLE)
                key = (tenant_key, login.model_dump_json())
                connector = self._oidc.get(key)
                if connector is None:
                    # Imported here: the JOSE stack is only loaded by instances that serve
                    # a company with an OpenID Connect login.
                    from frontdesk.login.oidc import OidcLogin, OidcSettings

                    connector = OidcLogin(
                        self._oidc_settings(tenant_key, login, OidcSettings),
                        self._outbound.for_logins(),
                        self._policy,
                    )
                    self._oidc[key] = connector
                return connector

    def issuer_keys(self) -> IssuerKeys:
        """The keys of the enterprise identity providers companies trust (ID-JAG), under the
        same policy as their logins: these too are named in the operator-reviewed file."""
        if self._issuer_keys is None:
            # Imported here, as the OpenID Connect login is: the JOSE stack is only loaded
            # by instances that verify an assertion.
            from frontdesk.login.issuer_keys import IssuerKeys

            self._issuer_keys = IssuerKeys(self._outbound.for_logins, self._policy)
        return self._issuer_keys

    def console_oidc(
        self, owner: str, issuer: str, client_id: str, secret: str | None, scopes: list[str]
    ) -> LoginConnector:
        """The OpenID Connect login of a console sign-in (frontdesk.console): a company's
        staff's (``owner`` its tenant key) or the operators' (``owner`` empty), kept as a
        company's customer login is, and refused in production unless its issuer is safe."""
        if not secret or (self._settings.is_production and not issuer_is_safe(issuer)):
            raise LoginFailed(UNAVAILABLE)
        key = (f"console:{owner}", f"{issuer} {client_id} {' '.join(scopes)}")
        connector = self._oidc.get(key)
        if connector is None:
            from frontdesk.login.oidc import OidcLogin, OidcSettings

            settings = OidcSettings(issuer, client_id, secret, tuple(scopes))
            connector = OidcLogin(settings, self._outbound.for_logins(), self._policy)
            self._oidc[key] = connector
        return connector

    @staticmethod
    def _oidc_settings(
        tenant_key: str, login: OidcSetup, settings: type[OidcSettings]
    ) -> OidcSettings:
        secret = login.client_secret
        if login.client_secret_env is not None:
            # Logged by name for the operator; the customer is only told it is unavailable.
            secret = secret_from_environment(
                tenant_key, "signin.login.client_secret_env", login.client_secret_env
            )
        if not secret:
            raise LoginFailed(UNAVAILABLE)
        return settings(
            issuer=login.issuer,
            client_id=login.client_id,
            client_secret=secret,
            scopes=tuple(login.scopes),
        )
