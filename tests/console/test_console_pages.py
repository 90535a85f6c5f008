"""The console (``/console/``) in process: a company's staff sign in through the company's
dev login, see only their own company, switch a tool off and on, call one as a guest,
and every form refuses a request that did not come from the console's own page."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.store.audit import AuditLog
from tests.conftest import BASE_URL
from tests.console.support import (
    CONSOLE_COMPANIES,
    SAME_ORIGIN,
    STAFF,
    console_sign_in,
    csrf_of,
    post,
)
from tests.oauth import flows

pytestmark = pytest.mark.anyio


@pytest.fixture
async def companies(app: Frontdesk, tmp_path: Path) -> Frontdesk:
    await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
    return app


async def test_staff_sign_in_and_see_their_tools(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    done = await console_sign_in(client)
    assert done.status_code == 303, done.text
    assert done.headers["location"] == f"{BASE_URL}/console/vandelay/tools"
    cookie = done.headers["set-cookie"]
    assert "frontdesk_console=" in cookie
    assert "HttpOnly" in cookie
    assert "Path=/console/" in cookie
    assert "SameSite=lax" in cookie

    page = await client.get("/console/vandelay/tools")
    assert page.status_code == 200, page.text
    assert "echo" in page.text
    assert "whoami" in page.text
    assert "read-only" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"


async def test_someone_not_on_the_staff_is_refused(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    done = await console_sign_in(client, email="kramer@elsewhere.example")
    assert done.status_code == 403
    assert "frontdesk_console=" not in done.headers.get("set-cookie", "")
    # A subdomain is another organisation's to vouch for.
    assert (await console_sign_in(client, email="kramer@x.vandelay.example")).status_code == 403
    assert (await client.get("/console/vandelay/tools")).status_code == 303


async def test_staff_of_one_company_never_see_another(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)
    for tenant in ("pendant", "initech", "nosuchcompany"):
        for step in ("tools", "clients", "audit", "signin", "usage"):
            answer = await client.get(f"/console/{tenant}/{step}")
            assert answer.status_code == 404, (tenant, step)
            assert "<title>Not found · Frontdesk console</title>" in answer.text
        switched = await post(
            client,
            f"/console/{tenant}/tools/switch",
            {"csrf": csrf, "tool": "echo", "enabled": "false"},
        )
        assert switched.status_code == 404
    # Their own company's staff list does not let them in elsewhere either.
    assert (await console_sign_in(client, "pendant", STAFF)).status_code == 403


async def test_a_company_without_a_console_has_none(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    answer = await client.get("/console/signin", params={"company": "initech"})
    assert answer.status_code == 404


async def test_switching_a_tool_off_takes_it_out_of_the_mcp_listing(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)

    off = await post(
        client, "/console/vandelay/tools/switch", {"csrf": csrf, "tool": "echo", "enabled": "false"}
    )
    assert off.status_code == 303, off.text
    listed = await flows.mcp(client, flows.rpc("tools/list"), "vandelay")
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["whoami"]
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition["tools"][0]["enabled"] is False
    assert "Enable" in (await client.get("/console/vandelay/tools")).text

    on = await post(
        client, "/console/vandelay/tools/switch", {"csrf": csrf, "tool": "echo", "enabled": "true"}
    )
    assert on.status_code == 303
    listed = await flows.mcp(client, flows.rpc("tools/list"), "vandelay")
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["echo", "whoami"]

    # Who switched it, in the company's audit log.
    events = await AuditLog(companies.services.database.engine).list("vandelay")
    assert [(event.event, event.detail) for event in events] == [
        ("console_change", {"by": STAFF, "change": "tool_enabled", "tool": "echo"}),
        ("console_change", {"by": STAFF, "change": "tool_disabled", "tool": "echo"}),
    ]


async def test_a_test_call_runs_the_tool_as_a_guest(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)

    echoed = await post(
        client,
        "/console/vandelay/tools/test",
        {"csrf": csrf, "tool": "echo", "arguments": '{"text": "hello from the console"}'},
    )
    assert echoed.status_code == 200, echoed.text
    assert "The tool answered." in echoed.text
    assert "hello from the console" in echoed.text

    # The endpoint's own checks: the schema, and a guest at a personal tool.
    invalid = await post(
        client, "/console/vandelay/tools/test", {"csrf": csrf, "tool": "echo", "arguments": "{}"}
    )
    assert "Invalid arguments for echo" in invalid.text
    personal = await post(
        client, "/console/vandelay/tools/test", {"csrf": csrf, "tool": "whoami", "arguments": ""}
    )
    assert "Sign in to Vandelay Industries to use whoami" in personal.text
    not_json = await post(
        client, "/console/vandelay/tools/test", {"csrf": csrf, "tool": "echo", "arguments": "[1"}
    )
    assert not_json.status_code == 400
    assert "must be a JSON object" in not_json.text


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"origin": "https://evil.example"}, id="another-origin"),
        pytest.param({"origin": BASE_URL, "sec-fetch-site": "cross-site"}, id="cross-site"),
        pytest.param({}, id="no-origin"),
    ],
)
async def test_a_form_from_elsewhere_is_refused(
    companies: Frontdesk, client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)
    refused = await post(
        client,
        "/console/vandelay/tools/switch",
        {"csrf": csrf, "tool": "echo", "enabled": "false"},
        headers=headers,
    )
    assert refused.status_code == 403
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition["tools"][0].get("enabled", True) is True


async def test_a_form_without_the_sessions_token_is_refused(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    for csrf in ("", "forged-token"):
        refused = await post(
            client,
            "/console/vandelay/tools/switch",
            {"csrf": csrf, "tool": "echo", "enabled": "false"},
        )
        assert refused.status_code == 403
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition["tools"][0].get("enabled", True) is True


async def test_a_sign_in_state_from_another_browser_is_refused(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    started = await client.get("/console/signin", params={"company": "vandelay"})
    form = await client.get(started.headers["location"])
    flow = flows.form_of(form.text).inputs["flow"]
    transport = httpx.ASGITransport(app=companies, client=("203.0.113.8", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as other:
        answer = await other.post(
            "/console/login",
            data={"flow": flow, "email": STAFF},
            headers={**flows.FORM, **SAME_ORIGIN},
        )
    assert answer.status_code == 400
    assert "frontdesk_console=" not in answer.headers.get("set-cookie", "")


async def test_a_branding_that_does_not_validate_is_not_applied(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/signin")).text)
    refused = await post(
        client,
        "/console/vandelay/signin/branding",
        {"csrf": csrf, "action": "save", "accent_color": "red", "logo_url": "http://x.example/a"},
    )
    assert refused.status_code == 400
    assert "branding.accent_color" in refused.text
    assert "#rrggbb" in refused.text
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition.get("branding") is None

    saved = await post(
        client,
        "/console/vandelay/signin/branding",
        {"csrf": csrf, "action": "save", "accent_color": "#1F6F4A"},
    )
    assert saved.status_code == 303, saved.text
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition["branding"]["accent_color"] == "#1f6f4a"


async def test_the_preview_is_the_consent_page_in_the_edited_branding(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/signin")).text)
    preview = await post(
        client,
        "/console/vandelay/signin/branding",
        {
            "csrf": csrf,
            "action": "preview",
            "accent_color": "#aa2200",
            "logo_url": "https://cdn.vandelay.example/logo.png",
        },
    )
    assert preview.status_code == 200, preview.text
    assert "to use your Vandelay Industries account?" in preview.text
    assert "--accent: #aa2200" in preview.text
    assert "img-src https://cdn.vandelay.example" in preview.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in preview.headers["content-security-policy"]
    # A preview writes nothing.
    stored = await companies.services.companies.get("vandelay")
    assert stored is not None
    assert stored.definition.get("branding") is None


async def test_signing_out_ends_the_session(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)
    out = await post(client, "/console/signout", {"csrf": csrf})
    assert out.status_code == 303
    assert (await client.get("/console/vandelay/tools")).status_code == 303


async def test_someone_taken_off_the_staff_is_signed_out_at_their_next_request(
    companies: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/tools")).text)
    await flows.add_companies(
        companies,
        tmp_path,
        CONSOLE_COMPANIES.replace(
            "staff: {domains: [vandelay.example]}", "staff: {emails: [art@vandelay.example]}"
        ),
    )
    assert (await client.get("/console/vandelay/tools")).status_code == 303
    switched = await post(
        client, "/console/vandelay/tools/switch", {"csrf": csrf, "tool": "echo", "enabled": "false"}
    )
    assert switched.status_code == 401
    front = await client.get("/console/")
    assert "Sign in to the console" in front.text


async def test_a_tools_access_and_annotations_are_edited_as_clients_will_see_them(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    page = (await client.get("/console/vandelay/tools")).text
    # whoami may destroy: the form starts from its hints as they are.
    assert 'name="destructive" checked' in page
    edited = await post(
        client,
        "/console/vandelay/tools/edit",
        {"csrf": csrf_of(page), "tool": "echo", "access": "personal", "idempotent": "on"},
    )
    assert edited.status_code == 303, edited.text
    listed = await flows.mcp(client, flows.rpc("tools/list"), "vandelay")
    [echo] = [tool for tool in listed.json()["result"]["tools"] if tool["name"] == "echo"]
    assert echo["annotations"] == {
        "title": "Echo",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    # Personal now: a guest is told to sign in.
    called = await flows.mcp(client, flows.tool_call("echo", {"text": "hi"}), "vandelay")
    assert called.status_code == 401

    refused = await post(
        client,
        "/console/vandelay/tools/edit",
        {"csrf": csrf_of(page), "tool": "echo", "access": "everyone"},
    )
    assert refused.status_code == 400
    assert "tools[0].access" in refused.text
