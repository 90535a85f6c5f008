"""Whether the customer's email was verified reaches tools with it, and is never claimed when
the identity provider did not say so; what the provider sends that does not fit is left out
or refused cleanly, never a server error (login.oidc.identity_from, store.customers)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.domain import Customer
from frontdesk.login.connector import Identity, LoginFailed
from frontdesk.login.oidc import identity_from
from frontdesk.store.tables import customers
from tests.oauth import flows
from tests.oauth.signin_callbacks import ALICE, StandInLogin, callback, pending, stand_in
from tests.support.grant_changes import until

BOTH_DATABASES = pytest.mark.usefixtures("database_url")
CLAIMS = {"sub": "idp|alice", "email": "alice@initech.example", "name": "Alice"}


# What the ID token says --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "verified"),
    [
        ({"email_verified": True}, True),
        ({"email_verified": False}, False),
        # Microsoft Entra ID sends no email_verified: the address is kept, unverified.
        ({}, False),
        # Only a JSON true counts (OpenID Connect Core 1.0, 5.1: the claim is a boolean).
        ({"email_verified": "true"}, False),
        ({"email_verified": 1}, False),
        ({"email_verified": None}, False),
    ],
)
def test_the_email_is_verified_only_when_the_token_says_true(
    said: dict[str, Any], verified: bool
) -> None:
    """The address is always kept; it is verified only on email_verified: true."""
    identity = identity_from({**CLAIMS, **said})
    assert identity.email == CLAIMS["email"]
    assert identity.email_verified is verified


@pytest.mark.parametrize("email", [None, "", 42, "a" * 321 + "@x", "al\x00ice@x", "al\x85ice@x"])
def test_no_address_kept_means_nothing_verified(email: object) -> None:
    """A verified claim about an address that was left out verifies nothing."""
    identity = identity_from({**CLAIMS, "email": email, "email_verified": True})
    assert identity.email is None
    assert identity.email_verified is False


@pytest.mark.parametrize(
    "unfit",
    [
        "\x00",
        "\x1b[31m",
        "\x9b",  # C1: the single-character CSI
        "\ud800",  # a lone surrogate, as JSON's "\ud800" escape gives
    ],
)
def test_an_email_or_name_that_cannot_be_kept_is_left_out(unfit: str) -> None:
    """Control characters and lone surrogates: the field is dropped, the customer signs in."""
    identity = identity_from(
        {**CLAIMS, "email": f"alice{unfit}@initech.example", "name": f"Al{unfit}ice"}
    )
    assert identity == Identity("idp|alice", None, None)


@pytest.mark.parametrize("subject", ["", "s" * 256, "al\x00ice", "al\ud800ice", "ålice", 7, None])
def test_a_subject_that_cannot_be_kept_is_a_clean_sign_in_error(subject: object) -> None:
    """LoginFailed (access_denied to the client), never a server error."""
    with pytest.raises(LoginFailed):
        identity_from({**CLAIMS, "sub": subject})


# Stored, and what tools see ---------------------------------------------------------------


async def signed_in_customer(
    app: Frontdesk, client: httpx.AsyncClient, *, scope: str | None = None
) -> tuple[Customer, str]:
    """A sign-in through the stand-in login, its code redeemed: the customer a tool would see
    with the access token, and the token."""
    started = await pending(client, scope=scope)
    back = flows.redirect_params(await callback(app, started))
    signed_in = flows.SignIn(
        started.client_id,
        back["code"],
        back.get("state"),
        back["iss"],
        started.pkce,
        flows.REDIRECT_URI,
        flows.TENANT,
    )
    tokens = flows.tokens_of(await flows.exchange(client, signed_in), started.client_id)
    return await bearer_customer(app, tokens.access), tokens.access


async def bearer_customer(app: Frontdesk, access: str) -> Customer:
    bearer = await app.services.grants.bearer(flows.TENANT, access)
    assert bearer is not None
    return bearer.customer


@BOTH_DATABASES
async def test_a_verified_email_reaches_tools_as_verified_and_a_later_sign_in_can_unsay_it(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verified at the first sign-in; the next sign-in says nothing of it (as Entra would),
    and the customer behind a token issued before is no longer presented as verified, on
    every instance (PostgreSQL's notice of a changed customer)."""
    login = StandInLogin(identity=ALICE)
    stand_in(app, monkeypatch, login)
    customer, first_token = await signed_in_customer(app, client)
    assert customer.email == ALICE.email
    assert customer.email_verified is True
    feed = app.services.database.grant_changes
    if feed is not None:
        # Found again once the feed is confirmed: now kept in memory, and trusted.
        await until(feed.confirmed)
        assert (await bearer_customer(app, first_token)).email_verified is True
    login.identity = Identity(ALICE.subject, ALICE.email, ALICE.name)
    customer, _ = await signed_in_customer(app, client)
    assert customer.email == ALICE.email
    assert customer.email_verified is False
    if feed is not None:
        await feed.caught_up()
        assert feed.confirmed()
    assert (await bearer_customer(app, first_token)).email_verified is False


@BOTH_DATABASES
async def test_without_the_email_scope_nothing_is_verified(
    app: Frontdesk, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The customer granted profile only: no address, so no verified address either."""
    stand_in(app, monkeypatch, StandInLogin(identity=ALICE))
    customer, _ = await signed_in_customer(app, client, scope="profile")
    assert customer.email is None
    assert customer.email_verified is False


@BOTH_DATABASES
async def test_the_dev_login_never_verifies_an_email(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Anyone may type any address into the dev login: it is forwarded unverified."""
    tokens = await flows.obtain_tokens(client)
    customer = await bearer_customer(app, tokens.access)
    assert customer.email == "peter@initech.example"
    assert customer.email_verified is False


@BOTH_DATABASES
async def test_the_store_keeps_what_fits_and_never_fails_a_sign_in(app: Frontdesk) -> None:
    """What no column can hold (a NUL, a lone surrogate, too long) is cleaned or left out
    at the store too, on PostgreSQL as on SQLite; an address left out is not verified."""
    repository = app.services.customers
    await repository.record(
        "initech",
        "idp|odd",
        "al\ud800ice@initech.example",
        "Al\x00i\udfffce" + "e" * 300,
        email_verified=True,
    )
    await repository.record(
        "initech", "idp|long", "a" * 321 + "@x.example", "\x00\ud800", email_verified=True
    )
    query = select(
        customers.c.subject, customers.c.email, customers.c.name, customers.c.email_verified
    ).order_by(customers.c.subject)
    async with app.services.database.engine.connect() as connection:
        rows = [tuple(row) for row in (await connection.execute(query)).all()]
    assert rows == [
        ("idp|long", None, None, False),
        ("idp|odd", None, ("Alice" + "e" * 300)[:200], False),
    ]
