"""The ``console`` section of a company: who of the company's staff may sign in to the
console (``/console/``) and through which login.

Its own module: the company's definition (companies.definition) only names it. The login
is the company's choice, as its customers' is: ``dev`` (a plain form, refused in
production) or ``oidc`` (the staff's OpenID provider). The secret of an ``oidc`` login is
only ever named by an environment variable: nothing of the console is sealed in the store.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# A domain name as a company writes it for its staff's addresses: "initech.example".
DOMAIN = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
# The address itself is compared as the login vouches for it, lower-cased.
EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]{1,255}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConsoleDevLogin(_Model):
    """Whoever types an allowed address: for trials only, refused in production."""

    type: Literal["dev"]


class ConsoleOidcLogin(_Model):
    """The staff's OpenID Connect provider (authorization code flow with PKCE)."""

    type: Literal["oidc"]
    issuer: str = Field(pattern=r"^https?://[^\s?#]+$")
    client_id: str = Field(min_length=1)
    client_secret_env: str = Field(pattern=r"^[A-Z_][A-Z0-9_]*$")
    scopes: list[str] = Field(default_factory=lambda: ["openid", "email", "profile"])

    @field_validator("scopes")
    @classmethod
    def _asks_for_openid_and_email(cls, value: list[str]) -> list[str]:
        # Staff are recognised by their verified address (ConsoleStaff): without the
        # email scope no provider sends one.
        if "openid" not in value or "email" not in value:
            raise ValueError('scopes must include "openid" and "email"')
        return value


ConsoleLogin = Annotated[ConsoleDevLogin | ConsoleOidcLogin, Field(discriminator="type")]


class ConsoleStaff(_Model):
    """Who is staff: listed addresses, or every address of the listed domains."""

    emails: list[str] = Field(default_factory=list, max_length=1000)
    domains: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("emails")
    @classmethod
    def _emails_are_addresses(cls, value: list[str]) -> list[str]:
        for email in value:
            if not EMAIL.match(email):
                raise ValueError(f"{email!r} is not an email address")
        return [email.lower() for email in value]

    @field_validator("domains")
    @classmethod
    def _domains_are_names(cls, value: list[str]) -> list[str]:
        for domain in value:
            if not DOMAIN.match(domain.lower()):
                raise ValueError(f"{domain!r} is not a domain name, e.g. initech.example")
        return [domain.lower() for domain in value]

    @model_validator(mode="after")
    def _names_someone(self) -> ConsoleStaff:
        if not self.emails and not self.domains:
            raise ValueError("name the staff: emails, domains or both")
        return self

    def admits(self, email: str) -> bool:
        """Whether the address is staff: a listed address, or one of a listed domain
        (exactly that domain: a subdomain is another organisation's to vouch for)."""
        address = email.strip().lower()
        if address in self.emails:
            return True
        _local, _at, domain = address.rpartition("@")
        return bool(_at) and domain in self.domains


class ConsoleSetup(_Model):
    """The company's console: present only for companies that have set it up."""

    login: ConsoleLogin
    staff: ConsoleStaff
