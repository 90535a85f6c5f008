"""Importing an OpenAPI document into a company's tools (frontdesk.openapi_import): what each
operation becomes, the diff a re-import shows and applies, a dry run that writes nothing,
and the clear refusal of a document that cannot be imported."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from frontdesk.companies.definition import CompanyDefinition, ToolDefinition
from frontdesk.openapi_import import ImportRefused
from frontdesk.openapi_import.plan import ImportRequest, import_openapi
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database
from tests.support.orders_api import ORDERS_30, ORDERS_31

pytestmark = pytest.mark.anyio

BASE_URL = "https://api.acme.example/v1"
HAND_WRITTEN = {
    "name": "echo",
    "description": "Repeats the text it is given.",
    "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
    "annotations": {
        "title": "Echo",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}


@pytest.fixture
async def companies(sqlite_url: str) -> AsyncIterator[CompanyRepository]:
    """A migrated database holding the company ``acme`` with one hand-written tool."""
    database = Database(sqlite_url)
    await database.migrate()
    repository = CompanyRepository(database.engine)
    company = {
        "tenant_key": "acme",
        "name": "Acme",
        "signin": {"login": {"type": "dev"}},
        "tools": [HAND_WRITTEN],
    }
    document = CompanyDefinition.model_validate(company).model_dump(mode="json", by_alias=True)
    await repository.apply([document])
    try:
        yield repository
    finally:
        await database.close()


async def stored_tools(repository: CompanyRepository) -> dict[str, dict[str, Any]]:
    stored = await repository.get("acme")
    assert stored is not None
    return {tool["name"]: tool for tool in stored.definition["tools"]}


def given(annotations: dict[str, Any]) -> dict[str, Any]:
    """The annotations set (the store keeps the unset ones as null)."""
    return {name: value for name, value in annotations.items() if value is not None}


def request(document: dict[str, Any], **choices: Any) -> ImportRequest:
    return ImportRequest(document, BASE_URL, **choices)


async def test_each_operation_becomes_a_tool_beside_the_hand_written_one(
    companies: CompanyRepository,
) -> None:
    plan = await import_openapi(companies, "acme", request(ORDERS_31))
    assert plan.added == ["listOrders", "place_order", "getOrder", "cancelOrder", "broken"]
    assert (plan.changed, plan.removed, plan.applied) == ([], [], True)
    tools = await stored_tools(companies)
    assert list(tools) == ["echo", "listOrders", "place_order", "getOrder", "cancelOrder", "broken"]

    listing = tools["listOrders"]
    assert listing["title"] == "List orders"
    assert listing["description"] == "The orders, newest first, optionally by status."
    assert listing["access"] == "public"
    assert given(listing["annotations"]) == {
        "title": "List orders",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    # The referenced parameter and its referenced schema are inlined, its description kept.
    assert listing["input_schema"] == {
        "type": "object",
        "properties": {
            "status": {
                "type": "string",
                "enum": ["open", "shipped", "cancelled"],
                "description": "Only orders in this state.",
            },
            "limit": {"type": "integer", "minimum": 1},
            "X-Request-Id": {"type": "string"},
        },
        "additionalProperties": False,
    }
    assert listing["output_schema"]["properties"]["orders"]["items"]["properties"]["status"] == {
        "type": "string",
        "enum": ["open", "shipped", "cancelled"],
    }
    assert listing["provider"] == {
        "type": "openapi",
        "source": "Orders API",
        "base_url": BASE_URL,
        "method": "GET",
        "path": "/orders",
        "parameters": [
            {"name": "status", "in": "query", "argument": None},
            {"name": "limit", "in": "query", "argument": None},
            {"name": "X-Request-Id", "in": "header", "argument": None},
        ],
        "body": False,
        "audience": None,
    }

    placing = tools["place_order"]
    assert placing["input_schema"]["required"] == ["body"]
    assert placing["input_schema"]["properties"]["body"]["required"] == ["item", "quantity"]
    assert placing["provider"]["body"] is True
    assert given(placing["annotations"]) == {
        "title": placing["title"] or "place_order",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": True,
    }

    # The path item's parameter applies to both of its operations.
    assert tools["getOrder"]["input_schema"]["required"] == ["orderId"]
    assert tools["getOrder"]["output_schema"]["required"] == ["id", "item", "quantity", "status"]
    # The document's global security makes the DELETE personal; security: [] the rest public.
    cancelling = tools["cancelOrder"]
    assert cancelling["access"] == "personal"
    assert given(cancelling["annotations"]) == {
        "title": cancelling["title"] or "cancelOrder",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert cancelling["output_schema"] is None
    assert tools["getOrder"]["access"] == "public"


async def test_an_openapi_30_document_is_said_the_2020_12_way(
    companies: CompanyRepository,
) -> None:
    """nullable adds null to the type, a boolean exclusiveMinimum becomes the bound, a
    response in components is followed, OpenAPI's example is dropped, and an operation
    without an operationId is named by its method and path."""
    plan = await import_openapi(companies, "acme", request(ORDERS_30))
    assert plan.added == ["getOrder", "get_orders"]
    tools = await stored_tools(companies)
    assert tools["getOrder"]["output_schema"] == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "note": {"type": ["string", "null"]}},
    }
    listing = tools["get_orders"]
    assert listing["input_schema"]["properties"]["limit"] == {
        "type": "integer",
        "exclusiveMinimum": 0,
    }
    assert listing["output_schema"] is None


async def test_a_reimport_shows_and_applies_its_diff_and_keeps_other_tools(
    companies: CompanyRepository,
) -> None:
    hand_written = (await stored_tools(companies))["echo"]
    await import_openapi(companies, "acme", request(ORDERS_31))
    revised = copy.deepcopy(ORDERS_31)
    del revised["paths"]["/broken"]
    revised["paths"]["/orders/{orderId}"]["get"]["summary"] = "Read one order, in full"
    revised["paths"]["/refunds"] = {
        "post": {
            "operationId": "refund",
            "security": [],
            "x-frontdesk": {"annotations": {"destructiveHint": False}},
            "responses": {"200": {"description": "Refunded."}},
        }
    }

    dry = await import_openapi(companies, "acme", request(revised, dry_run=True))
    assert (dry.added, dry.changed, dry.removed) == (["refund"], ["getOrder"], ["broken"])
    assert dry.applied is False
    assert "broken" in await stored_tools(companies)

    applied = await import_openapi(companies, "acme", request(revised))
    assert (applied.added, applied.changed, applied.removed) == (
        ["refund"],
        ["getOrder"],
        ["broken"],
    )
    assert applied.unchanged == ["listOrders", "place_order", "cancelOrder"]
    tools = await stored_tools(companies)
    assert "broken" not in tools
    assert tools["echo"] == hand_written
    assert tools["getOrder"]["title"] == "Read one order, in full"
    assert given(tools["refund"]["annotations"]) == {
        "title": tools["refund"]["title"] or "refund",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": True,
    }

    again = await import_openapi(companies, "acme", request(revised))
    assert (again.added, again.changed, again.removed, again.applied) == ([], [], [], False)


async def test_include_picks_operations_by_id_or_tag_and_overrides_win(
    companies: CompanyRepository,
) -> None:
    plan = await import_openapi(
        companies,
        "acme",
        request(
            ORDERS_31,
            include=("getOrder", "admin"),
            annotations={"cancelOrder": {"destructiveHint": False}},
        ),
    )
    assert plan.added == ["getOrder", "cancelOrder"]
    tools = await stored_tools(companies)
    assert tools["cancelOrder"]["annotations"]["destructiveHint"] is False

    with pytest.raises(ImportRefused, match=r"no operation has the operationId or tag \['nope'\]"):
        await import_openapi(companies, "acme", request(ORDERS_31, include=("nope",)))


async def test_a_name_a_hand_written_tool_has_is_refused_and_nothing_is_written(
    companies: CompanyRepository,
) -> None:
    clashing = copy.deepcopy(ORDERS_31)
    clashing["paths"]["/orders"]["get"]["operationId"] = "echo"
    before = await companies.get("acme")
    with pytest.raises(ImportRefused, match=r"already has tools named \['echo'\]"):
        await import_openapi(companies, "acme", request(clashing))
    assert await companies.get("acme") == before


def broken(change: str) -> dict[str, Any]:
    document = copy.deepcopy(ORDERS_31)
    if change == "swagger":
        return {"swagger": "2.0", "info": {"title": "Old"}, "paths": {}}
    if change == "no info version":
        del document["info"]["version"]
    elif change == "dangling reference":
        document["paths"]["/orders"]["get"]["parameters"][0] = {
            "$ref": "#/components/parameters/Missing"
        }
    elif change == "remote reference":
        document["components"]["schemas"]["Order"] = {"$ref": "https://schemas.example/order.json"}
    elif change == "recursive schema":
        document["components"]["schemas"]["Order"]["properties"]["parent"] = {
            "$ref": "#/components/schemas/Order"
        }
    elif change == "cookie parameter":
        document["paths"]["/broken"]["get"]["parameters"] = [
            {"name": "session", "in": "cookie", "required": True, "schema": {"type": "string"}}
        ]
    return document


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("swagger", "Swagger 2.0; convert it to OpenAPI 3 first"),
        ("no info version", 'not valid OpenAPI 3.1: at info: "version" is a required property'),
        ("dangling reference", "/components/parameters/Missing' does not resolve within"),
        ("remote reference", "'https://schemas.example/order.json' does not resolve within"),
        ("recursive schema", "'#/components/schemas/Order' refers to itself"),
        ("cookie parameter", "GET /broken (broken): requires the cookie parameter 'session'"),
    ],
)
async def test_a_document_that_cannot_be_imported_is_refused_saying_why(
    companies: CompanyRepository, change: str, message: str
) -> None:
    before = await companies.get("acme")
    with pytest.raises(ImportRefused) as refused:
        await import_openapi(companies, "acme", request(broken(change)))
    assert message in str(refused.value)
    assert await companies.get("acme") == before


async def test_read_only_properties_are_not_asked_for_and_write_only_not_promised(
    companies: CompanyRepository,
) -> None:
    """One schema for what is sent and what is answered (OpenAPI 3.1 4.8.24.3): a required
    read-only ``id`` is not an argument of the body, a write-only ``pin`` not part of the
    answer."""
    account = {
        "type": "object",
        "required": ["id", "name", "pin"],
        "properties": {
            "id": {"type": "string", "readOnly": True},
            "name": {"type": "string"},
            "pin": {"type": "string", "writeOnly": True},
        },
    }
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Accounts", "version": "1"},
        "paths": {
            "/accounts": {
                "post": {
                    "operationId": "openAccount",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/A"}}
                        }
                    },
                    "responses": {
                        "201": {
                            "description": "Opened.",
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/A"}}
                            },
                        }
                    },
                }
            }
        },
        "components": {"schemas": {"A": account}},
    }
    await import_openapi(companies, "acme", request(document))
    tool = (await stored_tools(companies))["openAccount"]
    body = tool["input_schema"]["properties"]["body"]
    assert (sorted(body["properties"]), body["required"]) == (["name", "pin"], ["name", "pin"])
    answer = tool["output_schema"]
    assert (sorted(answer["properties"]), answer["required"]) == (["id", "name"], ["id", "name"])


async def test_headers_frontdesk_sets_are_not_arguments(companies: CompanyRepository) -> None:
    """Accept, User-Agent and Authorization are Frontdesk's to send (it asks for JSON, names
    itself, and carries the customer's identity): an optional one is left out, and a
    hand-written provider cannot name one."""
    document = copy.deepcopy(ORDERS_31)
    document["paths"]["/orders"]["get"]["parameters"] += [
        {"name": name, "in": "header", "schema": {"type": "string"}}
        for name in ("Accept", "User-Agent", "Authorization")
    ]
    await import_openapi(companies, "acme", request(document))
    listing = (await stored_tools(companies))["listOrders"]
    assert sorted(listing["input_schema"]["properties"]) == ["X-Request-Id", "limit", "status"]

    written = copy.deepcopy(listing)
    written["provider"]["parameters"].append({"name": "Accept", "in": "header"})
    with pytest.raises(ValueError, match="the Accept header is Frontdesk's to set"):
        ToolDefinition.model_validate(written)


async def test_the_companys_own_choices_for_an_imported_tool_survive_a_reimport(
    companies: CompanyRepository,
) -> None:
    """A timeout set, or a tool switched off, after the import is the company's: importing
    the same document again keeps it, and reports the tool unchanged."""
    await import_openapi(companies, "acme", request(ORDERS_31))
    stored = await companies.get("acme")
    assert stored is not None
    definition = companies.opened(stored)
    for tool in definition["tools"]:
        if tool["name"] == "getOrder":
            tool["timeout"] = 5.0
            tool["enabled"] = False
    await companies.apply([definition])

    again = await import_openapi(companies, "acme", request(ORDERS_31))
    assert "getOrder" in again.unchanged
    assert (again.added, again.changed, again.removed) == ([], [], [])
    kept = (await stored_tools(companies))["getOrder"]
    assert (kept["timeout"], kept["enabled"]) == (5.0, False)
