"""The console's OpenAPI import: a document pasted or named by URL, the tools it would
add, change and remove shown first (a dry run, nothing written), then applied on the staff
member's word. Both steps are ``openapi_import.plan.import_openapi``, the function the
command line (``frontdesk tools import-openapi``) and the admin API use, so the three
import alike: the same tools, the same diff, validated whole and written in one
transaction, or refused naming what is wrong with nothing written.

The document is read again when the import is applied (the page carries it, or its URL,
in the form), and the page then shows what was applied, which is the diff of that moment.
"""

from __future__ import annotations

from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.administration.company_state import UnknownCompany
from frontdesk.console.changes import audited
from frontdesk.console.company_pages import CompanyPages
from frontdesk.console.routes import Console
from frontdesk.console.session import ConsoleSession
from frontdesk.errors import FrontdeskError
from frontdesk.oauth.errors import AuthorizePage

log = structlog.get_logger(__name__)

# A pasted document, form-encoded (which may triple it): the fetched one's cap
# (openapi_import.document.MAX_DOCUMENT_BYTES) is 2 MiB.
MAX_IMPORT_FORM_BYTES = 6 * 1024 * 1024
FIELDS = ("document", "url", "base_url", "include")


class ImportPage:
    def __init__(self, console: Console, pages: CompanyPages) -> None:
        self._services = console.services
        self._pages = pages

    async def show(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        return await self._render(request, current, tenant_key, dict.fromkeys(FIELDS, ""))

    async def submit(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        form = self._pages.form(request)
        typed = {name: form.get(name, "").strip() for name in FIELDS}
        apply = form.get("action") == "apply"
        try:
            plan = await self._import(tenant_key, typed, dry_run=not apply)
        except FrontdeskError as refusal:
            return await self._render(
                request, current, tenant_key, typed, problem=f"Not imported: {refusal}", status=400
            )
        if apply and plan.applied:
            self._services.registry.forget()
            log.info("console_openapi_imported", tenant=tenant_key, source=plan.source)
            await audited(
                self._services,
                tenant_key,
                current.email,
                "openapi_imported",
                source=plan.source,
                added=plan.added,
                changed=plan.changed,
                removed=plan.removed,
            )
        return await self._render(request, current, tenant_key, typed, plan=plan, applied=apply)

    async def _import(self, tenant_key: str, typed: dict[str, str], *, dry_run: bool) -> Any:
        # Imported here: the importer (its validator, YAML) is loaded by the first import.
        from frontdesk.openapi_import import ImportRefused
        from frontdesk.openapi_import.document import fetch, parse_text
        from frontdesk.openapi_import.plan import ImportRequest, import_openapi

        settings = self._services.settings
        if bool(typed["document"]) == bool(typed["url"]):
            raise ImportRefused("paste the document, or give its https URL (one of them)")
        if not typed["base_url"]:
            raise ImportRefused("give the base URL the API answers at")
        if typed["url"]:
            document = await fetch(
                self._services.outbound.for_documents(),
                typed["url"],
                on_loopback=settings.client_documents_on_loopback,
            )
        else:
            document = parse_text(typed["document"], "the document")
        include = tuple(item for item in typed["include"].replace(",", " ").split() if item)
        request = ImportRequest(document, typed["base_url"], include=include, dry_run=dry_run)
        try:
            return await import_openapi(
                self._services.companies, tenant_key, request, production=settings.is_production
            )
        except UnknownCompany:
            raise AuthorizePage(404, "Not found", "There is no such company.") from None

    async def _render(
        self,
        request: Request,
        current: ConsoleSession,
        tenant_key: str,
        typed: dict[str, str],
        **context: Any,
    ) -> Response:
        return await self._pages.page(
            request,
            current,
            tenant_key,
            "console_import.html",
            section="import",
            typed=typed,
            **context,
        )


def import_routes(console: Console, pages: CompanyPages) -> list[Route]:
    page = ImportPage(console, pages)
    path = "/console/{tenant}/import"
    return [
        Route(path, pages.opened(page.show), methods=["GET"]),
        Route(
            path,
            pages.opened(page.submit, form=True, form_limit=MAX_IMPORT_FORM_BYTES),
            methods=["POST"],
        ),
    ]
