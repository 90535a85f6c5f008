"""A tool's version: stable across the order a file writes things in, changed by each field
a client sees or that says what the tool may do, and which changes widen what it does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from frontdesk.companies.catalog import VERSION_META_KEY, ServedCompany
from frontdesk.companies.definition import CompanyDefinition, ToolDefinition
from frontdesk.companies.tool_versions import (
    definition_hash,
    snapshot_id,
    tool_version,
    versioned_document,
    widens,
)

ANNOTATIONS = {
    "title": "Order status",
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
BASE: dict[str, Any] = {
    "name": "order_status",
    "title": "Order status",
    "description": "The status of one of your orders.",
    "access": "personal",
    "input_schema": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}},
        "required": ["order_id"],
    },
    "output_schema": {"type": "object", "properties": {"status": {"type": "string"}}},
    "annotations": ANNOTATIONS,
    "timeout": 10,
    "provider": {"type": "python", "target": "tests.fixtures.tools:order_status"},
}


def tool(**changes: Any) -> ToolDefinition:
    return ToolDefinition.model_validate({**BASE, **changes})


def reordered(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def test_the_version_is_the_same_whatever_order_the_keys_come_in() -> None:
    assert list(reordered(BASE)) != list(BASE)
    assert tool_version(ToolDefinition.model_validate(reordered(BASE))) == tool_version(tool())
    assert definition_hash(ToolDefinition.model_validate(reordered(BASE))) == definition_hash(
        tool()
    )


def test_the_version_is_a_sha256_of_canonical_json() -> None:
    import hashlib

    document = versioned_document(tool())
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    assert tool_version(tool()) == hashlib.sha256(canonical).hexdigest()


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "order_state"},
        {"title": "Your order"},
        {"description": "The status of one of your orders, and its address."},
        {"access": "public"},
        {"input_schema": {"type": "object", "properties": {"order_id": {"type": "integer"}}}},
        {"output_schema": {"type": "object"}},
        {"annotations": {**ANNOTATIONS, "destructiveHint": True}},
        {"annotations": {**ANNOTATIONS, "title": "Status"}},
        {"annotations": {**ANNOTATIONS, "openWorldHint": True}},
    ],
    ids=lambda changes: next(iter(changes)),
)
def test_each_field_a_client_sees_changes_the_version(changes: dict[str, Any]) -> None:
    assert tool_version(tool(**changes)) != tool_version(tool())


def test_a_scope_of_its_own_changes_the_version() -> None:
    assert tool_version(tool(scope="orders:read")) != tool_version(tool())
    assert tool_version(tool(scope="orders:read")) != tool_version(tool(scope="orders:cancel"))


def test_a_scope_taken_away_or_changed_widens_and_one_newly_required_does_not() -> None:
    open_tool = versioned_document(tool())
    read = versioned_document(tool(scope="orders:read"))
    cancel = versioned_document(tool(scope="orders:cancel"))
    assert widens(read, open_tool)
    assert widens(read, cancel)
    assert not widens(open_tool, read)


def test_what_the_customer_cannot_see_changes_the_definition_hash_not_the_version() -> None:
    slower = tool(timeout=20)
    assert tool_version(slower) == tool_version(tool())
    assert definition_hash(slower) != definition_hash(tool())


@pytest.mark.parametrize(
    "changes",
    [
        {"description": "Also cancels the order if you ask."},
        {"input_schema": {"type": "object", "properties": {"note": {"type": "string"}}}},
        {"annotations": {**ANNOTATIONS, "readOnlyHint": False}},
        {"annotations": {**ANNOTATIONS, "destructiveHint": True}},
        {"annotations": {**ANNOTATIONS, "openWorldHint": True}},
        {"title": "Order status and cancellation"},
    ],
    ids=lambda changes: next(iter(changes)),
)
def test_a_change_that_may_do_more_widens(changes: dict[str, Any]) -> None:
    assert widens(versioned_document(tool()), versioned_document(tool(**changes)))


def test_a_tool_that_now_says_it_only_reads_does_not_widen() -> None:
    writer = tool(annotations={**ANNOTATIONS, "readOnlyHint": False, "destructiveHint": True})
    assert not widens(versioned_document(writer), versioned_document(tool()))
    assert widens(versioned_document(tool()), versioned_document(writer))


def test_the_catalog_lists_tools_by_name_and_names_their_versions_at_2026() -> None:
    company = CompanyDefinition.model_validate(
        {
            "tenant_key": "versions",
            "name": "Versions",
            "tools": [
                {**BASE, "name": "zebra"},
                {**BASE, "name": "apple", "access": "public"},
                {**BASE, "name": "mango"},
            ],
        }
    )
    served = ServedCompany(company, "100/minute")
    listed = json.loads(served.tools_json)["tools"]
    assert [item["name"] for item in listed] == ["apple", "mango", "zebra"]
    assert all(VERSION_META_KEY not in item.get("_meta", {}) for item in listed)
    versioned = json.loads(served.versioned_tools_json)["tools"]
    assert [item["name"] for item in versioned] == ["apple", "mango", "zebra"]
    assert [item["_meta"][VERSION_META_KEY] for item in versioned] == [
        served.tools[name].version for name in ("apple", "mango", "zebra")
    ]
    assert served.personal_versions == {
        "mango": served.tools["mango"].version,
        "zebra": served.tools["zebra"].version,
    }
    assert served.consent_snapshot == snapshot_id(served.personal_versions)


def test_the_definition_hash_leaves_a_providers_secret_out() -> None:
    http = {"type": "http", "url": "https://api.example.com/status", "secret": "s" * 32}
    first = tool(provider=http)
    rotated = tool(provider={**http, "secret": "t" * 32})
    moved = tool(provider={**http, "url": "https://api.example.com/v2/status"})
    assert definition_hash(first) == definition_hash(rotated)
    assert definition_hash(moved) != definition_hash(first)
    assert tool_version(moved) == tool_version(first)
