"""`frontdesk clients`, `grants`, `audit list --customer`, `companies deactivate` and
`delete`, against the database a running app uses: what they print, and what the app's
customers and clients see next (a revoked grant's token is refused at the next MCP call).

Each test runs on SQLite and PostgreSQL. The command runs in a thread, as another process
would, with its own engine; on PostgreSQL the app learns of its revocations through the
change-notice triggers, awaited here with the feed's ``caught_up``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
import httpx
import orjson
import pytest
from click.testing import CliRunner, Result

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.config import Settings
from tests.conftest import BASE_URL
from tests.oauth import flows

pytestmark = [pytest.mark.anyio]

PETER = "peter@initech.example"
SAMIR = "samir@initech.example"


@pytest.fixture
def settings(
    make_settings: Callable[..., Settings], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The app's settings, its company definitions read afresh on every request; the
    commands get the same database through FRONTDESK_DATABASE_URL."""
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", database_url)
    return make_settings(database_url=database_url, company_cache_seconds=0)


@pytest.fixture
def browser(app: Frontdesk) -> Callable[[], httpx.AsyncClient]:
    """Another customer's browser on the same app."""

    def open_browser() -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=("198.51.100.9", 41000))
        return httpx.AsyncClient(transport=transport, base_url=BASE_URL)

    return open_browser


async def command(app: Frontdesk, *arguments: str) -> Result:
    invoke = functools.partial(CliRunner().invoke, main, list(arguments))
    result = await anyio.to_thread.run_sync(invoke)
    feed = app.services.database.grant_changes
    if feed is not None:
        await feed.caught_up()
    return result


def grant_lines(result: Result) -> list[list[str]]:
    assert result.exit_code == 0, result.output
    return [line.split("\t") for line in result.stdout.splitlines()]


async def test_a_revoked_grant_is_refused_at_the_next_call(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """`grants revoke KEY ID`: the access token gets 401 at once, the refresh token
    invalid_grant, and `grants list` shows the grant revoked."""
    tokens = await flows.obtain_tokens(client)
    assert (await flows.whoami(client, tokens.access)).status_code == 200
    [line] = grant_lines(await command(app, "grants", "list", "initech"))
    family_id, state, subject, email, client_id = line[:5]
    assert (state, subject, email, client_id) == ("live", f"dev:{PETER}", PETER, tokens.client_id)

    result = await command(app, "grants", "revoke", "initech", family_id)

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"revoked 1 grant(s): {family_id}; ")
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    refreshed = await flows.refresh(client, tokens)
    assert (refreshed.status_code, refreshed.json()["error"]) == (400, "invalid_grant")
    [line] = grant_lines(await command(app, "grants", "list", "initech"))
    assert line[:2] == [family_id, "revoked"]
    again = await command(app, "grants", "revoke", "initech", family_id)
    assert again.stdout.startswith("nothing to revoke")


async def test_revoking_a_customer_ends_their_grants_only(
    app: Frontdesk, client: httpx.AsyncClient, browser: Callable[[], httpx.AsyncClient]
) -> None:
    """`grants revoke KEY --customer EMAIL` ends that customer's grants; another
    customer's token keeps working."""
    peter = await flows.obtain_tokens(client, email=PETER)
    async with browser() as other:
        samir = await flows.obtain_tokens(other, email=SAMIR, name="Samir")
    listed = grant_lines(await command(app, "grants", "list", "initech", "--customer", PETER))
    assert [line[2] for line in listed] == [f"dev:{PETER}"]

    result = await command(app, "grants", "revoke", "initech", "--customer", PETER)

    assert result.exit_code == 0, result.output
    assert (await flows.whoami(client, peter.access)).status_code == 401
    assert (await flows.whoami(client, samir.access)).status_code == 200


async def test_revoking_a_client_ends_every_grant_it_holds(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """`clients list` shows the client with its live grants; `clients revoke` ends them."""
    tokens = await flows.obtain_tokens(client)
    [line] = grant_lines(await command(app, "clients", "list", "initech"))
    assert line[0] == tokens.client_id
    assert line[1:3] == [flows.CLIENT_NAME, "registered"]
    assert line[4] == "1 live grants"

    result = await command(app, "clients", "revoke", "initech", tokens.client_id)

    assert result.exit_code == 0, result.output
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    [line] = grant_lines(await command(app, "clients", "list", "initech"))
    assert line[4] == "0 live grants"


async def test_audit_list_by_customer_shows_only_their_grants_events(
    app: Frontdesk, client: httpx.AsyncClient, browser: Callable[[], httpx.AsyncClient]
) -> None:
    """`audit list KEY --customer X`: the events of X's grants, none of another's."""
    peter = await flows.obtain_tokens(client, email=PETER)
    async with browser() as other:
        await flows.obtain_tokens(other, email=SAMIR, name="Samir")
    [line] = grant_lines(await command(app, "grants", "list", "initech", "--customer", PETER))
    await command(app, "grants", "revoke", "initech", line[0])

    result = await command(app, "audit", "list", "initech", "--customer", f"dev:{PETER}")

    assert result.exit_code == 0, result.output
    events = [orjson.loads(text) for text in result.stdout.splitlines()]
    assert [event["event"] for event in events] == ["family_revoked", "tokens_issued"]
    assert {event["family_id"] for event in events} == {int(line[0])}
    assert {event["client_id"] for event in events} == {peter.client_id}
    assert events[0]["reason"] == "operator_revoked"


async def test_a_deactivated_company_answers_404_and_keeps_its_grants(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """`companies deactivate`: 404 from the next request; `activate` brings the same
    token back."""
    tokens = await flows.obtain_tokens(client)

    result = await command(app, "companies", "deactivate", "initech")

    assert result.exit_code == 0, result.output
    assert "answer 404" in result.stdout
    assert "grants and tokens are kept" in result.stdout
    assert (await flows.whoami(client, tokens.access)).status_code == 404
    assert (await command(app, "companies", "activate", "initech")).exit_code == 0
    assert (await flows.whoami(client, tokens.access)).status_code == 200


async def test_a_deleted_company_takes_its_grants_and_keeps_its_audit_events(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """`companies delete KEY --yes` removes the company, its clients and grants (its
    tokens refused), says so, and leaves its audit events readable; without --yes, nothing."""
    tokens = await flows.obtain_tokens(client)
    refused = await command(app, "companies", "delete", "initech")
    assert refused.exit_code == 2
    assert (await flows.whoami(client, tokens.access)).status_code == 200

    result = await command(app, "companies", "delete", "initech", "--yes")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == ["initech: deleted", "live grants revoked first: 1"]
    assert "token_families removed: 1" in lines
    assert "oauth_clients removed: 1" in lines
    assert "customers removed: 1" in lines
    assert (await flows.whoami(client, tokens.access)).status_code in (401, 404)
    assert (await command(app, "companies", "show", "initech")).exit_code == 2
    audit = await command(app, "audit", "list", "initech")
    assert audit.exit_code == 0, audit.output
    assert "company_deleted" in audit.stdout


@pytest.mark.parametrize(
    "arguments",
    [
        ["companies", "show", "nobody"],
        ["companies", "deactivate", "nobody"],
        ["companies", "activate", "nobody"],
        ["companies", "delete", "nobody", "--yes"],
        ["clients", "list", "nobody"],
        ["clients", "revoke", "nobody", "some-client"],
        ["grants", "list", "nobody"],
        ["grants", "revoke", "nobody", "1"],
        ["grants", "revoke", "nobody", "--customer", PETER],
        ["audit", "list", "nobody"],
    ],
)
async def test_an_unknown_company_is_a_one_line_usage_error(
    app: Frontdesk, arguments: list[str]
) -> None:
    """Every command that names a company: exit 2 and one line naming the key."""
    result = await command(app, *arguments)
    assert result.exit_code == 2
    assert result.output == "Error: no company has the tenant key 'nobody'\n"


@pytest.mark.parametrize(
    "arguments",
    [
        ["grants", "list", "initech", "--customer", "nobody@example.com"],
        ["grants", "revoke", "initech", "--customer", "nobody@example.com"],
        ["audit", "list", "initech", "--customer", "nobody@example.com"],
        ["clients", "revoke", "initech", "no-such-client"],
        ["grants", "revoke", "initech", "999999"],
    ],
)
async def test_an_unknown_customer_client_or_grant_is_a_usage_error(
    app: Frontdesk, arguments: list[str]
) -> None:
    """Naming what the company does not have: exit 2, one line, nothing revoked."""
    result = await command(app, *arguments)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith("Error: company 'initech' has no ")


async def test_another_companys_grant_cannot_be_revoked_through_this_one(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A grant id of initech named under globex is unknown there, and keeps working."""
    tokens = await flows.obtain_tokens(client)
    [line] = grant_lines(await command(app, "grants", "list", "initech"))
    result = await command(app, "grants", "revoke", "globex", line[0])
    assert result.exit_code == 2
    assert (await flows.whoami(client, tokens.access)).status_code == 200
