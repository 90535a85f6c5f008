"""A sign-in flow is spent by its first callback, success or failure: a second one gets the
"expired or already used" page, and the company's identity provider is never called for it
(oauth.flow, oauth.callback, store.spent_flows)."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime

import httpx
import orjson
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.login.connector import LoginFailed, ProviderUnavailable
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow, FlowSigner
from frontdesk.sealing.signing import Signer, b64decode
from frontdesk.store.tables import spent_flows
from tests.conftest import TEST_SECRET
from tests.oauth import flows
from tests.oauth.signin_callbacks import (
    StandInLogin,
    callback,
    pending,
    refused_as_spent,
    stand_in,
)

BOTH_DATABASES = pytest.mark.usefixtures("database_url")
COOKIE = "the-browsers-cookie-value-0123456789"


def a_flow(signer: FlowSigner) -> Flow:
    return Flow(
        tenant_key="initech",
        client_id="fdc_abc",
        redirect_uri="http://127.0.0.1:33418/callback",
        state="xyz",
        code_challenge="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        scope="profile email",
        resource=None,
        binding=signer.binding_of(COOKIE),
    )


def sealed_payload(sealed: str) -> dict[str, object]:
    payload: dict[str, object] = orjson.loads(b64decode(sealed.partition(".")[0]))
    return payload


# The sealed flow ---------------------------------------------------------------------------


def test_every_flow_carries_an_id_of_its_own() -> None:
    """Two flows of the same request differ by a random id, sealed with them."""
    signer = FlowSigner([TEST_SECRET])
    first, second = a_flow(signer), a_flow(signer)
    assert first.flow_id != second.flow_id
    assert len(first.flow_id) >= 24
    assert sealed_payload(signer.seal(first))["flow_id"] == first.flow_id
    assert signer.open(signer.seal(first), COOKIE, "initech").flow_id == first.flow_id


def test_a_flow_sealed_without_an_id_is_refused() -> None:
    """A flow from before flows had ids could never be spent: it reads as expired."""
    signer = FlowSigner([TEST_SECRET])
    payload = sealed_payload(signer.seal(a_flow(signer)))
    del payload["flow_id"], payload["exp"]
    sealed = Signer([TEST_SECRET], "signin-flow/v1").sign(payload, 60)
    with pytest.raises(AuthorizePage):
        signer.open(sealed, COOKIE, "initech")


async def test_spending_records_only_a_hash_until_the_flows_own_expiry() -> None:
    """The record gets the tenant, a SHA-256 of the id and the sealed expiry; a second spend
    is the expired page."""
    recorded: list[tuple[str, str, datetime]] = []

    class Ledger:
        async def spend(self, tenant_key: str, flow_hash: str, expires_at: datetime) -> bool:
            recorded.append((tenant_key, flow_hash, expires_at))
            return len(recorded) == 1

    signer = FlowSigner([TEST_SECRET], Ledger())
    sealed = signer.seal(a_flow(signer))
    flow = signer.open(sealed, COOKIE, "initech")
    await signer.spend(flow)
    with pytest.raises(AuthorizePage) as refused:
        await signer.spend(flow)
    assert refused.value.status == 400
    exp = sealed_payload(sealed)["exp"]
    assert isinstance(exp, int)
    digest = hashlib.sha256(flow.flow_id.encode()).hexdigest()
    assert recorded[0] == ("initech", digest, datetime.fromtimestamp(exp, UTC))


async def test_a_flow_cannot_be_spent_without_a_record_of_spent_flows() -> None:
    """A signer built without one refuses to spend rather than let a callback through."""
    signer = FlowSigner([TEST_SECRET])
    flow = signer.open(signer.seal(a_flow(signer)), COOKIE, "initech")
    with pytest.raises(RuntimeError):
        await signer.spend(flow)


# The callback ------------------------------------------------------------------------------


@BOTH_DATABASES
@pytest.mark.parametrize(
    ("failure", "error"),
    [
        (LoginFailed("The sign-in was cancelled or refused."), "access_denied"),
        (
            ProviderUnavailable("The company's sign-in could not be reached."),
            "temporarily_unavailable",
        ),
    ],
)
async def test_a_failed_callback_spends_the_flow(
    app: Frontdesk,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    failure: LoginFailed,
    error: str,
) -> None:
    """The provider refused (or was down): the client hears so once; the same callback again,
    with the browser's cookie, is the expired page and never reaches the provider."""
    login = StandInLogin(failure=failure)
    stand_in(app, monkeypatch, login)
    started = await pending(client)
    first = flows.redirect_params(await callback(app, started))
    assert first["error"] == error
    for _ in range(3):
        refused_as_spent(await callback(app, started))
    assert login.calls == 1


@BOTH_DATABASES
async def test_a_successful_callback_spends_the_flow(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the code was sent, the callback replayed with the cookie still held is refused."""
    login = StandInLogin()
    stand_in(app, monkeypatch, login)
    started = await pending(client)
    assert flows.redirect_params(await callback(app, started))["code"]
    refused_as_spent(await callback(app, started))
    assert login.calls == 1


@BOTH_DATABASES
async def test_of_two_concurrent_callbacks_exactly_one_proceeds(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both arrive at once: one reaches the provider and the client, the other is refused."""
    login = StandInLogin()
    stand_in(app, monkeypatch, login)
    for _ in range(3):
        started = await pending(client)
        answers = await asyncio.gather(callback(app, started), callback(app, started))
        [won] = [answer for answer in answers if answer.status_code == 303]
        [lost] = [answer for answer in answers if answer is not won]
        assert flows.redirect_params(won)["code"]
        refused_as_spent(lost)
    assert login.calls == 3


@BOTH_DATABASES
async def test_a_callback_in_another_browser_does_not_spend_the_flow(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever read the state but lacks the cookie cannot burn the customer's sign-in."""
    login = StandInLogin()
    stand_in(app, monkeypatch, login)
    started = await pending(client)
    other = await callback(app, started, cookie="another-browsers-cookie-0123456789")
    assert other.status_code == 400
    assert flows.redirect_params(await callback(app, started))["code"]
    assert login.calls == 1


@BOTH_DATABASES
async def test_the_store_keeps_a_hash_of_the_flows_id_until_it_expires(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """spent_flows holds the tenant, SHA-256 of the flow id and the flow's expiry: never the
    flow, its id or anything else it carries."""
    stand_in(app, monkeypatch, StandInLogin())
    started = await pending(client)
    await callback(app, started)
    payload = sealed_payload(started.sealed)
    flow_id, exp = payload["flow_id"], payload["exp"]
    assert isinstance(flow_id, str)
    assert isinstance(exp, int)
    async with app.services.database.engine.connect() as connection:
        rows = (await connection.execute(select(spent_flows))).all()
    [(flow_hash, tenant_key, expires_at)] = rows
    assert flow_hash == hashlib.sha256(flow_id.encode()).hexdigest()
    assert tenant_key == flows.TENANT
    moment = expires_at if expires_at.tzinfo else expires_at.replace(tzinfo=UTC)
    assert moment == datetime.fromtimestamp(exp, UTC)
