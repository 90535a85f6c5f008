"""The OpenAPI document: valid OpenAPI 3.1, served as it is kept, the same set of
operations as the routes the application serves, the same Allow on every path, and the
same rules for registration metadata as the service applies."""

from __future__ import annotations

import re
import unicodedata
from importlib.resources import files
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from starlette.routing import Route

from frontdesk.app import Frontdesk
from frontdesk.oauth.client_names import is_hidden
from frontdesk.oauth.errors import InvalidRedirectUri
from frontdesk.oauth.redirects import check_redirect_uri
from frontdesk.unrouted import NO_ROUTE

DOCUMENT_BYTES = files("frontdesk").joinpath("openapi.yaml").read_bytes()
DOCUMENT: dict[str, Any] = yaml.safe_load(DOCUMENT_BYTES)
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
# The MCP endpoint is a raw ASGI handler reached before Starlette's router (app._route).
# GET is no operation of it: always 405 (interface 4.2), like any other method not listed.
MCP_OPERATIONS = frozenset({("/v1/{tenantKey}/mcp", method) for method in ("post", "delete")})
REGISTRATION = DOCUMENT["components"]["schemas"]["ClientRegistrationRequest"]["properties"]


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
        if route.path.startswith("/admin/v1/"):
            continue  # the admin API's own document (tests/admin_api/test_admin_openapi.py)
        path = route.path.replace("{tenant}", "{tenantKey}")
        # Starlette answers HEAD wherever it answers GET, and every path answers OPTIONS
        # (allowed_methods); the document says so once, for all paths.
        operations.update(
            (path, method.lower())
            for method in route.methods or ()
            if method not in ("HEAD", "OPTIONS")
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
        # The router's own 404 (frontdesk.unrouted), in whichever family's body.
        unrouted = response.status_code == 404 and (
            response.text == "Not Found" or NO_ROUTE in response.text
        )
        fell_through = unrouted or response.status_code == 405
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


def allow_of(path: str) -> set[str]:
    """What Allow must name on a documented path: its methods, HEAD with GET, OPTIONS."""
    methods = {method.upper() for method in DOCUMENT["paths"][path] if method in HTTP_METHODS}
    return methods | {"OPTIONS"} | ({"HEAD"} if "GET" in methods else set())


def allow_header(response: httpx.Response) -> set[str]:
    return {method.strip() for method in response.headers["allow"].split(",")}


async def test_a_method_a_path_does_not_list_is_405_naming_every_listed_one(
    client: httpx.AsyncClient,
) -> None:
    """RFC 9110 15.5.6: 405 with Allow naming exactly the path's methods (GET on the MCP
    path included, interface 4.2), also where two routes serve one path (the login form)."""
    wrong = {}
    for path in DOCUMENT["paths"]:
        url = path.replace("{tenantKey}", "initech")
        for method in {"GET", "POST", "DELETE", "PUT", "PATCH"} - allow_of(path):
            response = await client.request(method, url)
            if response.status_code != 405 or allow_header(response) != allow_of(path):
                wrong[f"{method} {path}"] = (response.status_code, response.headers.get("allow"))
    assert wrong == {}


async def test_options_without_a_preflight_is_answered_with_allow(
    client: httpx.AsyncClient,
) -> None:
    """RFC 9110 9.3.7: 200 with the same Allow as a 405, and no content, on every path."""
    wrong = {}
    for path in DOCUMENT["paths"]:
        response = await client.options(path.replace("{tenantKey}", "initech"))
        if (
            response.status_code != 200
            or response.content
            or response.headers.get("content-length") != "0"
            or allow_header(response) != allow_of(path)
        ):
            wrong[path] = (response.status_code, response.headers.get("allow"))
    assert wrong == {}


def test_the_client_name_pattern_refuses_what_the_service_refuses() -> None:
    """Every code point the document's pattern refuses is one oauth.client_names refuses,
    and the reverse; surrogates aside, which no JSON text can carry alone. A newer Unicode
    than the pattern's (14.0) shows here: then the pattern is to be listed again."""
    pattern = re.compile(REGISTRATION["client_name"]["pattern"])
    disagree = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) != "Cs"
        and (pattern.fullmatch(chr(code)) is None) != is_hidden(chr(code))
    ]
    assert disagree == []


ACCEPTED_REDIRECT_URIS = [
    "https://client.example/callback",
    "https://client.example:8443/oauth/callback?tenant=a&x=%20",
    "https://claude.ai/api/mcp/auth_callback",
    "https://x",
    "https://x?only=query",
    "http://127.0.0.1:33418/callback",
    "http://127.255.0.9/cb",
    "http://localhost:6274/oauth/callback",
    "http://[::1]:8080/cb",
    "http://localhost",
    "https://client.example:",
]
REFUSED_REDIRECT_URIS = [
    "http://client.example/callback",
    "https://client.example/cb#fragment",
    "https://user:password@client.example/cb",
    "https://user@client.example/cb",
    "https://client.example:65536/cb",
    "https://client.example:99999/cb",
    "http://127.0.0.256/cb",
    "http://127.0.0.01/cb",
    "http://localhost.example/cb",
    "http://0.0.0.0/cb",
    "https://client.example/a b",
    "https://client.example/\\x",
    "https:///cb",
    "https://",
    "ftp://client.example/cb",
    "javascript:alert(1)",
    "cursor://anysphere.cursor-mcp/oauth/callback",
    "",
]


@pytest.mark.parametrize("uri", ACCEPTED_REDIRECT_URIS)
def test_a_redirect_uri_the_pattern_admits_is_registered(uri: str) -> None:
    """The document's pattern admits it, and so does the service (interface 2.3)."""
    assert re.fullmatch(REGISTRATION["redirect_uris"]["items"]["pattern"], uri)
    check_redirect_uri(uri)


@pytest.mark.parametrize("uri", REFUSED_REDIRECT_URIS)
def test_a_redirect_uri_the_pattern_refuses_is_refused(uri: str) -> None:
    """The document's pattern refuses it, and so does the service for a company with no
    private-use schemes."""
    assert not re.fullmatch(REGISTRATION["redirect_uris"]["items"]["pattern"], uri)
    with pytest.raises(InvalidRedirectUri):
        check_redirect_uri(uri)
