"""The customer's browser at Frontdesk's sign-in pages, played with httpx: it opens the
authorize URL a client printed, allows the client on the consent page, signs in with the dev
login, and reads where Frontdesk sends it back, without following that redirect (the client's
own loopback listener is the one to receive it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx

EMAIL = "ada@example.com"
NAME = "Ada Lovelace"
# What the `whoami` tool answers for the customer this browser signs in, both scopes granted.
SIGNED_IN_AS = {
    "guest": False,
    "subject": f"dev:{EMAIL}",
    "email": EMAIL,
    "name": NAME,
    "scopes": ["email", "profile"],
}
TIMEOUT = 30.0


@dataclass(frozen=True)
class Step:
    """One HTTP exchange as seen on the wire: method, path and status."""

    method: str
    path: str
    status: int


@dataclass
class Form:
    action: str
    fields: dict[str, str]


class _FirstForm(HTMLParser):
    """The first <form> of a page: its action and its named inputs' values."""

    def __init__(self) -> None:
        super().__init__()
        self.form: Form | None = None
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.form is None:
            self.form = Form(values.get("action", ""), {})
            self._open = True
        elif tag == "input" and self._open and self.form is not None and values.get("name"):
            self.form.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = False


def first_form(response: httpx.Response) -> Form:
    parser = _FirstForm()
    parser.feed(response.text)
    assert parser.form is not None, f"no form at {response.url}: {response.text[:500]}"
    return Form(urljoin(str(response.url), parser.form.action), parser.form.fields)


@dataclass
class CustomerBrowser:
    """Allow on the consent page, then the dev login as Ada; remembers every page it saw."""

    steps: list[Step] = field(default_factory=list)
    consent_pages: list[str] = field(default_factory=list)
    redirects: list[httpx.URL] = field(default_factory=list)

    async def sign_in(self, authorize_url: str) -> httpx.URL:
        """Where Frontdesk sends the browser back after consent and login (not followed)."""
        async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
            consent = await self._visit(browser, "GET", authorize_url)
            self.consent_pages.append(consent.text)
            form = first_form(consent)
            allowed = await self._visit(
                browser, "POST", form.action, {**form.fields, "decision": "allow"}
            )
            login = await self._visit(browser, "GET", allowed.headers["location"])
            form = first_form(login)
            signed_in = await self._visit(
                browser, "POST", form.action, {**form.fields, "email": EMAIL, "name": NAME}
            )
        redirect = httpx.URL(signed_in.headers["location"])
        self.redirects.append(redirect)
        return redirect

    async def _visit(
        self,
        browser: httpx.AsyncClient,
        method: str,
        url: str,
        form: dict[str, str] | None = None,
    ) -> httpx.Response:
        response = await browser.request(method, url, data=form)
        self.steps.append(Step(method, response.url.path, response.status_code))
        assert response.status_code in (200, 303), response.text[:500]
        return response


async def deliver(redirect: httpx.URL) -> httpx.Response:
    """The browser arriving at the client's loopback callback with the code."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
        return await browser.get(redirect)
