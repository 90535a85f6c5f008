"""A change the console makes to a company: the stored definition (its secrets opened, as
``companies apply`` reads a file), changed, then validated and applied exactly as
``companies apply`` does (companies.files: every check, then one transaction), so the
console and the command line never disagree and nothing is half-applied. Production's own
refusals (companies.production) hold here too."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from frontdesk.companies.definition import CompanyDefinition
from frontdesk.companies.files import apply_companies, parse_companies
from frontdesk.companies.production import production_problems
from frontdesk.console.context import ConsoleServices
from frontdesk.errors import ConfigurationError
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.store import audit


class ChangeRefused(Exception):
    """The changed company did not pass the checks; the message names the field at fault."""


async def stored_definition(services: ConsoleServices, tenant_key: str) -> dict[str, Any]:
    """The company's definition with its secrets opened; 404 when there is none."""
    stored = await services.companies.get(tenant_key)
    if stored is None:
        raise AuthorizePage(404, "Not found", "There is no such company.")
    return services.companies.opened(stored)


async def change_company(
    services: ConsoleServices, tenant_key: str, change: Callable[[dict[str, Any]], None]
) -> None:
    """Apply ``change`` (which edits the definition in place) to the stored company."""
    document = await stored_definition(services, tenant_key)
    change(document)
    try:
        parsed = parse_companies({"companies": [document]})
    except ConfigurationError as error:
        raise ChangeRefused(str(error).replace("companies[0].", "")) from None
    company: CompanyDefinition = parsed.companies[0]
    if services.settings.is_production:
        problems = production_problems(company)
        if problems:
            raise ChangeRefused("not for production: " + "; ".join(problems))
    await apply_companies(services.companies, parsed)
    # This instance serves the change at once; the others within their cache's bound
    # (FRONTDESK_COMPANY_CACHE_SECONDS), as after `companies apply`.
    services.registry.forget()


async def audited(
    services: ConsoleServices, tenant_key: str, by: str, change: str, **detail: Any
) -> None:
    """The change in the company's audit log: who made it in the console, and what. Written
    once the change is, in a transaction of its own (``companies apply`` writes in its
    own); ``detail`` names things, never holds a secret."""
    async with services.database.engine.begin() as connection:
        await audit.record(
            connection,
            tenant_key,
            audit.Event.CONSOLE_CHANGE,
            datetime.now(UTC),
            by=by,
            change=change,
            **detail,
        )
