"""Per-tool scopes, as rules: what a tool may name, what a company then offers, what
authorize grants of it, and what a customer's unticking takes out (never adds)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk import scopes
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import CompanyDefinition
from frontdesk.companies.tool_scopes import company_scopes, scope_needed
from frontdesk.oauth.scope_choice import TOOL_SCOPES_FIELD, field_of, narrowed
from tests.support.tool_annotations import read_only

WHOAMI = {"type": "python", "target": "tests.fixtures.tools:whoami"}


def tool(name: str, scope: str | None = None, access: str = "personal") -> dict[str, Any]:
    fields: dict[str, Any] = {"scope": scope} if scope is not None else {}
    return {
        "name": name,
        "description": f"The {name} tool.",
        "access": access,
        "annotations": read_only(name),
        "provider": WHOAMI,
        **fields,
    }


def company(*tools: dict[str, Any]) -> CompanyDefinition:
    return CompanyDefinition.model_validate(
        {"tenant_key": "bistro", "name": "Bistro", "tools": list(tools)}
    )


def refusal(*tools: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as raised:
        company(*tools)
    return str(raised.value)


def test_a_personal_tool_may_name_a_scope_of_its_own() -> None:
    definition = company(tool("cancel_order", "orders:cancel"), tool("whoami"))
    assert [item.scope for item in definition.tools] == ["orders:cancel", None]


@pytest.mark.parametrize(
    ("scope", "problem"),
    [
        ("profile", "it is the service's own"),
        ("email", "it is the service's own"),
        ("openid", "it is the service's own"),
        ("orders cancel", "should match pattern"),
        ('orders"', "should match pattern"),
        ("", "should match pattern"),
        ("x" * 65, "should match pattern"),
    ],
)
def test_a_scope_the_service_keeps_or_cannot_quote_is_refused(scope: str, problem: str) -> None:
    assert problem in refusal(tool("cancel_order", scope))


def test_a_public_tool_cannot_have_a_scope() -> None:
    """A guest calls it with no grant at all: a scope would narrow nothing."""
    text = refusal(tool("menu", "menu:read", access="public"))
    assert "tool 'menu' is public: only a personal tool can have a scope" in text


def test_the_offered_scopes_must_fit_a_grant() -> None:
    many = [tool(f"t{index}", f"scope:{index:02d}:{'x' * 20}") for index in range(8)]
    assert "a grant holds at most 200" in refusal(*many)


def test_a_company_offers_the_services_scopes_then_its_tools_own() -> None:
    served = ServedCompany(
        company(
            tool("order_status", "orders:read"),
            tool("cancel_order", "orders:cancel"),
            tool("order_history", "orders:read"),
            tool("whoami"),
        ),
        "60/minute",
    )
    offered = company_scopes(served)
    # The catalog orders tools by name: cancel_order, order_history, order_status, whoami.
    assert offered.offered == ("profile", "email", "orders:cancel", "orders:read")
    assert offered.of_tools == ("orders:cancel", "orders:read")
    assert offered.text == "profile email orders:cancel orders:read"
    assert [item.name for item in offered.tools_of["orders:read"]] == [
        "order_history",
        "order_status",
    ]
    assert company_scopes(served) is offered  # worked out once per loaded company
    granted = frozenset({"profile", "orders:read"})
    assert scope_needed(served.tools["order_status"], granted) is None
    assert scope_needed(served.tools["whoami"], frozenset()) is None
    assert scope_needed(served.tools["cancel_order"], granted) == "orders:cancel"


def test_authorize_grants_what_was_asked_and_offered_or_all_of_it() -> None:
    offers = ("profile", "email", "orders:cancel", "orders:read")
    assert scopes.resolve("orders:read openid", offers) == "orders:read"
    assert scopes.resolve("openid offline_access", offers) == " ".join(offers)
    assert scopes.resolve(None, offers) == " ".join(offers)
    # A company without tool scopes grants what it always did.
    assert scopes.resolve("orders:read") == "profile email"
    assert scopes.resolve("email") == "email"


def test_unticking_only_narrows() -> None:
    granted = "profile email orders:cancel orders:read"
    shown = {TOOL_SCOPES_FIELD: "orders:cancel orders:read"}
    assert narrowed(granted, {**shown, field_of("orders:read"): "on"}) == (
        "profile email orders:read"
    )
    assert narrowed(granted, shown) == "profile email"
    # A form that lists nothing takes nothing out (a client posting the consent form itself).
    assert narrowed(granted, {}) == granted
    # Ticking what was not asked for adds nothing; the service's own are not unticked here.
    extra = {TOOL_SCOPES_FIELD: "orders:refund profile", field_of("orders:refund"): "on"}
    assert narrowed("orders:read", extra) == "orders:read"
    assert narrowed("profile orders:read", {TOOL_SCOPES_FIELD: "profile"}) == (
        "profile orders:read"
    )
