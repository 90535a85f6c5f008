"""Schemathesis against the admin API of a running Frontdesk, driven by the document it
serves at /admin/v1/openapi.json, once with an operator key and once with a company key.

Every operation gets a bounded number of generated requests, held to every check
schemathesis has (as tests/live/test_schemathesis.py does for the public interface): no
5xx; every response documented, with its content type, headers and body schema; a
request without the key refused (401); a request the document refuses refused with a 4xx;
a method a path does not list is 405; answers within MAX_RESPONSE_SECONDS.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.specs.openapi.schemas import OpenApiSchema

from tests.live.conftest import (
    LiveService,
    _frontdesk_command,
    running_service,
    service_environment,
)

pytestmark = pytest.mark.live

# The company key is acme's; initech is another company (404 to that key), nobody none at
# all. The operator key's run leaves acme alone: deleting a company revokes its keys, and the
# company key's run needs its key. Coverage varies everything else with the first value.
OPERATOR_TENANTS = ["initech", "globex", "nobody"]
COMPANY_TENANTS = ["acme", "initech", "nobody"]
MAX_EXAMPLES = 20
MAX_RESPONSE_SECONDS = 5.0
# positive_data_acceptance holds that a request the document admits is served. The document
# cannot state what only the stored data decides, which the contract answers with a 4xx:
# whether the company, tool, client or grant exists (404), whether the key may create or
# delete it (403), and whether a company document is one the companies file admits (422:
# an importable python target, a valid JSON Schema, a known login type...).
ACCEPTED = ["2xx", "403", "404", "409", "422"]
# Nor which revision a company is at: an If-Match the fuzzer makes up is a 412, which is also
# the answer, before the body is read, to a request that is invalid besides (RFC 9110
# section 13.2.1 lets the precondition come first).
ACCEPTED += ["412"]
# Nor can it state that a usage range spans at most 3660 days (frontdesk.usage.report):
# a longer one is a 400 there.
RANGE_CHECKED = ["getUsage"]
# negative_data_rejection holds that a request the document refuses gets a 4xx of its usual
# list. A path parameter far longer than the document allows can make the request's head
# longer than FRONTDESK_MAX_HEADER_BYTES: the server answers 431 before any route (RFC 6585).
REJECTED = ["400", "401", "403", "404", "405", "406", "409", "415", "422", "428", "429", "431"]
REJECTED += ["412", "5xx"]


# Nothing listens on port 9 (discard) here: a fetch or a call is refused at once, locally.
LOCAL_URLS = ["https://127.0.0.1:9/openapi.json", "http://127.0.0.1:9/api", "https://[::1]:9/"]


def fuzzed_schema(tenants: list[str]) -> OpenApiSchema:
    """The packaged document, its tenant keys drawn from ``tenants``."""
    document = json.loads(files("frontdesk.admin_api").joinpath("openapi.json").read_bytes())
    # Drawn from ``tenants`` or, as the document says, any valid tenant key: a valid one
    # outside the list is no schema violation (an operator key creates it with PUT).
    tenant_key = document["components"]["parameters"]["TenantKey"]
    tenant_key["schema"] = {"anyOf": [{"type": "string", "enum": tenants}, tenant_key["schema"]]}
    # An import's URLs are drawn from addresses on this machine: as "format: uri" they would
    # be random host names, each one a DNS lookup leaving the machine.
    imports = document["components"]["schemas"]["OpenApiImport"]["properties"]
    for field in ("url", "base_url"):
        imports[field] = {**imports[field], "enum": LOCAL_URLS}
        imports[field].pop("format", None)
    return schemathesis.openapi.from_dict(
        document,
        config=schemathesis.Config.from_dict(
            {
                "generation": {"max-examples": MAX_EXAMPLES, "database": "none"},
                "phases": {"stateful": {"enabled": False}},
                "operations": [
                    {
                        "include-operation-id": operation_id,
                        "checks": {
                            "positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400"]}
                        },
                    }
                    for operation_id in RANGE_CHECKED
                ],
                "checks": {
                    "max_response_time": MAX_RESPONSE_SECONDS,
                    "positive_data_acceptance": {"expected-statuses": ACCEPTED},
                    "negative_data_rejection": {"expected-statuses": REJECTED},
                },
            }
        ),
    )


operator_schema = fuzzed_schema(OPERATOR_TENANTS)
company_schema = fuzzed_schema(COMPANY_TENANTS)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def admin_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveService, dict[str, str]]]:
    """A service of its own (the fuzzing changes and deletes its companies), and a key of
    each kind made with `frontdesk keys create`."""
    backend: str = request.param
    workdir: Path = tmp_path_factory.mktemp(f"admin-schemathesis-{backend}")
    if backend == "sqlite":
        database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    else:
        database_url = str(request.getfixturevalue("live_postgres_url"))
    extra_env = {"FRONTDESK_ADMIN_RATE_LIMIT": "100000/minute"}
    with running_service(backend, database_url, workdir, extra_env=extra_env) as service:
        environment = service_environment(service.public_url, database_url, extra_env)
        keys = {}
        for kind, option in (("operator", ["--operator"]), ("company", ["--company", "acme"])):
            made = subprocess.run(
                [*_frontdesk_command(), "keys", "create", *option],
                env=environment,
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            keys[kind] = made.stdout.splitlines()[-1]
        yield service, keys


def test_served_document_is_the_packaged_one(
    admin_service: tuple[LiveService, dict[str, str]],
) -> None:
    service, _keys = admin_service
    served = httpx.get(f"{service.base_url}/admin/v1/openapi.json", timeout=10.0)
    assert served.status_code == 200
    assert served.content == files("frontdesk.admin_api").joinpath("openapi.json").read_bytes()


def conforms(case: schemathesis.Case[Any], service: LiveService, key: str) -> None:
    # No list of checks: every one the configuration enables, which is all of them.
    case.call_and_validate(
        base_url=f"{service.base_url}/admin/v1",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )


@operator_schema.parametrize()
def test_the_admin_api_conforms_with_an_operator_key(
    case: schemathesis.Case[Any], admin_service: tuple[LiveService, dict[str, str]]
) -> None:
    service, keys = admin_service
    conforms(case, service, keys["operator"])


@company_schema.parametrize()
def test_the_admin_api_conforms_with_a_company_key(
    case: schemathesis.Case[Any], admin_service: tuple[LiveService, dict[str, str]]
) -> None:
    service, keys = admin_service
    conforms(case, service, keys["company"])
