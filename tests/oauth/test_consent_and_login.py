"""The consent page, its CSRF and browser binding, and the dev login (DESIGN: consent page,
sign-in flow; the dev login refuses to run in production)."""

from __future__ import annotations

import time
import types
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk, create_app
from frontdesk.config import Settings
from frontdesk.oauth.flow import COOKIE_NAME, FLOW_TTL_SECONDS, Flow, FlowSigner
from frontdesk.sealing import signing
from frontdesk.store.tables import customers
from tests.conftest import TEST_SECRET, start_app
from tests.oauth import flows
from tests.oauth.conftest import Serve

pytestmark = pytest.mark.anyio

Browser = Callable[[], httpx.AsyncClient]


def assert_refused_page(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers


async def started(client: httpx.AsyncClient, state: str | None = None) -> tuple[str, str]:
    """A registered client and the sealed flow of its consent page in this browser."""
    client_id = await flows.register(client)
    page = await flows.consent_page(client, client_id, flows.Pkce.new(), state=state)
    return client_id, flows.flow_of(page)


def signin_cookie(client: httpx.AsyncClient, tenant: str = flows.TENANT) -> str:
    value = client.cookies.get(COOKIE_NAME, path=f"/v1/{tenant}/oauth")
    assert value is not None
    return value


# The consent page --------------------------------------------------------------------------


async def test_the_consent_page_shows_company_client_host_and_scopes(
    client: httpx.AsyncClient,
) -> None:
    """200 HTML naming the company, the client, the redirect host and what it may see."""
    client_id = await flows.register(client, client_name="Claude Desktop")
    response = await flows.consent_page(client, client_id, flows.Pkce.new())
    assert response.headers["content-type"].startswith("text/html")
    text = response.text
    assert "Initech" in text
    assert "Claude Desktop" in text
    assert "127.0.0.1:33418" in text
    assert "see your name" in text
    assert "see your email address" in text
    assert flows.form_of(text).action == f"{flows.issuer()}/consent"


async def test_the_consent_page_escapes_the_client_name(client: httpx.AsyncClient) -> None:
    """A client name with markup is shown as text, never run."""
    client_id = await flows.register(client, client_name="<script>alert(1)</script>")
    response = await flows.consent_page(client, client_id, flows.Pkce.new())
    assert "<script>alert(1)" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text


async def test_the_consent_page_names_the_host_when_the_client_has_no_name(
    client: httpx.AsyncClient,
) -> None:
    """Without client_name the customer still sees where they will be sent."""
    client_id = await flows.register(
        client, redirect_uris=["https://app.example/cb"], client_name=None
    )
    response = await flows.consent_page(
        client, client_id, flows.Pkce.new(), redirect_uri="https://app.example/cb"
    )
    assert "app.example" in response.text


async def test_the_consent_page_cannot_be_framed_or_cached(client: httpx.AsyncClient) -> None:
    """X-Frame-Options DENY, CSP frame-ancestors 'none', Cache-Control no-store."""
    client_id = await flows.register(client)
    response = await flows.consent_page(client, client_id, flows.Pkce.new())
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "no-store" in response.headers["cache-control"]


async def test_the_consent_page_binds_the_browser_with_a_scoped_httponly_cookie(
    client: httpx.AsyncClient,
) -> None:
    """The cookie is HttpOnly, SameSite=Lax, on the company's OAuth path only."""
    client_id = await flows.register(client)
    response = await flows.consent_page(client, client_id, flows.Pkce.new())
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "httponly" in cookie
    assert "samesite=lax" in cookie
    assert "path=/v1/initech/oauth" in cookie


# Deny and allow ----------------------------------------------------------------------------


async def test_deny_goes_back_to_the_client_with_access_denied(client: httpx.AsyncClient) -> None:
    """Deny: 303 to the client with error=access_denied, its state and our iss; no code."""
    _, flow = await started(client, state="deny-state")
    back = flows.redirect_params(await flows.decide(client, flow, "deny"))
    assert back["error"] == "access_denied"
    assert back["state"] == "deny-state"
    assert back["iss"] == flows.issuer()
    assert "code" not in back


async def test_allow_leads_to_the_login_then_to_the_client_with_a_code(
    client: httpx.AsyncClient,
) -> None:
    """Allow: 303 to the dev login; its form sends the customer back with code, state, iss."""
    _, flow = await started(client, state="allow-state")
    allowed = await flows.decide(client, flow)
    assert flows.location_path(allowed) == "/v1/initech/oauth/login"
    back = flows.redirect_params(await flows.dev_login(client, allowed))
    assert back["code"].startswith("fdac_")
    assert back["state"] == "allow-state"
    assert back["iss"] == flows.issuer()


async def test_finishing_the_sign_in_spends_the_browser_binding(client: httpx.AsyncClient) -> None:
    """After the code is issued the cookie is gone, so the login form cannot be replayed."""
    _, flow = await started(client)
    allowed = await flows.decide(client, flow)
    assert flows.redirect_params(await flows.dev_login(client, allowed))["code"]
    assert client.cookies.get(COOKIE_NAME, path="/v1/initech/oauth") is None
    replay = await client.post(
        flows.oauth_path("login"),
        data={"flow": flow, "email": "someone@initech.example"},
        headers=flows.FORM,
    )
    assert_refused_page(replay)


async def test_the_dev_login_asks_again_for_an_invalid_email(client: httpx.AsyncClient) -> None:
    """No valid email: the form is shown again with a problem, and nothing is redirected."""
    _, flow = await started(client)
    response = await client.post(
        flows.oauth_path("login"), data={"flow": flow, "email": "not-an-email"}, headers=flows.FORM
    )
    assert response.status_code == 200
    assert "location" not in response.headers
    assert flows.form_of(response.text).inputs["flow"] == flow


async def test_a_customer_is_recorded_then_updated(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The first sign-in records the customer; a later one updates their name."""
    await flows.sign_in(client, email="milton@initech.example", name="Milton")
    await flows.sign_in(client, email="milton@initech.example", name="Milton Waddams")
    async with app.services.database.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(customers.c.subject, customers.c.email, customers.c.name)
            )
        ).all()
    assert [tuple(row) for row in rows] == [
        ("dev:milton@initech.example", "milton@initech.example", "Milton Waddams")
    ]


async def test_the_longest_dev_login_email_is_refused_politely_on_postgres(
    serve: Serve, postgres_url: str
) -> None:
    """An email too long to be a customer's subject gets the form again, not a server error."""
    served = await serve(database_url=postgres_url)
    _, flow = await started(served.client)
    email = "a" * 64 + "@" + "b" * 247 + ".example"  # as long as the form allows: 320
    response = await served.client.post(
        flows.oauth_path("login"), data={"flow": flow, "email": email}, headers=flows.FORM
    )
    assert response.status_code == 200
    assert "location" not in response.headers
    # The same browser can still finish with a usable address.
    posted = await served.client.post(
        flows.oauth_path("login"),
        data={"flow": flow, "email": "a" * 64 + "@initech.example"},
        headers=flows.FORM,
    )
    assert flows.redirect_params(posted)["code"]


async def test_a_nul_in_the_dev_login_is_no_server_error_on_postgres(
    serve: Serve, postgres_url: str
) -> None:
    """PostgreSQL cannot store a NUL: an email with one is refused, a name loses it."""
    served = await serve(database_url=postgres_url)
    _, flow = await started(served.client)
    refused = await served.client.post(
        flows.oauth_path("login"),
        data={"flow": flow, "email": "nul\x00@initech.example"},
        headers=flows.FORM,
    )
    assert refused.status_code == 200
    assert "location" not in refused.headers
    tokens = await flows.obtain_tokens(served.client, name="Mil\x00ton")
    assert (await flows.whoami_result(served.client, tokens.access))["name"] == "Milton"


# CSRF and browser binding ------------------------------------------------------------------


async def test_consent_without_the_cookie_is_refused(client: httpx.AsyncClient) -> None:
    """A consent POST from a browser that never saw the page: 400, no redirect."""
    _, flow = await started(client)
    client.cookies.clear()
    assert_refused_page(await flows.decide(client, flow))


async def test_consent_with_another_browsers_cookie_is_refused(
    client: httpx.AsyncClient, browser: Browser
) -> None:
    """A flow sealed for one browser, posted with another browser's binding: 400."""
    _, victim_flow = await started(client)
    async with browser() as attacker:
        await started(attacker)
        assert_refused_page(await flows.decide(attacker, victim_flow))
        assert_refused_page(
            await flows.decide(
                attacker, victim_flow, headers={"cookie": f"{COOKIE_NAME}=not-the-nonce"}
            )
        )


async def test_the_login_step_is_bound_to_the_browser_too(
    client: httpx.AsyncClient, browser: Browser
) -> None:
    """The login form, shown or posted in another browser, is refused."""
    _, flow = await started(client)
    allowed = await flows.decide(client, flow)
    async with browser() as other:
        assert_refused_page(await other.get(allowed.headers["location"]))
        posted = await other.post(
            flows.oauth_path("login"),
            data={"flow": flow, "email": "other@initech.example"},
            headers=flows.FORM,
        )
        assert_refused_page(posted)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda flow: flow[:-2] + ("AA" if not flow.endswith("AA") else "BB"),
        lambda flow: ("e" if flow[0] != "e" else "f") + flow[1:],
        lambda flow: flow.split(".")[0],
        lambda flow: "",
        lambda flow: "x" * 5000,
    ],
)
async def test_a_tampered_flow_is_refused(
    client: httpx.AsyncClient, tamper: Callable[[str], str]
) -> None:
    """A flow whose payload or signature was changed: 400, no redirect."""
    _, flow = await started(client)
    assert_refused_page(await flows.decide(client, tamper(flow)))


async def test_a_flow_signed_with_another_key_is_refused(client: httpx.AsyncClient) -> None:
    """A well-formed flow for this browser, sealed without our key: 400."""
    await started(client)
    forged = Flow(
        tenant_key="initech",
        client_id="fdc_x",
        redirect_uri="https://app.example/cb",
        state=None,
        code_challenge="A" * 43,
        scope="email",
        resource=None,
        binding=FlowSigner([TEST_SECRET]).binding_of(signin_cookie(client)),
    )
    other_key = FlowSigner(["someone-elses-key-that-is-long-enough-000"]).seal(forged)
    assert_refused_page(await flows.decide(client, other_key, "deny"))
    # Control: the same flow under our key is accepted, so the key alone made the difference.
    ours = FlowSigner([TEST_SECRET]).seal(forged)
    assert flows.redirect_params(
        await flows.decide(client, ours, "deny"), "https://app.example/cb"
    ) == {
        "error": "access_denied",
        "error_description": "the customer denied the request",
        "iss": flows.issuer(),
    }


async def test_an_expired_flow_is_refused(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consent posted after the flow's lifetime: 400, no redirect."""
    _, flow = await started(client)
    later = time.time() + FLOW_TTL_SECONDS + 1
    monkeypatch.setattr(signing, "time", types.SimpleNamespace(time=lambda: later))
    assert_refused_page(await flows.decide(client, flow))


async def test_a_flow_sealed_for_one_company_is_refused_at_another(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """initech's flow, with its browser binding, posted to hooli's consent: 400."""
    _, flow = await started(client)
    cookie = {"cookie": f"{COOKIE_NAME}={signin_cookie(client)}"}
    assert_refused_page(await flows.decide(client, flow, tenant="hooli", headers=cookie))


async def test_consent_is_a_form_post_only(client: httpx.AsyncClient) -> None:
    """A consent sent as JSON is refused: the form is the only way in."""
    _, flow = await started(client)
    response = await client.post(
        flows.oauth_path("consent"), json={"flow": flow, "decision": "allow"}
    )
    assert response.status_code == 400
    assert "location" not in response.headers


# Production --------------------------------------------------------------------------------

PRODUCTION_URL = "https://frontdesk.example"


async def test_the_dev_login_is_refused_in_production(serve: Serve) -> None:
    """In production, Allow sends the client temporarily_unavailable and the form is 404."""
    served = await serve(
        env="production",
        secret_keys=["production-secret-key-0123456789-abcdefghijkl"],
        data_keys=["production-data-key-0123456789-abcdefghijklm"],
        base_url=PRODUCTION_URL,
    )
    browser = served.client
    client_id = await flows.register(browser)
    page = await flows.consent_page(browser, client_id, flows.Pkce.new(), state="prod")
    assert "secure" in page.headers["set-cookie"].lower()
    flow = flows.flow_of(page)
    back = flows.redirect_params(await flows.decide(browser, flow))
    assert back["error"] == "temporarily_unavailable"
    assert back["state"] == "prod"
    assert back["iss"] == f"{PRODUCTION_URL}/v1/initech/oauth"
    shown = await browser.get(flows.oauth_path("login"), params={"flow": flow})
    assert shown.status_code == 404
    posted = await browser.post(
        flows.oauth_path("login"),
        data={"flow": flow, "email": "peter@initech.example"},
        headers=flows.FORM,
    )
    assert posted.status_code == 404
    assert "location" not in posted.headers


async def test_a_stored_company_unsafe_in_production_is_named_at_start_up(
    make_settings: Callable[..., Settings], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Companies applied before the instance ran in production (initech signs in with the
    dev login) are named at start-up, not first at a customer's sign-in."""
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    development = await start_app(make_settings(database_url=database_url))
    await development.services.stop()
    capsys.readouterr()

    production = create_app(
        make_settings(
            database_url=database_url,
            env="production",
            secret_keys=["production-secret-key-0123456789-abcdefghijkl"],
            data_keys=["production-data-key-0123456789-abcdefghijklm"],
            base_url=PRODUCTION_URL,
        )
    )
    await production.services.start()
    await production.services.stop()
    lines = capsys.readouterr().err.splitlines()
    events = [orjson.loads(line) for line in lines if line.startswith("{")]
    named = {
        event["tenant"]: event["error"]
        for event in events
        if event["event"] == "company_unsafe_in_production"
    }
    assert "dev login" in named["initech"]
