"""Builds the provider a tool names, with what providers share: one HTTP client for every
backend call (connections kept alive across calls, each made where the operator's address
policy permits: outbound.OutboundClients).
The HTTP provider and its client are loaded with the first HTTP tool."""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlsplit

from frontdesk.companies.caller_identity import JWT
from frontdesk.companies.definition import HttpProvider, PythonProvider
from frontdesk.companies.provider_definitions import OpenApiProvider
from frontdesk.outbound.clients import OutboundClients
from frontdesk.tools.identity import IdentityMinter
from frontdesk.tools.provider import ToolProvider, ToolUnavailableError
from frontdesk.tools.python import PythonToolProvider


class ProviderFactory:
    def __init__(
        self, outbound: OutboundClients | None = None, identity: IdentityMinter | None = None
    ) -> None:
        self._outbound = outbound
        # Mints the JWT of a company's API (frontdesk.tools.identity_tokens), for providers whose
        # company chose signed identity.
        self._identity = identity
        # One lane of connections per backend (scheme, host and port), whichever company
        # and tool call it.
        self._lanes: dict[str, asyncio.Semaphore] = {}

    def tool_provider(
        self, reference: PythonProvider | HttpProvider | OpenApiProvider
    ) -> ToolProvider:
        """The provider, or ToolUnavailableError saying why it cannot be built."""
        match reference:
            case PythonProvider(target=target):
                return PythonToolProvider(target)
            case HttpProvider():
                if self._outbound is None:
                    raise ToolUnavailableError("no HTTP client for backend calls")
                # Imported here: httpx is loaded with the first HTTP tool, not before.
                from frontdesk.tools.http import CONNECTIONS_PER_BACKEND, HttpToolProvider

                secret = reference.secret
                if reference.secret_env is not None:
                    secret = os.environ.get(reference.secret_env)
                if not secret:
                    # Logged with the company and the tool when the company is loaded
                    # (catalog); the caller is only told the tool is unavailable.
                    raise ToolUnavailableError(
                        f"the environment variable {reference.secret_env} named by"
                        " provider.secret_env is not set"
                    )
                lane = self._lane(reference.url, CONNECTIONS_PER_BACKEND)
                identity = None
                if reference.identity == JWT:
                    if self._identity is None:
                        raise ToolUnavailableError("no minter of identity tokens")
                    identity = self._identity
                return HttpToolProvider(
                    reference.url,
                    secret,
                    self._outbound.for_backends(),
                    lane,
                    identity,
                    reference.audience,
                )
            case OpenApiProvider():
                if self._outbound is None:
                    raise ToolUnavailableError("no HTTP client for backend calls")
                from frontdesk.tools.http import CONNECTIONS_PER_BACKEND
                from frontdesk.tools.openapi import OpenApiToolProvider, Operation, Parameter

                operation = Operation(
                    base_url=reference.base_url,
                    method=reference.method,
                    path=reference.path,
                    parameters=tuple(
                        Parameter(p.name, p.in_, p.argument_name) for p in reference.parameters
                    ),
                    body=reference.body,
                    audience=reference.audience or reference.base_url,
                )
                lane = self._lane(reference.base_url, CONNECTIONS_PER_BACKEND)
                return OpenApiToolProvider(
                    operation, self._outbound.for_backends(), lane, self._identity
                )

    def _lane(self, url: str, size: int) -> asyncio.Semaphore:
        """The lane of the backend ``url`` is on: its scheme, host and port."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc.lower()}"
        return self._lanes.setdefault(origin, asyncio.Semaphore(size))
