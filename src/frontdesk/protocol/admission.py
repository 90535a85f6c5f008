"""What every method that serves a company's resource or prompt holds to: personal ones
only for signed-in customers, and a provider's answer within its deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import structlog

from frontdesk.companies.definition import Access
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import ProviderFailed, RpcError, SignInRequired

log = structlog.get_logger(__name__)

# Resources and prompts from providers: how long a read or a build may take.
PROVIDER_TIMEOUT_SECONDS = 30.0

T = TypeVar("T")


def admit_personal(context: RequestContext, access: Access, what: str) -> None:
    """Personal resources and prompts follow the tools' rules (interface 5.4, 5.5), as errors."""
    if access is not Access.PERSONAL or not context.caller.is_guest:
        return
    challenges = context.sign_in
    if challenges is None:
        raise SignInRequired(
            f"{what} is for signed-in customers only, and {context.company.name} has not set"
            " up customer sign-in"
        )
    context.www_authenticate = challenges.guest
    raise SignInRequired(
        f"Sign in to {context.company.name} to use {what}",
        data={"mcp/www_authenticate": [challenges.guest_in_reply]},
    )


async def provide(context: RequestContext, what: str, work: Awaitable[T]) -> T:
    """Await a provider with the standard deadline; failures become a plain error."""
    try:
        async with asyncio.timeout(PROVIDER_TIMEOUT_SECONDS):
            return await work
    except TimeoutError:
        log.warning("provider_timeout", tenant=context.company.tenant_key, item=what)
        raise ProviderFailed(f"The {what} did not answer in time") from None
    except RpcError:
        raise
    except Exception:
        log.exception("provider_failed", tenant=context.company.tenant_key, item=what)
        raise ProviderFailed(f"The {what} is unavailable right now") from None
