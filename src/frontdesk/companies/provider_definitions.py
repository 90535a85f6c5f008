"""The ``openapi`` provider as the companies file declares it: one operation of a company's
own REST API, called as that API expects (frontdesk.tools.openapi).

An imported OpenAPI document writes these (frontdesk.openapi_import); an operator may write
one by hand too. A tool's arguments are the operation's parameters, each under its own name
unless ``argument`` renames it, and the JSON request body under ``body``::

    provider:
      type: openapi
      source: Orders API          # the import that wrote it (re-imports replace only these)
      base_url: https://api.acme.example/v1
      method: GET
      path: /orders/{orderId}
      parameters:
        - {name: orderId, in: path}
        - {name: expand, in: query}
        - {name: X-Request-Id, in: header, argument: request_id}
      body: false                 # true: the ``body`` argument is sent as JSON
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from frontdesk.config import LOOPBACK_HOSTS

# The argument that carries an operation's JSON request body.
BODY_ARGUMENT = "body"
# RFC 9110 5.1: a field name is a token.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
# Headers Frontdesk sets itself, or that would change how the request is framed or routed:
# never taken from a caller's arguments.
RESERVED_HEADERS = frozenset(
    {
        "authorization",
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "accept-encoding",
        "cookie",
        "te",
        "upgrade",
        "proxy-authorization",
        # Frontdesk asks for JSON and names itself on every call (tools.openapi).
        "accept",
        "user-agent",
    }
)
_TEMPLATE_VARIABLE = re.compile(r"\{([^{}/]+)\}")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def checked_base_url(value: str) -> str:
    """An API's base URL: https, or plain http to a loopback host (tests, a service on the
    same machine), as for the ``http`` provider; no credentials, query or fragment."""
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("must be an absolute https URL")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        raise ValueError("must be https (plain http only to a loopback address, for tests)")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError("must not carry credentials, a query or a fragment")
    return value.rstrip("/")


class OperationParameter(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    # Cookie parameters are not imported: a cookie is the browser's, not an assistant's.
    in_: Literal["path", "query", "header"] = Field(alias="in")
    # The tool argument that holds it, when not its own name (two parameters of one name in
    # different places, or one named like the body).
    argument: str | None = Field(default=None, min_length=1, max_length=200)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @property
    def argument_name(self) -> str:
        return self.argument or self.name

    @model_validator(mode="after")
    def _header_is_settable(self) -> OperationParameter:
        if self.in_ == "header":
            if not _HEADER_NAME.match(self.name):
                raise ValueError(f"{self.name!r} is not an HTTP header name")
            if self.name.lower() in RESERVED_HEADERS:
                raise ValueError(f"the {self.name} header is Frontdesk's to set, not an argument")
        return self


class OpenApiProvider(BaseModel):
    """One operation of the company's REST API (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["openapi"]
    # The import that wrote this tool (its document's title unless named): re-importing
    # with the same source replaces its tools and never touches any other.
    source: str = Field(min_length=1, max_length=200)
    base_url: str = Field(max_length=2048)
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    path: str = Field(min_length=1, max_length=2048, pattern=r"^/")
    parameters: list[OperationParameter] = Field(default_factory=list, max_length=100)
    body: bool = False
    # The audience of the identity token a personal tool's call carries (its ``aud``): the
    # base URL unless the API names itself otherwise.
    audience: str | None = Field(default=None, min_length=1, max_length=2048)

    _base_url_is_reachable = field_validator("base_url")(checked_base_url)

    @model_validator(mode="after")
    def _parameters_fit(self) -> OpenApiProvider:
        arguments = [parameter.argument_name for parameter in self.parameters]
        if self.body:
            arguments.append(BODY_ARGUMENT)
        repeated = sorted({name for name in arguments if arguments.count(name) > 1})
        if repeated:
            raise ValueError(f"two parameters (or one and the body) share the argument {repeated}")
        in_path = {p.name for p in self.parameters if p.in_ == "path"}
        templated = set(_TEMPLATE_VARIABLE.findall(self.path))
        if in_path != templated:
            raise ValueError(
                f"the path {self.path!r} names {sorted(templated)} but the path parameters"
                f" are {sorted(in_path)}"
            )
        return self
