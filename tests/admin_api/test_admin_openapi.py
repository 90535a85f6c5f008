"""The admin API's OpenAPI document (admin_api/openapi.json): valid OpenAPI 3.1, served as
kept, and the same set of operations as the routes under /admin/v1."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import httpx
import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from starlette.routing import Route

from frontdesk.app import Frontdesk
from tests.admin_api.conftest import admin

pytestmark = [pytest.mark.anyio]

DOCUMENT_BYTES = files("frontdesk.admin_api").joinpath("openapi.json").read_bytes()
DOCUMENT: dict[str, Any] = json.loads(DOCUMENT_BYTES)
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "patch"})
# Route parameters in the document's spelling.
SPELLING = {"{tenant}": "{tenantKey}", "{clientId:path}": "{clientId}"}


def documented() -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, item in DOCUMENT["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def served(app: Frontdesk) -> set[tuple[str, str]]:
    operations: set[tuple[str, str]] = set()
    for route in app._routes.routes:
        assert isinstance(route, Route)
        if not route.path.startswith("/admin/v1/") or route.path == "/admin/v1/openapi.json":
            continue
        path = route.path.removeprefix("/admin/v1")
        for ours, theirs in SPELLING.items():
            path = path.replace(ours, theirs)
        operations.update(
            (path, method.lower())
            for method in route.methods or ()
            if method not in ("HEAD", "OPTIONS")
        )
    return operations


def test_document_is_valid_openapi_3_1() -> None:
    assert DOCUMENT["openapi"].startswith("3.1.")
    validate(DOCUMENT, cls=OpenAPIV31SpecValidator)


async def test_every_route_is_documented_and_every_documented_one_served(app: Frontdesk) -> None:
    assert served(app) - documented() == set(), "served but not documented"
    assert documented() - served(app) == set(), "documented but not served"


async def test_every_documented_operation_answers_a_documented_status(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    """With an operator key, on a company that exists, each operation answers a status its
    document lists (without a body where one is needed: a documented 4xx)."""
    astray = {}
    for path, method in sorted(documented()):
        filled = (
            path.replace("{tenantKey}", "initech")
            .replace("{name}", "echo")
            .replace("{clientId}", "fdc_unknown")
            .replace("{grantId}", "1")
        )
        if method == "delete" and path == "/companies/{tenantKey}":
            filled = "/companies/globex"
        response = await admin(client, method.upper(), filled, operator_key)
        if str(response.status_code) not in DOCUMENT["paths"][path][method]["responses"]:
            astray[f"{method.upper()} {path}"] = response.status_code
    assert astray == {}


async def test_the_document_is_served_as_kept(client: httpx.AsyncClient) -> None:
    response = await client.get("/admin/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == DOCUMENT_BYTES
