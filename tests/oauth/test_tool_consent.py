"""Which personal tools ask a grant again (oauth.tool_consent), judged against what the
customer's consent covered, as recorded in the real database: a new personal tool and a
widened one ask, a narrowed one, a public one and an unseen change do not; and
`frontdesk tools history` prints what was recorded."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import CompanyDefinition
from frontdesk.oauth.tool_consent import ChangedTool
from tests.support.tool_annotations import read_only

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

TENANT = "judged"
STATUS: dict[str, Any] = {
    "name": "order_status",
    "description": "The status of one of your orders.",
    "access": "personal",
    "annotations": read_only("Order status"),
    "provider": {"type": "python", "target": "tests.fixtures.tools:whoami"},
}
NOTE: dict[str, Any] = {
    **STATUS,
    "name": "add_note",
    "description": "Adds a note to one of your orders.",
    "annotations": {**read_only("Add a note"), "readOnlyHint": False},
}
MENU: dict[str, Any] = {**STATUS, "name": "menu", "access": "public"}


def company(*tools: dict[str, Any]) -> ServedCompany:
    definition = CompanyDefinition.model_validate(
        {"tenant_key": TENANT, "name": "Judged", "tools": list(tools)}
    )
    return ServedCompany(definition, "100/minute")


async def consented(app: Frontdesk, *tools: dict[str, Any]) -> str:
    return await app.services.tool_consent.record_consent(company(*tools))


async def test_the_company_as_consented_asks_nothing(app: Frontdesk) -> None:
    snapshot = await consented(app, STATUS, NOTE, MENU)
    same = company(MENU, NOTE, STATUS)
    assert same.consent_snapshot == snapshot
    assert await app.services.tool_consent.asking(same, snapshot) == frozenset()
    assert await app.services.tool_consent.asking(same, None) == frozenset()


async def test_a_new_or_widened_personal_tool_asks_and_no_other(app: Frontdesk) -> None:
    snapshot = await consented(app, STATUS, MENU)
    changed = company(
        {**STATUS, "input_schema": {"type": "object", "properties": {"all": {"type": "boolean"}}}},
        NOTE,
        {**MENU, "description": "Everything we sell, and more."},
    )
    judged = await app.services.tool_consent.changed(changed, snapshot)
    assert set(judged) == {
        ChangedTool("add_note", new=True),
        ChangedTool("order_status", new=False),
    }
    # A public tool turned personal is new to the grant.
    turned = company(STATUS, {**MENU, "access": "personal"})
    assert await app.services.tool_consent.asking(turned, snapshot) == {"menu"}


async def test_a_narrowed_tool_or_a_change_the_customer_cannot_see_asks_nothing(
    app: Frontdesk,
) -> None:
    snapshot = await consented(app, STATUS, NOTE)
    narrowed = company(STATUS, {**NOTE, "annotations": read_only("Add a note")})
    assert await app.services.tool_consent.asking(narrowed, snapshot) == frozenset()
    slower = company({**STATUS, "timeout": 3}, NOTE)
    assert slower.consent_snapshot == snapshot
    removed = company(STATUS)
    assert await app.services.tool_consent.asking(removed, snapshot) == frozenset()
    # Widened again from the narrowed state: judged against the consent, not the last step.
    destructive = {**NOTE["annotations"], "destructiveHint": True}
    louder = company(STATUS, {**NOTE, "annotations": destructive})
    assert await app.services.tool_consent.asking(louder, snapshot) == {"add_note"}


async def test_a_snapshot_never_recorded_asks_about_every_personal_tool(app: Frontdesk) -> None:
    served = company(STATUS, NOTE, MENU)
    assert await app.services.tool_consent.asking(served, "0" * 64) == {"order_status", "add_note"}


async def history(*arguments: str) -> Result:
    """`frontdesk tools history` as an operator runs it (in a thread: it runs its own loop)."""
    command = ["tools", "history", *arguments]
    return await anyio.to_thread.run_sync(lambda: CliRunner().invoke(main, command))


async def test_the_history_command_prints_what_was_recorded(
    app: Frontdesk, monkeypatch: pytest.MonkeyPatch
) -> None:
    await app.services.companies.apply(
        [company(STATUS).definition.model_dump(mode="json", by_alias=True)]
    )
    await consented(app, STATUS)
    await consented(app, {**STATUS, "description": "Where your order is."})
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", app.services.settings.database_url)
    printed = await history(TENANT, "order_status")
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    assert lines[0] == "tool\tversion\tdefinition hash\tfirst seen at"
    assert [line.split("\t")[0] for line in lines[1:]] == ["order_status", "order_status"]
    unknown = await history(TENANT, "nothing")
    assert unknown.exit_code == 2
    nobody = await history("nobody")
    assert nobody.exit_code == 2
