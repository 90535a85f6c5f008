"""The README's Python examples (examples/guest_call.py, examples/signed_in_call.py) run as
written against a real ``frontdesk serve``; for the signed-in one, the customer's browser is
played over HTTP (consent, then the dev login) and comes back to the example's own loopback
listener."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

import httpx
import pytest
from examples import guest_call, signed_in_call

from tests.live.conftest import LiveService
from tests.live.customer_browser import EMAIL, CustomerBrowser, deliver

pytestmark = pytest.mark.live

THREAD_DEADLINE = 60.0


async def test_the_guest_example_calls_the_demo_company(
    live_service: LiveService, capsys: pytest.CaptureFixture[str]
) -> None:
    await guest_call.main(live_service.mcp_url("demo"))
    printed = capsys.readouterr().out
    assert "Brazil Cerrado" in printed
    assert "'count': " in printed


@dataclass
class PlayedBrowser:
    """``webbrowser.open`` for the example: in a thread of its own, as a browser is another
    program, it allows the client, signs in as Ada and follows the redirect to the example's
    listener."""

    browser: CustomerBrowser = field(default_factory=CustomerBrowser)
    opened: list[str] = field(default_factory=list)
    callbacks: list[httpx.Response] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def open(self, url: str) -> bool:
        self.opened.append(url)
        thread = threading.Thread(target=self._visit, args=(url,), daemon=True)
        self.threads.append(thread)
        thread.start()
        return True

    def _visit(self, url: str) -> None:
        async def visit() -> None:
            redirect = await self.browser.sign_in(url)
            self.callbacks.append(await deliver(redirect))

        try:
            asyncio.run(visit())
        except BaseException as error:
            self.errors.append(error)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(THREAD_DEADLINE)
            assert not thread.is_alive(), "the played browser did not finish"
        if self.errors:
            raise self.errors[0]


async def test_the_signed_in_example_signs_the_customer_in_and_calls_order_status(
    live_service: LiveService, capsys: pytest.CaptureFixture[str]
) -> None:
    played = PlayedBrowser()
    try:
        result = await signed_in_call.main(live_service.mcp_url("demo"), played.open)
    finally:
        played.join()

    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["customer"] == EMAIL
    assert result.structured_content["status"] == "shipped"
    [opened] = played.opened
    assert opened.startswith(f"{live_service.public_url}/v1/demo/oauth/authorize?")
    [consent] = played.browser.consent_pages
    assert "Frontdesk example" in consent
    assert "Demo Coffee Roasters" in consent
    [redirect] = played.browser.redirects
    assert redirect.host == "127.0.0.1"
    assert redirect.path == "/callback"
    [callback] = played.callbacks
    assert callback.status_code == 200
    assert "close this tab" in callback.text
    printed = capsys.readouterr().out
    assert f"Sign in at: {opened}" in printed
    assert "'status': 'shipped'" in printed
