"""A company ready to serve: its definition plus everything worked out once at load time.

Listings are built once per load, argument validators compiled once and providers
resolved once, so a request does no more than look things up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from jsonschema import Draft202012Validator
from limits import RateLimitItem
from limits import parse as parse_rate_limit

from frontdesk.companies.definition import (
    Access,
    CompanyDefinition,
    PromptDefinition,
    PythonProvider,
    ResourceDefinition,
    ToolDefinition,
)
from frontdesk.oauth.scopes import SUPPORTED as SUPPORTED_SCOPES
from frontdesk.tools.provider import ToolProvider, ToolUnavailableError
from frontdesk.tools.python import PythonToolProvider

log = structlog.get_logger(__name__)


def _provider_for(reference: PythonProvider) -> ToolProvider:
    match reference:
        case PythonProvider(target=target):
            return PythonToolProvider(target)


def _drop_none(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if value is not None}


@dataclass(frozen=True, slots=True)
class ServedTool:
    definition: ToolDefinition
    arguments: Draft202012Validator
    output: Draft202012Validator | None
    # None when the provider could not be loaded: the tool is still listed (the company
    # meant to offer it) and a call says it is unavailable.
    provider: ToolProvider | None

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def is_personal(self) -> bool:
        return self.definition.access is Access.PERSONAL

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


def _serve_tool(tenant_key: str, tool: ToolDefinition) -> ServedTool:
    provider: ToolProvider | None
    try:
        provider = _provider_for(tool.provider)
    except ToolUnavailableError as error:
        log.error("tool_provider_unavailable", tenant=tenant_key, tool=tool.name, reason=str(error))
        provider = None
    output = Draft202012Validator(tool.output_schema) if tool.output_schema else None
    return ServedTool(tool, Draft202012Validator(tool.input_schema), output, provider)


# SPEC 5.5: with sign-in, every tool can be called both ways: a guest gets the public
# behaviour, a signed-in customer the personal one. Mirrored in _meta for clients that
# read it there (the OpenAI Apps SDK convention).
SECURITY_SCHEMES: list[dict[str, Any]] = [
    {"type": "noauth"},
    {"type": "oauth2", "scopes": list(SUPPORTED_SCOPES)},
]


def _with_security_schemes(listing: dict[str, Any]) -> dict[str, Any]:
    return {
        **listing,
        "securitySchemes": SECURITY_SCHEMES,
        "_meta": {"securitySchemes": SECURITY_SCHEMES},
    }


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


class ServedCompany:
    """One company's MCP surface, as this instance serves it."""

    def __init__(self, definition: CompanyDefinition, default_rate_limit: str) -> None:
        self.definition = definition
        self.tenant_key = definition.tenant_key
        self.name = definition.name
        self.rate_limit: RateLimitItem = parse_rate_limit(
            definition.rate_limit or default_rate_limit
        )
        self.tools = {tool.name: _serve_tool(self.tenant_key, tool) for tool in definition.tools}
        self.resources = {resource.uri: resource for resource in definition.resources}
        self.resource_templates = {
            template.uri_template: template for template in definition.resource_templates
        }
        self.prompts = {prompt.name: prompt for prompt in definition.prompts}

        self.has_signin = definition.signin is not None
        self.tools_listing = {
            "tools": [
                _with_security_schemes(tool.listing) if self.has_signin else tool.listing
                for tool in self.tools.values()
            ]
        }
        self.resources_listing = {
            "resources": [_resource_listing(resource) for resource in definition.resources]
        }
        self.resource_templates_listing = {
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
        self.prompts_listing = {
            "prompts": [_prompt_listing(prompt) for prompt in definition.prompts]
        }
