"""A company's pages in the console: its tools (switch one on or off, a test call), its
sign-in settings and branding (with a preview of the consent page), its clients and
grants (revoke), its audit and its usage.

A page opens only for the company's own staff or an operator; any other company is 404,
as if it did not exist. Every change goes through the functions the command line uses
(console.changes: companies.files's validation and apply; store.admin's revocation, as
``frontdesk clients revoke`` and ``grants revoke`` do).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.administration.company_state import OPERATOR_REVOKED
from frontdesk.console import shown
from frontdesk.console.changes import ChangeRefused, audited, change_company, stored_definition
from frontdesk.console.context import ConsoleServices
from frontdesk.console.preview import consent_preview
from frontdesk.console.routes import Console
from frontdesk.console.session import ConsoleSession
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.forms import MAX_FORM_BYTES
from frontdesk.store.admin import Administration
from frontdesk.store.audit import AuditLog
from frontdesk.store.tables import CLIENT_ID_LENGTH

log = structlog.get_logger(__name__)

BRANDING_FIELDS = ("logo_url", "logo_alt", "accent_color", "privacy_url", "terms_url", "support")
AUDIT_EVENTS_SHOWN = 200
# Why a family was revoked from the console, as its family_revoked audit event records it.
STAFF_REVOKED = "staff_revoked"

Handler = Callable[[Request, ConsoleSession, str], Awaitable[Response]]


def _not_found() -> AuthorizePage:
    return AuthorizePage(404, "Not found", "There is no such company.")


class CompanyPages:
    def __init__(self, console: Console) -> None:
        self._console = console
        self._services = console.services

    @property
    def services(self) -> ConsoleServices:
        return self._services

    def opened(
        self, handler: Handler, *, form: bool = False, form_limit: int = MAX_FORM_BYTES
    ) -> Callable[[Request], Any]:
        """``handler`` for a signed-in holder of the company in the path, else the sign-in
        page (a page) or 401 (a form); another company's, or none, is 404."""

        async def endpoint(request: Request) -> Response:
            tenant_key = request.path_params["tenant"]
            if form:
                await self._services.limit(request, "change")
                current, request.state.console_form = await self._console.checked_form(
                    request, form_limit
                )
            else:
                # An unknown company is 404 to anyone, signed in or not, as the account
                # page's: its key is no secret (the MCP URL holds it).
                if await self._services.companies.get(tenant_key) is None:
                    raise _not_found()
                found = self._console.current(request)
                if found is None:
                    return self._console.back_to(f"{self._services.base}/")
                current = found
            if not await self._console.signin.still_admitted(current):
                # Taken off the staff, or the company's console is gone: signed out.
                if form:
                    raise AuthorizePage(
                        401, "You are signed out", "Your session ended. Open the console again."
                    )
                return self._console.back_to(f"{self._services.base}/")
            if not current.may_open(tenant_key):
                raise _not_found()
            if await self._services.companies.get(tenant_key) is None:
                raise _not_found()
            return await handler(request, current, tenant_key)

        return endpoint

    async def page(
        self,
        request: Request,
        current: ConsoleSession,
        tenant_key: str,
        template: str,
        **context: Any,
    ) -> Response:
        definition = await stored_definition(self._services, tenant_key)
        return self._console.page(
            request,
            template,
            current,
            tenant_key=tenant_key,
            company_name=definition["name"],
            **context,
        )

    @staticmethod
    def form(request: Request) -> dict[str, str]:
        """The form ``opened`` checked (its CSRF token and origin) before the handler."""
        form: dict[str, str] = request.state.console_form
        return form

    def back(self, tenant_key: str, slug: str) -> Response:
        return self._console.back_to(f"{self._services.base}/{tenant_key}/{slug}")

    # Sign-in and branding.

    async def signin_settings(
        self, request: Request, current: ConsoleSession, tenant_key: str, **extra: Any
    ) -> Response:
        definition = await stored_definition(self._services, tenant_key)
        extra.setdefault("edited", definition.get("branding") or {})
        return await self.page(
            request,
            current,
            tenant_key,
            "console_signin_settings.html",
            section="signin",
            signin=shown.signin_summary(definition.get("signin")),
            **extra,
        )

    async def save_lifetimes(
        self, request: Request, current: ConsoleSession, tenant_key: str
    ) -> Response:
        form = self.form(request)

        def lifetimes(document: dict[str, Any]) -> None:
            signin = document.get("signin")
            if signin is None:
                raise AuthorizePage(400, "No customer sign-in", "Set up customer sign-in first.")
            for field in ("access_token_minutes", "refresh_token_days"):
                value = form.get(field, "").strip()
                signin[field] = int(value) if value.isdigit() and len(value) < 6 else value

        return await self._changed(request, current, tenant_key, lifetimes, "token_lifetimes")

    async def branding(
        self, request: Request, current: ConsoleSession, tenant_key: str
    ) -> Response:
        form = self.form(request)
        edited = {field: form.get(field, "").strip() or None for field in BRANDING_FIELDS}
        if form.get("action") == "preview":
            return await self._preview(request, tenant_key, edited)

        def rebrand(document: dict[str, Any]) -> None:
            kept = {field: value for field, value in edited.items() if value is not None}
            document["branding"] = kept or None

        return await self._changed(request, current, tenant_key, rebrand, "branding", edited=edited)

    async def _preview(
        self, request: Request, tenant_key: str, edited: dict[str, str | None]
    ) -> Response:
        """The consent page a customer would see with the edited branding: the consent
        template itself, with a sample assistant and the company's personal tools."""
        company = await self._services.registry.active(tenant_key)
        if company is None:
            raise _not_found()
        issuer = self._services.settings.issuer(tenant_key)
        return consent_preview(request, issuer, company, edited)

    # Clients and grants.

    async def clients(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        admin = Administration(self._services.database.engine)
        clients = [shown.client_row(client) for client in await admin.clients(tenant_key)]
        grants = [shown.grant_row(grant) for grant in await admin.grants(tenant_key)]
        return await self.page(
            request,
            current,
            tenant_key,
            "console_clients.html",
            section="clients",
            clients=clients,
            grants=grants,
        )

    async def revoke_client(
        self, request: Request, current: ConsoleSession, tenant_key: str
    ) -> Response:
        form = self.form(request)
        client_id = form.get("client_id", "")
        if not client_id or len(client_id) > CLIENT_ID_LENGTH or "\x00" in client_id:
            raise AuthorizePage(400, "Nothing to revoke", "Choose a client on the page.")
        ended = await self._revoke(current, tenant_key, client_id=client_id)
        log.info("console_client_revoked", tenant=tenant_key, families=len(ended))
        await audited(
            self._services,
            tenant_key,
            current.email,
            "client_revoked",
            client_id=client_id,
            families=len(ended),
        )
        return self.back(tenant_key, "clients")

    async def revoke_grant(
        self, request: Request, current: ConsoleSession, tenant_key: str
    ) -> Response:
        form = self.form(request)
        family = form.get("family_id", "")
        if not family.isdigit() or len(family) > 18:
            raise AuthorizePage(400, "Nothing to revoke", "Choose a grant on the page.")
        admin = Administration(self._services.database.engine)
        # Another company's grant is as unknown here as one that never was.
        if not await admin.known_families(tenant_key, [int(family)]):
            raise AuthorizePage(404, "Not found", "This company has no such grant.")
        ended = await self._revoke(current, tenant_key, family_ids=[int(family)])
        log.info("console_grant_revoked", tenant=tenant_key, families=len(ended))
        await audited(
            self._services, tenant_key, current.email, "grant_revoked", family_id=int(family)
        )
        return self.back(tenant_key, "clients")

    async def _revoke(self, current: ConsoleSession, tenant_key: str, **chosen: Any) -> list[int]:
        reason = OPERATOR_REVOKED if current.is_operator else STAFF_REVOKED
        database = self._services.database
        ended = await Administration(database.engine).revoke_families(
            tenant_key, datetime.now(UTC), reason, **chosen
        )
        if ended and database.grant_changes is not None:
            # Taken effect on this instance before the page says so (store.grants_postgres);
            # the others drop their kept tokens as the notice reaches them.
            await database.grant_changes.caught_up()
        return ended

    # Audit and usage.

    async def audit(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        events = await AuditLog(self._services.database.engine).list(
            tenant_key, limit=AUDIT_EVENTS_SHOWN
        )
        rows = [shown.audit_row(event) for event in events]
        return await self.page(
            request, current, tenant_key, "console_audit.html", section="audit", events=rows
        )

    async def usage(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        # Imported here: the chart's markup library is loaded by the first usage page.
        from frontdesk.console.usage_view import usage_page_context

        until = datetime.now(UTC)
        context = await usage_page_context(
            self._services.database, tenant_key, until - timedelta(days=7), until
        )
        return await self.page(
            request, current, tenant_key, "console_usage.html", section="usage", days=7, **context
        )

    # Changes.

    async def change(
        self,
        current: ConsoleSession,
        tenant_key: str,
        change: Callable[[dict[str, Any]], None],
        what: str,
        **detail: Any,
    ) -> None:
        """Apply ``change``, then record who made it; a refused change is a 400 page."""
        try:
            await change_company(self._services, tenant_key, change)
        except ChangeRefused as refusal:
            raise AuthorizePage(400, "This change was not made", str(refusal)) from None
        await audited(self._services, tenant_key, current.email, what, **detail)

    async def _changed(
        self,
        request: Request,
        current: ConsoleSession,
        tenant_key: str,
        change: Callable[[dict[str, Any]], None],
        what: str,
        **shown: Any,
    ) -> Response:
        """Apply ``change``, record who made it, and go back to the page; a refused change
        shows the page again with what was typed and why (400), nothing applied."""
        try:
            await change_company(self._services, tenant_key, change)
        except ChangeRefused as refusal:
            return await self.signin_settings(
                request, current, tenant_key, problem=f"Not saved: {refusal}", status=400, **shown
            )
        await audited(self._services, tenant_key, current.email, what)
        return self.back(tenant_key, "signin")


def company_routes(pages: CompanyPages) -> list[Route]:
    opened = pages.opened
    base = "/console/{tenant}"
    return [
        Route(f"{base}/signin", opened(pages.signin_settings), methods=["GET"]),
        Route(f"{base}/signin/tokens", opened(pages.save_lifetimes, form=True), methods=["POST"]),
        Route(f"{base}/signin/branding", opened(pages.branding, form=True), methods=["POST"]),
        Route(f"{base}/clients", opened(pages.clients), methods=["GET"]),
        Route(f"{base}/clients/revoke", opened(pages.revoke_client, form=True), methods=["POST"]),
        Route(f"{base}/grants/revoke", opened(pages.revoke_grant, form=True), methods=["POST"]),
        Route(f"{base}/audit", opened(pages.audit), methods=["GET"]),
        Route(f"{base}/usage", opened(pages.usage), methods=["GET"]),
    ]
