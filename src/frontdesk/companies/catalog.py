"""A company ready to serve: its definition plus everything worked out once at load time.

Listings are built once per load, argument validators compiled once and providers
resolved once, so a request does no more than look things up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
import structlog

from frontdesk import __version__
from frontdesk.companies.definition import (
    Access,
    CompanyDefinition,
    PromptDefinition,
    PythonProvider,
    ResourceDefinition,
    ResourceTemplateDefinition,
    ToolDefinition,
)
from frontdesk.companies.header_declarations import ParamHeader, declared
from frontdesk.companies.providers import ProviderFactory
from frontdesk.companies.tool_versions import snapshot_id, tool_version
from frontdesk.companies.uri_templates import UriTemplate
from frontdesk.limits.ratelimit import RateLimit, parse_rate_limit
from frontdesk.scopes import SUPPORTED as SUPPORTED_SCOPES
from frontdesk.tools.content import PromptBuilder, ResourceReader, prompt_builder, resource_reader
from frontdesk.tools.provider import ToolProvider, ToolUnavailableError
from frontdesk.tools.schemas import SchemaCheck

log = structlog.get_logger(__name__)

T = TypeVar("T")


def _load(tenant_key: str, what: str, name: str, build: Callable[[], T]) -> T | None:
    """The provider, or None (logged) when it cannot be loaded: the item stays listed, as
    the company meant to offer it, and using it says it is unavailable."""
    try:
        return build()
    except ToolUnavailableError as error:
        log.error(
            "provider_unavailable", tenant=tenant_key, item=f"{what} {name}", reason=str(error)
        )
        return None


def _drop_none(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if value is not None}


# Looked up once: reading a member off its Enum class is paid on every tools/call
# (docs/decisions/hot-path-records.md).
_PERSONAL = Access.PERSONAL


@dataclass(frozen=True, slots=True)
class ServedTool:
    definition: ToolDefinition
    arguments: SchemaCheck
    output: SchemaCheck | None
    # None when the provider could not be loaded: the tool is still listed (the company
    # meant to offer it) and a call says it is unavailable.
    provider: ToolProvider | None
    # The arguments a 2026-07-28 client repeats in Mcp-Param-* headers (x-mcp-header).
    param_headers: tuple[ParamHeader, ...] = ()
    # What a consent records of it (companies.tool_versions), computed once per load.
    version: str = ""

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def is_personal(self) -> bool:
        return self.definition.access is _PERSONAL

    @property
    def listing(self) -> dict[str, Any]:
        tool = self.definition
        annotations = (
            tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if tool.annotations
            else None
        )
        return _drop_none(
            {
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": tool.input_schema,
                "outputSchema": tool.output_schema,
                "annotations": annotations,
            }
        )


def _serve_tool(tenant_key: str, tool: ToolDefinition, providers: ProviderFactory) -> ServedTool:
    provider = _load(tenant_key, "tool", tool.name, lambda: providers.tool_provider(tool.provider))
    output = SchemaCheck(tool.output_schema) if tool.output_schema else None
    return ServedTool(
        tool,
        SchemaCheck(tool.input_schema),
        output,
        provider,
        declared(tool.input_schema),
        tool_version(tool),
    )


@dataclass(frozen=True, slots=True)
class ServedResource:
    definition: ResourceDefinition
    reader: ResourceReader | None


@dataclass(frozen=True, slots=True)
class ServedTemplate:
    definition: ResourceTemplateDefinition
    template: UriTemplate
    reader: ResourceReader | None

    def match(self, uri: str) -> dict[str, str] | None:
        return self.template.match(uri)


@dataclass(frozen=True, slots=True)
class ServedPrompt:
    definition: PromptDefinition
    builder: PromptBuilder | None


def _reader(
    tenant_key: str, what: str, name: str, provider: PythonProvider | None
) -> ResourceReader | None:
    if provider is None:
        return None
    return _load(tenant_key, what, name, lambda: resource_reader(provider.target))


# interface 5.5: with sign-in, every tool can be called both ways: a guest gets the public
# behaviour, a signed-in customer the personal one. Mirrored in _meta for clients that
# read it there (the OpenAI Apps SDK convention).
SECURITY_SCHEMES: list[dict[str, Any]] = [
    {"type": "noauth"},
    {"type": "oauth2", "scopes": list(SUPPORTED_SCOPES)},
]


def _with_security_schemes(listing: dict[str, Any], scope: str | None = None) -> dict[str, Any]:
    # A tool with a scope of its own (companies.tool_scopes) names it: the one a grant needs.
    schemes = (
        SECURITY_SCHEMES
        if scope is None
        else [{"type": "noauth"}, {"type": "oauth2", "scopes": [*SUPPORTED_SCOPES, scope]}]
    )
    return {**listing, "securitySchemes": schemes, "_meta": {"securitySchemes": schemes}}


# Where a 2026-07-28 listing names each tool's version (under the project's reverse-DNS
# prefix, as MCP asks of ``_meta`` keys that are not the protocol's).
VERSION_META_KEY = "dev.frontdesk/version"


def _with_version(listing: dict[str, Any], version: str) -> dict[str, Any]:
    return {**listing, "_meta": {**listing.get("_meta", {}), VERSION_META_KEY: version}}


def _resource_listing(resource: ResourceDefinition) -> dict[str, Any]:
    return _drop_none(
        {
            "uri": resource.uri,
            "name": resource.name,
            "title": resource.title,
            "description": resource.description,
            "mimeType": resource.mime_type,
        }
    )


def _prompt_listing(prompt: PromptDefinition) -> dict[str, Any]:
    return _drop_none(
        {
            "name": prompt.name,
            "title": prompt.title,
            "description": prompt.description,
            "arguments": [
                _drop_none(
                    {
                        "name": argument.name,
                        "description": argument.description,
                        "required": argument.required,
                    }
                )
                for argument in prompt.arguments
            ],
        }
    )


def _builder_loader(provider: PythonProvider) -> Callable[[], PromptBuilder]:
    return lambda: prompt_builder(provider.target)


class ServedCompany:
    """One company's MCP surface, as this instance serves it."""

    def __init__(
        self,
        definition: CompanyDefinition,
        default_rate_limit: str,
        providers: ProviderFactory | None = None,
    ) -> None:
        providers = providers or ProviderFactory()
        key = definition.tenant_key
        self.definition = definition
        self.tenant_key = key
        self.name = definition.name
        self.rate_limit: RateLimit = parse_rate_limit(definition.rate_limit or default_rate_limit)
        # A disabled tool (switched off in the console) is not served: unknown to clients.
        # Kept by name, so that every listing has the same order whatever the file's.
        self.tools = {
            tool.name: _serve_tool(key, tool, providers)
            for tool in sorted(definition.tools, key=lambda tool: tool.name)
            if tool.enabled
        }
        # What a consent covers: each personal tool's version (oauth.tool_consent), and the
        # name of that set, recorded on the grant.
        self.personal_versions = {
            tool.name: tool.version for tool in self.tools.values() if tool.is_personal
        }
        self.consent_snapshot = snapshot_id(self.personal_versions)
        self.resources = {
            resource.uri: ServedResource(
                resource, _reader(key, "resource", resource.uri, resource.provider)
            )
            for resource in definition.resources
        }
        self.resource_templates = {
            template.uri_template: ServedTemplate(
                template,
                UriTemplate.parse(template.uri_template),
                _reader(key, "resource template", template.uri_template, template.provider),
            )
            for template in definition.resource_templates
        }
        self.prompts = {
            prompt.name: ServedPrompt(
                prompt,
                None
                if prompt.provider is None
                else _load(key, "prompt", prompt.name, _builder_loader(prompt.provider)),
            )
            for prompt in definition.prompts
        }

        self.has_signin = definition.signin is not None
        # Who answers, as MCP results name it (initialize's serverInfo; 2026-07-28's _meta).
        self.server_info = {"name": "frontdesk", "title": definition.name, "version": __version__}
        # A 2026-07-28 result's ``_meta`` when it has no keys of its own, rendered once here
        # for every reply (protocol/revisions/r2026_07_28.py).
        self.server_info_meta = orjson.Fragment(
            orjson.dumps({"io.modelcontextprotocol/serverInfo": self.server_info})
        )
        # The listings are rendered to JSON here, once: clients list often, a listing never
        # changes while the company is loaded, and rendering it per call was a large share
        # of a tools/list (docs/decisions/hot-path-records.md). The JSON (``*_json``) is
        # kept too: a 2026-07-28 reply adds its fields to it
        # (protocol/revisions/r2026_07_28.py).
        listings = {
            name: _with_security_schemes(tool.listing, tool.definition.scope)
            if self.has_signin
            else tool.listing
            for name, tool in self.tools.items()
        }
        self.tools_json = orjson.dumps({"tools": list(listings.values())})
        # At 2026-07-28 each tool also names its version in ``_meta``.
        self.versioned_tools_json = orjson.dumps(
            {
                "tools": [
                    _with_version(listing, self.tools[name].version)
                    for name, listing in listings.items()
                ]
            }
        )
        self.resources_json = orjson.dumps(
            {"resources": [_resource_listing(resource) for resource in definition.resources]}
        )
        self.resource_templates_json = orjson.dumps(
            {
                "resourceTemplates": [
                    _drop_none(
                        {
                            "uriTemplate": template.uri_template,
                            "name": template.name,
                            "title": template.title,
                            "description": template.description,
                            "mimeType": template.mime_type,
                        }
                    )
                    for template in definition.resource_templates
                ]
            }
        )
        self.prompts_json = orjson.dumps(
            {"prompts": [_prompt_listing(prompt) for prompt in definition.prompts]}
        )
        # Answered as they stand: orjson copies a Fragment into each reply.
        self.tools_listing = orjson.Fragment(self.tools_json)
        self.resources_listing = orjson.Fragment(self.resources_json)
        self.resource_templates_listing = orjson.Fragment(self.resource_templates_json)
        self.prompts_listing = orjson.Fragment(self.prompts_json)
