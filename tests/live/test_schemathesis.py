"""Schemathesis against a running Frontdesk, driven by the document it serves at
/openapi.yaml (the packaged file, which a test here proves it serves byte for byte).

Every operation gets a bounded number of generated requests (its examples, coverage
cases and fuzzed ones), held to every check schemathesis has: no 5xx anywhere; every
response documented, with its content type, headers and body schema; a request the
document admits is served and one it refuses is refused; a method a path does not list
is 405 with an Allow that names exactly what it lists; answers within MAX_RESPONSE_SECONDS.
Tenant keys and client ids are narrowed to the test companies and to clients registered
for the run, so both the real paths and the 404s are reached.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import schemathesis
import yaml
from schemathesis.checks import CHECKS, load_all_checks

from tests.live.conftest import LiveService, running_service

pytestmark = pytest.mark.live

# initech and demo: sign-in (dev login); acme: no sign-in; strict: 3 requests a minute on
# MCP, so 429 is reached; nobody: no such company. The coverage phase varies everything else
# with the first value, so it comes first: a company with sign-in, where every path is real.
TENANTS = ["initech", "demo", "acme", "strict", "nobody"]
SIGNIN_TENANTS = ["initech", "demo"]
REDIRECT_URI = "http://127.0.0.1:33418/callback"
UNREGISTERED_REDIRECT_URI = "https://elsewhere.example/callback"
# Unknown clients: a plausible id, and one with a NUL, which PostgreSQL cannot hold.
UNKNOWN_CLIENTS = ["fdc_unknown", "fdc_\x00"]
# Client ids are minted at registration; the document names them by these placeholders.
CLIENT_PLACEHOLDERS = {"initech": "initech-client", "demo": "demo-client"}
MAX_EXAMPLES = 25
MODERN_VERSION = "2026-07-28"
# The params field each method's Mcp-Name header repeats (MCP 2026-07-28).
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# Generous for two shared cores; every answer here is local work or a SQL round trip.
MAX_RESPONSE_SECONDS = 5.0
# positive_data_acceptance holds that a request the document admits is served. Where the
# request names something only the service issues, which no fuzzer can know, the contract
# answers 400 to a well-formed one: an authorization code or a refresh token at the token
# endpoint (interface 4.5 and 7.2; RFC 6749 5.2, invalid_grant); a client and redirect URI
# pair at authorize (interface 4.3 and 7.2; RFC 6749 4.1.2.1: never redirect to an unverified
# URI); the sign-in signed by the service that the browser steps carry (`flow`, `state`:
# a forged one is the 400 page). For these operations 400 joins what the check accepts;
# every other status is still held to it, and every other check applies unchanged.
SERVICE_ISSUED_REFERENCES = ["token", "authorize", "consent", "loginForm", "loginSubmit"]
SERVICE_ISSUED_REFERENCES += ["loginCallback"]
# The console's sign-in carries its own signed state (console.signin), as the customers' does.
SERVICE_ISSUED_REFERENCES += ["consoleDevLoginForm", "consoleDevLogin", "consoleCallback"]
ACCEPTED_WITH_UNKNOWABLE_REFERENCES = ["2xx", "3xx", "400", "401", "403", "404", "409", "429"]
# negative_data_rejection holds that a request the document refuses gets a 4xx. Authorize
# refuses some to the client instead, once the client and its redirect URI are known good:
# a 303 to that URI carrying `error` (RFC 6749 section 4.1.2.1; e.g. a code_challenge_method
# other than S256 is invalid_request). 303 joins the statuses the check takes for authorize,
# and every such 303 must carry an error (refused_to_the_client, below).
REJECTED = ["400", "401", "403", "404", "405", "406", "409", "415", "422", "428", "429", "5xx"]
REJECTED_AT_AUTHORIZE = [*REJECTED, "303"]
AUTHORIZE_LABEL = "GET /v1/{tenantKey}/oauth/authorize"


def checks_of(operation_id: str) -> dict[str, Any]:
    checks: dict[str, Any] = {}
    if operation_id in SERVICE_ISSUED_REFERENCES:
        checks["positive_data_acceptance"] = {
            "expected-statuses": ACCEPTED_WITH_UNKNOWABLE_REFERENCES
        }
    if operation_id == "authorize":
        checks["negative_data_rejection"] = {"expected-statuses": REJECTED_AT_AUTHORIZE}
    return checks


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def fuzzed_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    """A service of its own, so the fuzzing spends no rate limit another live test counts on."""
    backend: str = request.param
    workdir: Path = tmp_path_factory.mktemp(f"schemathesis-{backend}")
    if backend == "sqlite":
        database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    else:
        database_url = str(request.getfixturevalue("live_postgres_url"))
    # Registrations are limited per address; the fuzzer is one address sending hundreds.
    extra_env = {"FRONTDESK_REGISTRATION_RATE_LIMIT": "10000/minute"}
    with running_service(backend, database_url, workdir, extra_env=extra_env) as service:
        yield service


def narrowed(document: dict[str, Any]) -> dict[str, Any]:
    """The document with tenant keys, client ids and redirect URIs drawn from this run's."""
    components = document["components"]
    components["parameters"]["TenantKey"]["schema"] = {"type": "string", "enum": TENANTS}
    clients = {"type": "string", "enum": [*CLIENT_PLACEHOLDERS.values(), *UNKNOWN_CLIENTS]}
    for form in ("TokenRequest", "RevocationRequest"):
        components["schemas"][form]["properties"]["client_id"] = clients
    authorize = document["paths"]["/v1/{tenantKey}/oauth/authorize"]["get"]
    for parameter in authorize["parameters"]:
        if parameter["name"] == "client_id":
            parameter["schema"] = clients
        elif parameter["name"] == "redirect_uri":
            parameter["schema"] = {
                "type": "string",
                "enum": [REDIRECT_URI, UNREGISTERED_REDIRECT_URI],
            }
    return document


# The packaged document (test_served_document_is_the_packaged_one proves the service serves
# exactly this), loaded at collection so that every operation is a test of its own.
schema = schemathesis.openapi.from_dict(
    narrowed(yaml.safe_load(files("frontdesk").joinpath("openapi.yaml").read_bytes())),
    config=schemathesis.Config.from_dict(
        {
            "generation": {"max-examples": MAX_EXAMPLES, "database": "none"},
            "phases": {"stateful": {"enabled": False}},
            "checks": {"max_response_time": MAX_RESPONSE_SECONDS},
            "operations": [
                {"include-operation-id": operation_id, "checks": checks_of(operation_id)}
                for operation_id in SERVICE_ISSUED_REFERENCES
            ],
        }
    ),
)


@pytest.fixture(scope="module")
def client_ids(fuzzed_service: LiveService) -> dict[str, str]:
    """A client registered at each company with sign-in, by the placeholder that stands for it."""
    registered = {}
    with httpx.Client(base_url=fuzzed_service.base_url, timeout=10.0) as client:
        for tenant, placeholder in CLIENT_PLACEHOLDERS.items():
            response = client.post(
                f"/v1/{tenant}/oauth/register",
                json={"redirect_uris": [REDIRECT_URI], "client_name": "schemathesis"},
            )
            assert response.status_code == 201, response.text
            registered[placeholder] = response.json()["client_id"]
    return registered


def with_real_client_ids(case: schemathesis.Case[Any], client_ids: dict[str, str]) -> None:
    """Swap the placeholders the document was narrowed to for the clients registered."""
    for fields in (case.query, case.body):
        if not isinstance(fields, dict):
            continue
        value = fields.get("client_id")
        if isinstance(value, str):
            fields["client_id"] = client_ids.get(value, value)
        elif isinstance(value, list):
            # A parameter given twice (the coverage phase tries it): swap each.
            fields["client_id"] = [
                client_ids.get(item, item) if isinstance(item, str) else item for item in value
            ]


def with_modern_envelope(case: schemathesis.Case[Any]) -> None:
    """At MCP 2026-07-28 each message carries params._meta, and a single request the
    Mcp-Method and Mcp-Name headers that repeat its body (postMcp's description): rules
    that tie the body to a header, which OpenAPI cannot state. A request generated to be
    valid gets them, so that the checks judge the request it was generated to be."""
    headers = case.headers
    if (
        case.operation.label != "POST /v1/{tenantKey}/mcp"
        or headers is None
        or headers.get("MCP-Protocol-Version") != MODERN_VERSION
        or case.meta is None
        or not case.meta.generation.mode.is_positive
    ):
        return
    # A copy: an example's body is one object, shared by every case made from it.
    body: Any = copy.deepcopy(case.body)
    case.body = body
    for message in body if isinstance(body, list) else [body]:
        message.setdefault("params", {})["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    if isinstance(body, dict):
        method = body["method"]
        headers["Mcp-Method"] = routing_header(method)
        name = body["params"].get(NAME_FIELDS.get(method, ""))
        if isinstance(name, str):
            headers["Mcp-Name"] = routing_header(name)


def routing_header(value: str) -> str:
    """The value as a routing header carries it: as is when it can, else in base64."""
    if value.isascii() and value.isprintable() and value == value.strip(" "):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def test_served_document_is_the_packaged_one(fuzzed_service: LiveService) -> None:
    """The running service serves the very document the fuzzing below is generated from."""
    served = httpx.get(f"{fuzzed_service.base_url}/openapi.yaml", timeout=10.0)
    assert served.status_code == 200
    assert served.content == files("frontdesk").joinpath("openapi.yaml").read_bytes()


def test_every_check_schemathesis_has_is_on() -> None:
    """No check of the installed schemathesis is left out, one an upgrade adds included."""
    load_all_checks()
    for result in schema.get_all_operations():
        operation = cast(Any, result).ok()
        config = schema.config.checks_config_for(operation=operation)
        off = [name for name in CHECKS.get_all_names() if not config.get_by_name(name=name).enabled]
        assert off == [], operation.label
        assert config.max_response_time.enabled


def test_values_postgresql_cannot_hold_are_refused_not_failed(fuzzed_service: LiveService) -> None:
    """A NUL in a client id or a client name is a 4xx on every backend: never a PostgreSQL
    500."""
    with httpx.Client(base_url=f"{fuzzed_service.base_url}/v1/initech/oauth") as client:
        token = client.post("/token", data={"grant_type": "refresh_token", "client_id": "a\x00"})
        revoke = client.post("/revoke", data={"token": "t", "client_id": "a\x00"})
        authorize = client.get("/authorize", params={"client_id": "a\x00"})
        register = client.post(
            "/register", json={"redirect_uris": [REDIRECT_URI], "client_name": "a\x00"}
        )
    assert (token.status_code, revoke.status_code) == (401, 401)
    assert authorize.status_code == 400
    assert register.status_code == 400, register.text
    assert register.json()["error"] == "invalid_client_metadata"


@schema.parametrize()
def test_the_running_service_conforms_to_its_document(
    case: schemathesis.Case[Any], fuzzed_service: LiveService, client_ids: dict[str, str]
) -> None:
    """Every generated request gets the answer the document gives it, by every check."""
    with_real_client_ids(case, client_ids)
    with_modern_envelope(case)
    # No list of checks: every one the configuration enables, which is all of them.
    response = case.call_and_validate(base_url=fuzzed_service.base_url, timeout=10)
    refused_to_the_client(case, response)


def refused_to_the_client(case: schemathesis.Case[Any], response: Any) -> None:
    """A request the document refuses that authorize answers 303 went back to the client
    with an error, never on to the sign-in (REJECTED_AT_AUTHORIZE)."""
    negative = case.meta is not None and not case.meta.generation.mode.is_positive
    if case.operation.label != AUTHORIZE_LABEL or response.status_code != 303 or not negative:
        return
    locations = [
        v for name, values in response.headers.items() if name.lower() == "location" for v in values
    ]
    location = next(iter(locations), "")
    assert "error" in parse_qs(urlsplit(location).query), location
