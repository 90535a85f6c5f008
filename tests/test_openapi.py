"""The OpenAPI document: valid OpenAPI 3.1, served as it is kept, and the same set of
operations as the routes the application serves."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from starlette.routing import Route

from frontdesk.app import Frontdesk

DOCUMENT_BYTES = files("frontdesk").joinpath("openapi.yaml").read_bytes()
DOCUMENT: dict[str, Any] = yaml.safe_load(DOCUMENT_BYTES)
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
# The MCP endpoint is a raw ASGI handler reached before Starlette's router (app._route).
MCP_OPERATIONS = frozenset(
    {("/v1/{tenantKey}/mcp", method) for method in ("post", "get", "delete")}
)


def documented_operations() -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, item in DOCUMENT["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def served_operations(app: Frontdesk) -> set[tuple[str, str]]:
    """Every (path, method) the router serves, in the document's spelling of the tenant key."""
    operations = set(MCP_OPERATIONS)
    for route in app._routes.routes:
        assert isinstance(route, Route), route
        path = route.path.replace("{tenant}", "{tenantKey}")
        # Starlette answers HEAD wherever it answers GET; the document leaves it implied.
        operations.update(
            (path, method.lower()) for method in route.methods or () if method != "HEAD"
        )
    return operations


def test_document_is_valid_openapi_3_1() -> None:
    """The document validates as OpenAPI 3.1, schemas and references included."""
    assert DOCUMENT["openapi"].startswith("3.1.")
    validate(DOCUMENT, cls=OpenAPIV31SpecValidator)


async def test_every_served_route_is_documented_and_every_documented_one_served(
    app: Frontdesk,
) -> None:
    """The document's operations and the application's routes are the same set."""
    served = served_operations(app)
    documented = documented_operations()
    assert served - documented == set(), "served but not documented"
    assert documented - served == set(), "documented but not served"


async def test_every_documented_operation_reaches_a_handler(client: httpx.AsyncClient) -> None:
    """No documented operation falls through to the router, nor answers off-document."""
    astray = {}
    for path, method in sorted(documented_operations()):
        response = await client.request(method.upper(), path.replace("{tenantKey}", "acme"))
        documented = DOCUMENT["paths"][path][method]["responses"]
        fell_through = (response.status_code, response.text) == (404, "Not Found") or (
            response.status_code == 405 and (path, method) != ("/v1/{tenantKey}/mcp", "get")
        )
        if fell_through or str(response.status_code) not in documented:
            astray[f"{method.upper()} {path}"] = response.status_code
    assert astray == {}


async def test_the_service_serves_the_document_it_keeps(client: httpx.AsyncClient) -> None:
    """GET /openapi.yaml answers the packaged file, byte for byte, as YAML."""
    response = await client.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/yaml")
    assert response.content == DOCUMENT_BYTES


def _media_examples() -> list[tuple[str, Any, Any]]:
    examples = []
    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS or "requestBody" not in operation:
                continue
            for media in operation["requestBody"]["content"].values():
                for name, example in media.get("examples", {}).items():
                    examples.append((f"{method} {path} {name}", media["schema"], example["value"]))
    return examples


@pytest.mark.parametrize(
    ("label", "schema", "value"), _media_examples(), ids=[e[0] for e in _media_examples()]
)
def test_request_examples_fit_their_schemas(label: str, schema: Any, value: Any) -> None:
    """Each request body example is valid against the schema it illustrates."""
    wrapper = {**DOCUMENT, "$ref": "#/x-example", "x-example": schema}
    jsonschema.Draft202012Validator(wrapper).validate(value)
