"""Driving the sign-in callback with a stand-in for the company's login, so a test can
count the calls that would reach the identity provider and choose what it answers."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.login.connector import Identity, LoginAttempt, LoginFailed
from frontdesk.oauth.flow import COOKIE_NAME
from tests.conftest import BASE_URL
from tests.oauth import flows

ALICE = Identity("idp|alice", "alice@initech.example", "Alice", email_verified=True)


@dataclass
class StandInLogin:
    """A login connector whose ``complete`` stands for the code exchange with the provider."""

    identity: Identity = ALICE
    failure: LoginFailed | None = None
    calls: int = 0
    params: list[Mapping[str, str]] = field(default_factory=list)

    async def begin(self, attempt: LoginAttempt) -> str:
        return "https://idp.example/authorize"

    async def complete(self, attempt: LoginAttempt, params: Mapping[str, str]) -> Identity:
        self.calls += 1
        self.params.append(params)
        # A round trip's worth of waiting: concurrent callbacks overlap here.
        await asyncio.sleep(0.01)
        if self.failure is not None:
            raise self.failure
        return self.identity


def stand_in(app: Frontdesk, monkeypatch: pytest.MonkeyPatch, login: StandInLogin) -> None:
    """Every company's login is ``login`` in this app."""
    monkeypatch.setattr(app.services.logins, "for_company", lambda _tenant, _setup: login)


@dataclass(frozen=True, slots=True)
class Pending:
    """A sign-in sent on to the company's login: its sealed flow, the browser's cookie,
    and what the client needs to redeem the code."""

    sealed: str
    cookie: str
    client_id: str
    pkce: flows.Pkce


async def pending(client: httpx.AsyncClient, *, scope: str | None = None) -> Pending:
    """authorize at initech as the browser ``client``: the flow its consent page carries."""
    client_id = await flows.register(client)
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce, scope=scope)
    cookie = client.cookies.get(COOKIE_NAME)
    assert cookie
    return Pending(flows.flow_of(page), cookie, client_id, pkce)


async def callback(
    app: Frontdesk, started: Pending, *, cookie: str | None = None
) -> httpx.Response:
    """The provider's redirect back, opened in the browser that holds ``cookie`` (the one
    that started the sign-in unless told), with a fresh cookie jar every time: a finished
    sign-in deletes the cookie, and a replay must not be refused for that alone."""
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as browser:
        return await browser.get(
            flows.oauth_path("callback"),
            params={"state": started.sealed, "code": "code-from-the-provider"},
            headers={"cookie": f"{COOKIE_NAME}={cookie or started.cookie}"},
        )


def refused_as_spent(response: httpx.Response) -> None:
    """The "expired or already used, start again" page: nothing sent back to the client."""
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers
    assert "already used" in response.text
