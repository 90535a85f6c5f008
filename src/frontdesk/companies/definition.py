"""The shape of a company, as operators declare it and as the database keeps it.

One set of models serves both: ``frontdesk companies apply`` validates a file with them, the
store keeps the validated document (its secrets sealed, company_secrets), and loading it
back (``FROM_STORE``) validates it again: a company served has passed every check here.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from frontdesk.companies import tool_terms
from frontdesk.companies.branding import Branding
from frontdesk.companies.caller_identity import CallerIdentity
from frontdesk.companies.console_setup import ConsoleSetup
from frontdesk.companies.enterprise_providers import EnterpriseProviders
from frontdesk.companies.header_declarations import InvalidDeclaration, declarations
from frontdesk.companies.provider_definitions import OpenApiProvider
from frontdesk.config import LOOPBACK_HOSTS, Region
from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.sealing.company_secrets import not_redacted
from frontdesk.store.grant_records import REFRESH_RETRY_MAX_SECONDS
from frontdesk.tools.schemas import InvalidSchema, SchemaCheck

TENANT_KEY_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
# MCP 2025-11-25: tool names are 1-128 characters of letters, digits, '_', '-' and '.'.
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,128}$"
PYTHON_TARGET_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
# RFC 3986 3.1, in lower case as RFC 8252 7.1 asks of private-use schemes.
URI_SCHEME_PATTERN = re.compile(r"[a-z][a-z0-9+.-]*\Z")
# Schemes a browser runs, shows or hands to another program rather than returning to the
# client that registered: never a private-use redirect scheme, whatever a company names.
NOT_PRIVATE_SCHEMES = frozenset(
    {"http", "https", "javascript", "data", "vbscript", "file", "about", "blob", "filesystem"}
    | {"ftp", "ws", "wss", "mailto", "tel", "sms", "intent", "view-source", "chrome"}
)

# The validation context of a definition read back from the store (``context=FROM_STORE``).
FROM_STORE = object()


class Model(BaseModel):
    """Strict and immutable: an unknown field in a companies file is a typo, not an extension."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Access(StrEnum):
    PUBLIC = "public"
    PERSONAL = "personal"


class PythonProvider(Model):
    """An importable async callable: for self-hosters and test fixtures."""

    type: Literal["python"]
    target: Annotated[str, Field(pattern=PYTHON_TARGET_PATTERN)]


class HttpProvider(Model, CallerIdentity):
    """The company's own backend: each call is a signed POST (see frontdesk.tools.http)."""

    type: Literal["http"]
    url: str = Field(max_length=2048)
    secret: str | None = Field(default=None, min_length=16)  # HMAC key; best in secret_env
    secret_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]*$")

    _secret_is_given = field_validator("secret")(not_redacted)

    @field_validator("url")
    @classmethod
    def _https_or_loopback(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be an absolute https URL")
        if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            raise ValueError("must be https (plain http only to a loopback address, for tests)")
        if parts.username or parts.password or parts.fragment:
            raise ValueError("must not carry credentials or a fragment")
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> HttpProvider:
        if (self.secret is None) == (self.secret_env is None):
            raise ValueError("give exactly one of secret or secret_env")
        return self


ProviderRef = Annotated[
    PythonProvider | HttpProvider | OpenApiProvider, Field(discriminator="type")
]


def _check_json_schema(
    schema: dict[str, Any] | None, info: ValidationInfo
) -> dict[str, Any] | None:
    if schema is None:
        return None
    if schema.get("type") != "object":
        raise ValueError('must be a JSON Schema whose "type" is "object"')
    # Compiled as serving compiles it (frontdesk.tools.schemas), whether applied or read back:
    # a schema that passes can check every call (its references resolved within it, its
    # patterns taken by the linear-time engine, its draft one that is served).
    try:
        SchemaCheck(schema)
    except InvalidSchema as error:
        # The name is validated before the schemas (field order) and is absent if wrong.
        tool = info.data.get("name", "?")
        raise ValueError(f"is not a valid JSON Schema for tool {tool!r}: {error}") from None
    return schema


class ClientCapability(StrEnum):
    """What a tool may need the customer's client to answer (MCP 2026-07-28
    ``ClientCapabilities``): questions to the customer, its model, its roots."""

    ELICITATION = "elicitation"
    SAMPLING = "sampling"
    ROOTS = "roots"


class ToolDefinition(Model):
    name: Annotated[str, Field(pattern=TOOL_NAME_PATTERN)]
    title: str | None = None
    description: str = Field(min_length=1)
    access: Access = Access.PUBLIC
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    # All five required when applied (companies.tool_terms); a grant must hold ``scope``.
    annotations: tool_terms.ToolAnnotations | None = Field(default=None, validate_default=True)
    scope: tool_terms.ToolScope | None = None
    timeout: float = Field(default=30.0, gt=0, le=300)  # seconds, then the call timed out
    enabled: bool = True  # False: kept in the definition, not served (companies.catalog)
    # What every call asks of the client, e.g. [elicitation]: a client without it is refused
    # before the tool runs (MCP 2026-07-28, -32021), not asked what it cannot answer.
    required_client_capabilities: list[ClientCapability] = Field(default_factory=list)
    provider: ProviderRef

    _schemas = field_validator("input_schema", "output_schema")(_check_json_schema)
    _annotated = field_validator("annotations", mode="before")(tool_terms.complete_annotations)
    _scope = field_validator("scope")(tool_terms.check_tool_scope)

    @field_validator("required_client_capabilities")
    @classmethod
    def _capabilities_are_unique(cls, value: list[ClientCapability]) -> list[ClientCapability]:
        if len(set(value)) != len(value):
            raise ValueError("names a capability twice")
        return value

    @field_validator("input_schema")
    @classmethod
    def _param_headers_are_allowed(
        cls, schema: dict[str, Any], info: ValidationInfo
    ) -> dict[str, Any]:
        # Applying only: a company stored before this check keeps loading, its forbidden
        # declarations unchecked (clients drop such a tool; ServedTool.param_headers).
        if info.context is FROM_STORE:
            return schema
        try:
            declarations(schema)
        except InvalidDeclaration as error:
            # The name is validated before the schema (field order) and is absent if wrong.
            tool = info.data.get("name", "?")
            raise ValueError(
                f"tool {tool!r} cannot be served with its Mcp-Param headers: {error}"
                " (MCP 2026-07-28, Streamable HTTP, 'Custom Headers from Tool Parameters')"
            ) from None
        return schema


class ResourceDefinition(Model):
    """A document the company publishes, read with ``resources/read``: fixed text or bytes,
    or read on demand from a python provider."""

    uri: str = Field(min_length=1, max_length=2048)
    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    mime_type: str = "text/plain"
    access: Access = Access.PUBLIC
    text: str | None = None
    blob_base64: str | None = None
    provider: PythonProvider | None = None

    @field_validator("uri")
    @classmethod
    def _uri_has_scheme(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value):
            raise ValueError("must be an absolute URI, e.g. company://opening-hours")
        return value

    @model_validator(mode="after")
    def _one_body(self) -> ResourceDefinition:
        given = [self.text is not None, self.blob_base64 is not None, self.provider is not None]
        if sum(given) != 1:
            raise ValueError("give exactly one of text, blob_base64 or provider")
        return self


class ResourceTemplateDefinition(Model):
    """A family of resources by URI template (RFC 6570), offered for discovery and completion."""

    uri_template: str = Field(min_length=1, max_length=2048)
    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    access: Access = Access.PUBLIC
    # Suggestions for each template variable, answered by ``completion/complete``.
    completions: dict[str, list[str]] = Field(default_factory=dict)
    # Reads a URI that matches the template; without one the template is for discovery.
    provider: PythonProvider | None = None

    @model_validator(mode="after")
    def _completions_name_variables(self) -> ResourceTemplateDefinition:
        variables = set(re.findall(r"\{[+#./;?&]?([A-Za-z0-9_]+)", self.uri_template))
        unknown = sorted(set(self.completions) - variables)
        if unknown:
            raise ValueError(f"completions name variables not in the template: {unknown}")
        return self


class PromptArgument(Model):
    name: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    description: str | None = None
    required: bool = False
    completions: list[str] = Field(default_factory=list)


class PromptMessage(Model):
    role: Literal["user", "assistant"]
    # ``{argument}`` placeholders are filled in by ``prompts/get``.
    text: str


class PromptDefinition(Model):
    name: str = Field(min_length=1, max_length=128)
    title: str | None = None
    description: str | None = None
    access: Access = Access.PUBLIC
    arguments: list[PromptArgument] = Field(default_factory=list)
    # Fixed messages with ``{argument}`` placeholders, or a python provider that builds them.
    messages: list[PromptMessage] = Field(default_factory=list)
    provider: PythonProvider | None = None

    @model_validator(mode="after")
    def _one_source(self) -> PromptDefinition:
        if bool(self.messages) == (self.provider is not None):
            raise ValueError("give either messages or a provider")
        return self

    @model_validator(mode="after")
    def _placeholders_are_arguments(self) -> PromptDefinition:
        declared = {argument.name for argument in self.arguments}
        for message in self.messages:
            used = set(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", message.text))
            if used - declared:
                raise ValueError(f"messages use undeclared arguments: {sorted(used - declared)}")
        return self


class DevLogin(Model):
    """A plain form that signs in whoever types an email: for trials, refused in production."""

    type: Literal["dev"]


class OidcLogin(Model):
    """The company's own OpenID Connect provider (authorization code flow with PKCE)."""

    type: Literal["oidc"]
    issuer: str = Field(pattern=r"^https?://[^\s?#]+$")
    client_id: str = Field(min_length=1)
    # The secret is best kept out of the file: name an environment variable that holds it.
    client_secret: str | None = Field(default=None, min_length=1)
    client_secret_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]*$")
    scopes: list[str] = Field(default_factory=lambda: ["openid", "email", "profile"])

    _secret_is_given = field_validator("client_secret")(not_redacted)

    @model_validator(mode="after")
    def _one_secret(self) -> OidcLogin:
        if (self.client_secret is None) == (self.client_secret_env is None):
            raise ValueError("give exactly one of client_secret or client_secret_env")
        if "openid" not in self.scopes:
            raise ValueError('scopes must include "openid"')
        return self


LoginSetup = Annotated[DevLogin | OidcLogin, Field(discriminator="type")]


class SigninSetup(Model):
    """Customer sign-in: present only for companies that have set it up."""

    login: LoginSetup
    access_token_minutes: int = Field(default=60, ge=1, le=60)  # the contract's bounds
    refresh_token_days: int = Field(default=30, ge=1, le=30)  # (interface 3.1, 3.2)
    # A deviation from interface 3.2 a company may choose: a retry window (oauth.refresh).
    refresh_retry_seconds: int = Field(default=0, ge=0, le=REFRESH_RETRY_MAX_SECONDS)
    # Private-use URI schemes (RFC 8252 7.1) a company opts in to for its native clients'
    # redirect URIs, e.g. ["cursor"]; the contract allows only https and loopback http.
    native_redirect_schemes: list[str] = Field(default_factory=list, max_length=20)
    enterprise_providers: EnterpriseProviders = Field(default_factory=list)  # ID-JAG issuers

    @field_validator("native_redirect_schemes")
    @classmethod
    def _schemes_are_private_use(cls, value: list[str]) -> list[str]:
        for scheme in value:
            if not URI_SCHEME_PATTERN.match(scheme):
                raise ValueError(f"{scheme!r} is not a URI scheme (RFC 3986 3.1, lower case)")
            if scheme in NOT_PRIVATE_SCHEMES:
                raise ValueError(f"{scheme!r} cannot be a private-use redirect scheme")
        return value


def _unique(items: list[Any], key: str, what: str) -> None:
    """Refuse a repeated key at the repeat's own path (``tools[1].name``), not the parent's.

    pydantic places the line errors of a ValidationError raised here under the model's
    location; ``what`` names the field holding ``items``, with spaces for underscores.
    """
    seen: set[str] = set()
    for index, item in enumerate(items):
        value = getattr(item, key)
        if value in seen:
            # The repeated value goes last in ctx: pydantic fills placeholders in order,
            # and a value such as "acme://{model}" must not be read as one.
            error = PydanticCustomError(
                "duplicate",
                "two {what} share the {key} {value}",
                {"what": what, "key": key, "value": repr(value)},
            )
            loc = (what.replace(" ", "_"), index, key)
            raise ValidationError.from_exception_data(
                "duplicate", [InitErrorDetails(type=error, loc=loc, input=value)]
            )
        seen.add(value)


class CompanyDefinition(Model):
    tenant_key: Annotated[str, Field(pattern=TENANT_KEY_PATTERN)]
    name: str = Field(min_length=1, max_length=200)
    region: Region = Region.EU
    active: bool = True
    instructions: str | None = None
    # Per caller on its MCP endpoint, e.g. "120/minute"; the operator's default when absent.
    rate_limit: str | None = None
    signin: SigninSetup | None = None
    branding: Branding | None = None  # logo, colour, links of the pages (companies.branding)
    console: ConsoleSetup | None = None  # the staff's console (companies.console_setup)
    tools: list[ToolDefinition] = Field(default_factory=list)
    resources: list[ResourceDefinition] = Field(default_factory=list)
    resource_templates: list[ResourceTemplateDefinition] = Field(default_factory=list)
    prompts: list[PromptDefinition] = Field(default_factory=list)

    @field_validator("rate_limit")
    @classmethod
    def _rate_limit_parses(cls, value: str | None) -> str | None:
        if value is not None:
            parse_rate_limit(value)  # its ValueError says what is wrong and what is expected
        return value

    @model_validator(mode="after")
    def _names_are_unique(self) -> CompanyDefinition:
        _unique(self.tools, "name", "tools")
        _unique(self.resources, "uri", "resources")
        _unique(self.resource_templates, "uri_template", "resource templates")
        _unique(self.prompts, "name", "prompts")
        tool_terms.check_scope_text([tool.scope for tool in self.tools])
        return self


class CompaniesFile(Model):
    """The file ``frontdesk companies apply`` reads."""

    companies: list[CompanyDefinition] = Field(min_length=1)

    @model_validator(mode="after")
    def _keys_are_unique(self) -> CompaniesFile:
        _unique(self.companies, "tenant_key", "companies")
        return self
