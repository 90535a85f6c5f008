"""Schemathesis against a running Frontdesk, driven by the document it serves at
/openapi.yaml (the packaged file, which a test here proves it serves byte for byte).

Every operation gets a bounded number of generated requests (its examples, coverage
cases and fuzzed ones); every response must be documented, with its content type,
headers and body schema, and no 5xx is allowed anywhere. Tenant keys and client ids are
narrowed to the test companies and to clients registered for the run, so both the real
paths and the 404s are reached.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import yaml
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

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
CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


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


def test_served_document_is_the_packaged_one(fuzzed_service: LiveService) -> None:
    """The running service serves the very document the fuzzing below is generated from."""
    served = httpx.get(f"{fuzzed_service.base_url}/openapi.yaml", timeout=10.0)
    assert served.status_code == 200
    assert served.content == files("frontdesk").joinpath("openapi.yaml").read_bytes()


def test_values_postgresql_cannot_hold_are_refused_not_failed(fuzzed_service: LiveService) -> None:
    """A NUL in a client id is a 4xx on every backend, and one in a client name is cleaned
    out before it is stored: never a PostgreSQL 500."""
    with httpx.Client(base_url=f"{fuzzed_service.base_url}/v1/initech/oauth") as client:
        token = client.post("/token", data={"grant_type": "refresh_token", "client_id": "a\x00"})
        revoke = client.post("/revoke", data={"token": "t", "client_id": "a\x00"})
        authorize = client.get("/authorize", params={"client_id": "a\x00"})
        register = client.post(
            "/register", json={"redirect_uris": [REDIRECT_URI], "client_name": "a\x00"}
        )
    assert (token.status_code, revoke.status_code) == (401, 401)
    assert authorize.status_code == 400
    assert register.status_code == 201, register.text
    assert register.json()["client_name"] == "a"


@schema.parametrize()
def test_the_running_service_conforms_to_its_document(
    case: schemathesis.Case[Any], fuzzed_service: LiveService, client_ids: dict[str, str]
) -> None:
    """Every generated request gets a documented, well-formed answer and never a 5xx."""
    with_real_client_ids(case, client_ids)
    case.call_and_validate(base_url=fuzzed_service.base_url, checks=CHECKS, timeout=10)
