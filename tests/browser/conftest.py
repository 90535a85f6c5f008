"""A real browser for the sign-in pages: Debian's Chromium (``scripts/install-browser``),
driven by Playwright's sync API, which never downloads a browser of its own here.

Browser tests are plain ``def`` tests: the sync API runs its own event loop and refuses to
start inside a running one. Every page stays on loopback: anything else it asks for (the
test identity provider's pages import a web font) is aborted, never fetched.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Browser, Page, Playwright, Route, expect, sync_playwright

from tests.conftest import ROOT, unavailable
from tests.live.conftest import LiveService, running_service
from tests.support.oidc_provider import OidcProvider

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
TIMEOUT_MS = 15_000
CALLBACK_TIMEOUT = 15.0


def require_chromium() -> None:
    """Skip without the system Chromium, or fail when CI said it must be there."""
    if os.access(CHROMIUM, os.X_OK):
        return
    unavailable(f"Chromium is not installed at {CHROMIUM} (run ./scripts/install-browser)")


def artifact(name: str) -> Path:
    """Where a screenshot goes: test-artifacts/ at the repository root (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    require_chromium()
    with sync_playwright() as running:
        yield running


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium per module; every test gets a fresh context (no shared cookies)."""
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    try:
        yield launched
    finally:
        launched.close()


@dataclass
class OffLoopback:
    """Requests a page tried to send off this machine; each was aborted."""

    urls: list[str]


@pytest.fixture
def off_loopback() -> OffLoopback:
    return OffLoopback([])


@pytest.fixture
def page(browser: Browser, off_loopback: OffLoopback) -> Iterator[Page]:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)

    def stay_on_loopback(route: Route) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            off_loopback.urls.append(route.request.url)
            route.abort()

    context.route("**/*", stay_on_loopback)
    try:
        yield context.new_page()
    finally:
        context.close()


@dataclass(frozen=True)
class Redirect:
    """One request the client's redirect URI received."""

    path: str
    query: dict[str, str]


class _RedirectServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Answer)
        self.received: queue.Queue[Redirect] = queue.Queue()


class _Answer(BaseHTTPRequestHandler):
    server: _RedirectServer

    def do_GET(self) -> None:
        target = urlsplit(self.path)
        if target.path != "/callback":
            # The browser also asks for /favicon.ico; only the callback is recorded.
            self.send_error(404)
            return
        self.server.received.put(Redirect(target.path, dict(parse_qsl(target.query))))
        body = b"done"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reports what it received."""


class ClientRedirectUri:
    """A client's loopback redirect URI, served for real: it records each query, answers "done"."""

    def __init__(self, server: _RedirectServer) -> None:
        self._server = server

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/callback"

    def next_redirect(self) -> Redirect:
        """The next redirect the browser delivered, waiting a bounded time for it."""
        try:
            return self._server.received.get(timeout=CALLBACK_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"nothing arrived at {self.url} within {CALLBACK_TIMEOUT:g}s")


@pytest.fixture
def redirect_uri() -> Iterator[ClientRedirectUri]:
    server = _RedirectServer()
    thread = threading.Thread(target=server.serve_forever, name="client-redirect-uri")
    thread.start()
    try:
        yield ClientRedirectUri(server)
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="session")
def signin_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Frontdesk as a real process on SQLite, serving the test companies (initech signs in)."""
    require_chromium()
    workdir = tmp_path_factory.mktemp("browser-sqlite")
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    with running_service("sqlite", database_url, workdir) as service:
        yield service


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing browser test shows what the service and the provider printed."""
    report = yield
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, LiveService):
                report.sections.append((f"frontdesk serve ({value.base_url})", value.output()))
            elif isinstance(value, OidcProvider):
                report.sections.append((f"OIDC provider ({value.issuer})", value.output()))
    return report
