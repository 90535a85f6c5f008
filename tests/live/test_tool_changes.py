"""Tool change control on a running service, with the MCP Python SDK as the client (issue 33):
a customer allows the client; the company then changes one tool's description (through the
admin API), and exactly that tool answers the grant with the step-up challenge while another
still answers; the SDK signs the customer in again, the consent page says what changed, and
the tool answers. Making a tool destructive does the same; taking that back asks nothing.
The version history shows each version, by the admin API and by `frontdesk tools history`."""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from tests.live.conftest import (
    LiveService,
    postgres_database,
    running_service,
    service_environment,
)
from tests.live.customer_browser import EMAIL, NAME, CustomerBrowser, first_form
from tests.live.test_company_walk import bearer, new_key
from tests.live.test_signin_sdk import REDIRECT_URI, DevLoginBrowser, MemoryStorage
from tests.support.waiting import eventually

pytestmark = pytest.mark.live

TENANT = "versioned"
TIMEOUT = 30.0
CHANGED_MARK = "changed since you allowed it"
SERVED_DEADLINE = 10.0
# The service reads the company again on every request: a change is served at once.
ENVIRONMENT = {"FRONTDESK_COMPANY_CACHE_SECONDS": "0"}


def hints(title: str, *, read_only: bool = True) -> dict[str, Any]:
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": not read_only,
        "idempotentHint": True,
        "openWorldHint": False,
    }


WHOAMI: dict[str, Any] = {
    "name": "whoami",
    "description": "Says who is asking.",
    "access": "personal",
    "annotations": hints("Whoami"),
    "provider": {"type": "python", "target": "tests.fixtures.tools:whoami"},
}
ECHO: dict[str, Any] = {
    "name": "echo",
    "description": "Says back what it is given.",
    "access": "personal",
    "input_schema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "annotations": hints("Echo"),
    "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
}
COMPANY = {"name": "Versioned", "signin": {"login": {"type": "dev"}}, "tools": [WHOAMI, ECHO]}


class RememberingBrowser(CustomerBrowser):
    """The customer's browser keeping its cookies from one sign-in to the next, as a real
    one does: Frontdesk remembers the customer it last signed in (oauth.remembered)."""

    def __init__(self) -> None:
        super().__init__()
        self.cookies = httpx.Cookies()

    async def sign_in(self, authorize_url: str) -> httpx.URL:
        async with httpx.AsyncClient(timeout=TIMEOUT, cookies=self.cookies) as browser:
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
            self.cookies = browser.cookies
        redirect = httpx.URL(signed_in.headers["location"])
        self.redirects.append(redirect)
        return redirect


async def account_page(service: LiveService) -> str:
    """The customer's account page, signed in to through the company's dev login."""
    account = f"{service.base_url}/v1/{TENANT}/account"
    async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
        started = await browser.get(f"{account}/signin")
        login = await browser.get(started.headers["location"])
        form = first_form(login)
        done = await browser.post(form.action, data={**form.fields, "email": EMAIL, "name": NAME})
        assert done.headers["location"].endswith(f"/v1/{TENANT}/account"), done.text
        page = await browser.get(account)
    assert page.status_code == 200, page.text
    return page.text


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LiveService, str]]:
    """The service, and the database it uses (for the `frontdesk` commands beside it)."""
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
        else:
            database_url = stack.enter_context(postgres_database())
        service = stack.enter_context(
            running_service(request.param, database_url, tmp_path, extra_env=ENVIRONMENT)
        )
        yield service, database_url


class Company:
    """The company's side: its tools changed through the admin API, by an operator key."""

    def __init__(self, admin: httpx.AsyncClient, key: str) -> None:
        self.admin = admin
        self.key = key

    async def put_tool(self, tool: dict[str, Any]) -> None:
        """Change a tool, and wait until the service serves it so (a read of the company
        begun just before the change may still answer a request just after it)."""
        answer = await self.admin.put(
            f"/admin/v1/companies/{TENANT}/tools/{tool['name']}",
            json=tool,
            headers=bearer(self.key),
        )
        assert answer.status_code == 200, answer.text

        async def served() -> bool:
            listed = await self.admin.post(
                f"/v1/{TENANT}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            )
            tools = {item["name"]: item for item in listed.json()["result"]["tools"]}
            shown = tools[tool["name"]]
            return bool(
                shown["description"] == tool["description"]
                and shown["annotations"] == tool["annotations"]
            )

        await eventually(served, SERVED_DEADLINE, f"{tool['name']} served as changed")

    async def versions(self, tool: str) -> list[dict[str, Any]]:
        answer = await self.admin.get(
            f"/admin/v1/companies/{TENANT}/tools/{tool}/versions", headers=bearer(self.key)
        )
        assert answer.status_code == 200, answer.text
        versions: list[dict[str, Any]] = answer.json()["versions"]
        return versions


@contextlib.asynccontextmanager
async def sdk_client(
    service: LiveService, browser: DevLoginBrowser
) -> AsyncIterator[tuple[Client, MemoryStorage]]:
    url = service.mcp_url(TENANT)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(redirect_uris=[AnyUrl(REDIRECT_URI)], client_name="Versions"),
        storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client, storage


async def call_with(
    service: LiveService, token: str, name: str, arguments: dict[str, Any]
) -> httpx.Response:
    """One tools/call with the grant's access token, outside the SDK (which would sign in
    again by itself on a 401)."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        return await http.post(
            service.mcp_url(TENANT),
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            },
            headers={"Authorization": f"Bearer {token}"},
        )


def token_of(storage: MemoryStorage) -> str:
    assert storage.tokens is not None
    return storage.tokens.access_token


def assert_asks_again(answer: httpx.Response) -> None:
    """The step-up challenge: 401 with insufficient_scope, and the same in the result."""
    assert answer.status_code == 401, answer.text
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="insufficient_scope"' in challenge
    assert "resource_metadata=" in challenge
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["_meta"]["mcp/www_authenticate"] == [challenge]


def assert_answers(answer: httpx.Response) -> None:
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"].get("isError") is not True, answer.text


async def test_a_changed_tool_asks_the_grant_again_and_no_other(
    served: tuple[LiveService, str],
) -> None:
    service, database_url = served
    environment = service_environment(service.public_url, database_url, ENVIRONMENT)
    operator = await new_key(environment, "--operator", "--name", "ops")
    async with httpx.AsyncClient(base_url=service.base_url, timeout=TIMEOUT) as admin:
        created = await admin.put(
            f"/admin/v1/companies/{TENANT}", json=COMPANY, headers=bearer(operator)
        )
        assert created.status_code == 201, created.text
        company = Company(admin, operator)
        browser = DevLoginBrowser(browser=RememberingBrowser())

        async with sdk_client(service, browser) as (client, storage):
            # The customer allows the client: the SDK signs them in on its first call.
            first = await client.call_tool("whoami", {})
            assert first.is_error is False
            assert first.structured_content is not None
            assert first.structured_content["email"] == EMAIL
            assert len(browser.consent_pages) == 1
            assert CHANGED_MARK not in browser.consent_pages[0]
            listing = await client.list_tools()
            versions = {
                tool.name: (tool.meta or {}).get("dev.frontdesk/version") for tool in listing.tools
            }
            assert [tool.name for tool in listing.tools] == ["echo", "whoami"]
            assert all(versions.values()), versions
            before = token_of(storage)

            # The company rewrites whoami's description: that tool asks this grant again.
            await company.put_tool({**WHOAMI, "description": "Says who is asking, and more."})
            assert_asks_again(await call_with(service, before, "whoami", {}))
            assert_answers(await call_with(service, before, "echo", {"text": "still here"}))
            # The account page says so too.
            assert "Changed since you allowed it: Whoami." in await account_page(service)

            # The SDK meets the challenge, the customer allows the client again (the
            # consent page names the changed tool), and whoami answers the new grant.
            again = await client.call_tool("whoami", {})
            assert again.is_error is False, again
            assert len(browser.consent_pages) == 2
            page = browser.consent_pages[1]
            assert CHANGED_MARK in page
            assert page.count(CHANGED_MARK) == 1
            assert page.index("Whoami") < page.index(CHANGED_MARK)
            after = token_of(storage)
            assert after != before
            assert_answers(await call_with(service, after, "whoami", {}))
            assert "Changed since you allowed it" not in await account_page(service)
            # The old grant still covers only what it was given.
            assert_asks_again(await call_with(service, before, "whoami", {}))

            # Echo made destructive: echo asks again, whoami keeps answering.
            destructive = {**ECHO, "annotations": hints("Echo", read_only=False)}
            await company.put_tool(destructive)
            assert_asks_again(await call_with(service, after, "echo", {"text": "hello"}))
            assert_answers(await call_with(service, after, "whoami", {}))
            echoed = await client.call_tool("echo", {"text": "hello"})
            assert echoed.is_error is False, echoed
            assert len(browser.consent_pages) == 3
            assert "can change or delete things" in browser.consent_pages[2]
            assert CHANGED_MARK in browser.consent_pages[2]
            latest = token_of(storage)

            # Taking it back (read-only again) narrows the tool: nothing asks again, not
            # even the grant made before it became destructive.
            await company.put_tool(copy.deepcopy(ECHO))
            assert_answers(await call_with(service, latest, "echo", {"text": "calm"}))
            assert_answers(await call_with(service, after, "echo", {"text": "calm"}))
            assert len(browser.consent_pages) == 3

        whoami_versions = await company.versions("whoami")
        echo_versions = await company.versions("echo")
    assert len({entry["version"] for entry in whoami_versions}) == 2
    assert len({entry["version"] for entry in echo_versions}) == 2
    assert whoami_versions[0]["version"] == versions["whoami"]

    printed = await anyio.run_process(
        [str(Path(sys.executable).with_name("frontdesk")), "tools", "history", TENANT, "whoami"],
        env=environment,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr.decode()
    lines = printed.stdout.decode().splitlines()
    assert lines[0].split("\t") == ["tool", "version", "definition hash", "first seen at"]
    assert [line.split("\t")[1] for line in lines[1:]] == [
        entry["version"] for entry in whoami_versions
    ]
