"""``/console/``: signing in and out, and the operators' list of companies (the company's
own pages are console.company_pages; console.site puts every route together).

Every page is server-rendered with the sign-in pages' templates and headers
(oauth.pages: CSP with ``frame-ancestors 'none'``, X-Frame-Options DENY, no-store, no
Referer); every form is checked twice against cross-site requests, as the account page's
are (account.guard): the session's CSRF token and the request's origin. Errors are
AuthorizePage, rendered in one place with every sign-in page's (oauth.rendering).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from frontdesk.account.guard import from_own_page, own_origin
from frontdesk.companies.registry import looks_like_tenant_key
from frontdesk.console import session
from frontdesk.console.context import ConsoleServices
from frontdesk.console.session import ConsoleSession
from frontdesk.console.signin import OPERATORS, ConsoleSignin
from frontdesk.oauth.errors import AuthorizePage, InvalidRequest
from frontdesk.oauth.forms import MAX_FORM_BYTES, read_form
from frontdesk.oauth.pages import page
from frontdesk.oauth.rendering import NO_STORE

# What the console's pages, and its error pages, name in their title.
CONSOLE_TITLE = "Frontdesk console"


def refused() -> AuthorizePage:
    return AuthorizePage(
        403,
        "This request was refused",
        "It did not come from the console. Open the console again and retry there.",
    )


class Console:
    """What every console page shares: the session, the form checks, the page itself."""

    def __init__(self, services: ConsoleServices) -> None:
        self.services = services
        self.signin = ConsoleSignin(services)
        self.sessions = self.signin.sessions
        self._origin = own_origin(services.settings.base_url)

    def current(self, request: Request) -> ConsoleSession | None:
        """The session the cookie holds, as signed (console.signin.still_admitted says
        whether its holder may still use it)."""
        return self.sessions.open(request.cookies.get(session.COOKIE_NAME))

    async def checked_form(
        self, request: Request, limit: int = MAX_FORM_BYTES
    ) -> tuple[ConsoleSession, dict[str, str]]:
        """The session and the form, when the form came from this session's own page."""
        if not from_own_page(request, self._origin):
            raise refused()
        current = self.current(request)
        if current is None:
            raise AuthorizePage(
                401, "You are signed out", "Your session ended. Open the console again."
            )
        try:
            form = await read_form(request, limit)
        except InvalidRequest as problem:
            raise AuthorizePage(400, "This form could not be read", problem.description) from None
        if not self.sessions.csrf_matches(current, form.get("csrf")):
            raise refused()
        return current, form

    def page(
        self, request: Request, template: str, current: ConsoleSession | None, **context: Any
    ) -> Response:
        request.state.company_name = CONSOLE_TITLE
        return page(
            request,
            template,
            context.pop("status", 200),
            branding=None,
            console_url=self.services.base,
            signed_in_as=None if current is None else current.email,
            is_operator=current is not None and current.is_operator,
            csrf=None if current is None else self.sessions.csrf_token(current),
            **context,
        )

    def back_to(self, url: str) -> Response:
        # 303: the browser loads the page again with GET (post/redirect/get).
        return RedirectResponse(url, status_code=303, headers=NO_STORE)


class SigninRoutes:
    def __init__(self, console: Console) -> None:
        self._console = console

    async def index(self, request: Request) -> Response:
        console = self._console
        current = console.current(request)
        if current is not None and not await console.signin.still_admitted(current):
            current = None
        if current is None:
            return console.page(
                request,
                "console_signin.html",
                None,
                operators=console.signin.operators_can_sign_in,
            )
        if current.tenant_key is not None:
            return console.back_to(f"{console.services.base}/{current.tenant_key}/tools")
        stored = await console.services.companies.all()
        companies = [
            {
                "tenant_key": row.tenant_key,
                "name": row.definition["name"],
                "region": row.definition["region"],
                "active": row.definition["active"],
            }
            for row in stored
        ]
        return console.page(request, "console_companies.html", current, companies=companies)

    async def begin(self, request: Request) -> Response:
        console = self._console
        await console.services.limit(request, "signin")
        if request.query_params.get("operator") == "1":
            return await console.signin.begin(OPERATORS)
        tenant_key = request.query_params.get("company", "").strip().lower()
        if not looks_like_tenant_key(tenant_key):
            raise AuthorizePage(404, "Not found", "There is no console for this company.")
        return await console.signin.begin(tenant_key)

    async def dev_form(self, request: Request) -> Response:
        """The dev login's form (login.dev): only for a sign-in begun in this browser."""
        console = self._console
        state = request.query_params.get("flow")
        tenant_key = console.signin.opened_state(request, state)
        company = None if not tenant_key else await console.services.registry.active(tenant_key)
        return page(
            request,
            "login.html",
            company_name=f"the {company.name} console" if company else "the console",
            login_url=f"{console.services.base}/login",
            flow=state,
            email="",
            name="",
        )

    async def dev_submit(self, request: Request) -> Response:
        console = self._console
        await console.services.limit(request, "signin")
        if not from_own_page(request, own_origin(console.services.settings.base_url)):
            raise refused()
        try:
            form = await read_form(request)
        except InvalidRequest as problem:
            raise AuthorizePage(400, "This form could not be read", problem.description) from None
        return await console.signin.complete(request, form.get("flow"), form)

    async def callback(self, request: Request) -> Response:
        console = self._console
        await console.services.limit(request, "signin")
        params = dict(request.query_params)
        return await console.signin.complete(request, params.get("state"), params)

    async def sign_out(self, request: Request) -> Response:
        console = self._console
        await console.checked_form(request)
        response = console.back_to(f"{console.services.base}/")
        session.end(response)
        return response


def signin_routes(console: Console) -> list[Route]:
    signin = SigninRoutes(console)
    return [
        Route("/console/", signin.index, methods=["GET"]),
        Route("/console/signin", signin.begin, methods=["GET"]),
        Route("/console/login", signin.dev_form, methods=["GET"]),
        Route("/console/login", signin.dev_submit, methods=["POST"]),
        Route("/console/callback", signin.callback, methods=["GET"]),
        Route("/console/signout", signin.sign_out, methods=["POST"]),
    ]
