"""Enterprise-managed sign-in (oauth.assertion_grant): a client trades an ID-JAG from a test
enterprise identity provider (real keys, its JWKS over real HTTPS) for a token with one
plain POST, then calls a personal tool with the real MCP Python SDK, no browser; and each
check the MCP ``ext-auth`` extension asks of the assertion refuses, ``invalid_grant``,
what fails it."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from frontdesk.companies.enterprise_providers import EnterpriseProvider
from frontdesk.oauth import token as token_endpoint
from frontdesk.store.tables import identity_assertions
from tests.conftest import BASE_URL
from tests.oauth import flows
from tests.oauth.test_metrics_events import value
from tests.support.enterprise_idp import EnterpriseIdp, new_key
from tests.support.https_documents import HttpsDocuments, run_https_documents
from tests.support.logs import captured_logs
from tests.support.serving import Serve, Served

pytestmark = pytest.mark.anyio

TENANT = "acme-enterprise"
PLAIN = "plain-signin"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG = "urn:ietf:params:oauth:grant-profile:id-jag"
LOOPBACK = ["127.0.0.0/8"]
WHOAMI = {
    "name": "whoami",
    "description": "Says who is asking.",
    "access": "personal",
    "annotations": {
        "title": "Who am I",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "provider": {"type": "python", "target": "tests.fixtures.tools:whoami"},
}


def company(idp: EnterpriseIdp, **provider: Any) -> dict[str, Any]:
    return {
        "tenant_key": TENANT,
        "name": "Acme Enterprise",
        "signin": {"login": {"type": "dev"}, "enterprise_providers": [idp.provider(**provider)]},
        "tools": [WHOAMI],
    }


PLAIN_COMPANY = {
    "tenant_key": PLAIN,
    "name": "Plain Sign-in",
    "signin": {"login": {"type": "dev"}},
    "tools": [WHOAMI],
}


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpsDocuments]:
    """The tests' HTTPS server, trusted by the app's outbound client through SSL_CERT_FILE."""
    with run_https_documents(tmp_path) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        yield server


@pytest.fixture
def idp(documents: HttpsDocuments) -> EnterpriseIdp:
    return EnterpriseIdp(documents)


@dataclass
class Enterprise:
    served: Served
    idp: EnterpriseIdp
    client_id: str

    @property
    def client(self) -> httpx.AsyncClient:
        return self.served.client

    def assertion(self, **changes: Any) -> str:
        values: dict[str, Any] = {
            "client_id": self.client_id,
            "audience": flows.issuer(TENANT),
            "resource": flows.mcp_url(TENANT),
        }
        values.update(changes)
        return self.idp.assertion(**values)

    async def exchange(self, assertion: str, **form: str) -> httpx.Response:
        return await exchange(self.client, self.client_id, assertion, **form)


async def exchange(
    client: httpx.AsyncClient, client_id: str, assertion: str, tenant: str = TENANT, **form: str
) -> httpx.Response:
    body = {"grant_type": JWT_BEARER, "assertion": assertion, "client_id": client_id, **form}
    return await client.post(flows.oauth_path("token", tenant), data=body)


async def start(
    serve: Serve, idp: EnterpriseIdp, settings: dict[str, Any] | None = None, **provider: Any
) -> Enterprise:
    served = await serve(
        company(idp, **provider), PLAIN_COMPANY, backend_allowed_networks=LOOPBACK, **settings or {}
    )
    return Enterprise(served, idp, await flows.register(served.client, TENANT))


@pytest.fixture
async def enterprise(serve: Serve, idp: EnterpriseIdp) -> Enterprise:
    return await start(serve, idp)


def refused(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "invalid_grant", body
    assert reason in body["error_description"], body


# Discovery -------------------------------------------------------------------------------


async def test_only_a_company_that_trusts_an_issuer_advertises_the_grant(
    enterprise: Enterprise,
) -> None:
    """Extension section 6: the grant type and the id-jag profile in the metadata of a
    company with enterprise providers, neither elsewhere, where the grant is unsupported."""
    path = "/.well-known/oauth-authorization-server/v1/{}/oauth"
    trusting = (await enterprise.client.get(path.format(TENANT))).json()
    plain = (await enterprise.client.get(path.format(PLAIN))).json()

    assert JWT_BEARER in trusting["grant_types_supported"]
    assert trusting["authorization_grant_profiles_supported"] == [ID_JAG]
    assert plain["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert "authorization_grant_profiles_supported" not in plain
    client_id = await flows.register(enterprise.client, PLAIN)
    assertion = enterprise.idp.assertion(
        client_id=client_id, audience=flows.issuer(PLAIN), resource=flows.mcp_url(PLAIN)
    )
    answer = await exchange(enterprise.client, client_id, assertion, PLAIN)
    assert (answer.status_code, answer.json()["error"]) == (400, "unsupported_grant_type")


# The flow --------------------------------------------------------------------------------


async def test_an_id_jag_buys_a_token_that_the_sdk_calls_a_personal_tool_with(
    serve: Serve, idp: EnterpriseIdp, database_url: str
) -> None:
    """One POST, no browser: an access token (no refresh token by default) for the customer
    the assertion names, which the MCP Python SDK then calls whoami with, on either
    database."""
    enterprise = await start(serve, idp, {"database_url": database_url})
    answer = await enterprise.exchange(enterprise.assertion())

    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "Bearer"
    assert body["scope"] == "profile email"
    assert "refresh_token" not in body
    app = enterprise.served.app
    headers = {"authorization": f"Bearer {body['access_token']}"}
    async with (
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url=BASE_URL, headers=headers
        ) as http,
        Client(streamable_http_client(flows.mcp_url(TENANT), http_client=http)) as client,
    ):
        result = await client.call_tool("whoami", {})
    assert result.is_error is False, result
    who = result.structured_content
    assert who is not None
    assert who["guest"] is False
    # A customer of this issuer alone: its sub behind a tag of the issuer (draft section 6).
    provider = EnterpriseProvider.model_validate(enterprise.idp.provider())
    assert who["subject"] == provider.customer_subject("U019488227") != "U019488227"
    assert who["email"] == "pat@enterprise.test"
    assert who["scopes"] == ["email", "profile"]
    scraped = (await enterprise.client.get("/metrics")).text
    issued = value(
        scraped, "frontdesk_tokens_issued_total", company=TENANT, grant_type="jwt-bearer"
    )
    assert issued == 1


async def test_the_same_sub_is_the_same_customer_and_login_subjects_are_shared_on_request(
    serve: Serve, idp: EnterpriseIdp
) -> None:
    """Two assertions for one sub reach one customer; with ``subjects: login`` the
    customer is the one the company's own login knows by that sub."""
    enterprise = await start(serve, idp, subjects="login")
    first = (await enterprise.exchange(enterprise.assertion())).json()["access_token"]
    second = (await enterprise.exchange(enterprise.assertion())).json()["access_token"]

    one = await flows.whoami_result(enterprise.client, first, TENANT)
    two = await flows.whoami_result(enterprise.client, second, TENANT)
    assert one == two
    assert one["subject"] == "U019488227"


async def test_a_refresh_token_only_where_the_company_allows_it(
    serve: Serve, idp: EnterpriseIdp
) -> None:
    enterprise = await start(serve, idp, refresh_tokens=True)
    body = (await enterprise.exchange(enterprise.assertion())).json()
    assert body["refresh_token"]

    refreshed = await enterprise.client.post(
        flows.oauth_path("token", TENANT),
        data={
            "grant_type": "refresh_token",
            "refresh_token": body["refresh_token"],
            "client_id": enterprise.client_id,
        },
    )
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["scope"] == "profile email"


async def test_the_scopes_are_those_asked_asserted_and_allowed(
    serve: Serve, idp: EnterpriseIdp
) -> None:
    """Extension 7.2.1: the intersection; none in common is refused."""
    enterprise = await start(serve, idp, scopes=["email"])
    asked = await enterprise.exchange(enterprise.assertion(), scope="profile email openid")
    assert asked.json()["scope"] == "email"
    token = asked.json()["access_token"]
    who = await flows.whoami_result(enterprise.client, token, TENANT)
    assert (who["scopes"], who["name"]) == (["email"], None)

    refused(
        await enterprise.exchange(enterprise.assertion(), scope="profile"),
        "no scope asked for is both asserted and allowed",
    )
    refused(
        await enterprise.exchange(enterprise.assertion(scope="profile")),
        "no scope asked for is both asserted and allowed",
    )


async def test_a_tools_own_scope_is_granted_only_when_asserted(
    serve: Serve, idp: EnterpriseIdp
) -> None:
    """A company's per-tool scopes (companies.tool_scopes) are offered to an ID-JAG as to a
    consent: the assertion's ``orders:read`` opens the tool that needs it, and a token
    whose assertion did not name it gets the step-up challenge there."""
    orders = {**WHOAMI, "name": "order_status", "scope": "orders:read"}
    trusting = {**company(idp), "tools": [WHOAMI, orders]}
    served = await serve(trusting, backend_allowed_networks=LOOPBACK)
    enterprise = Enterprise(served, idp, await flows.register(served.client, TENANT))

    wide = await enterprise.exchange(enterprise.assertion(scope="email orders:read"))
    narrow = await enterprise.exchange(enterprise.assertion(scope="email"))

    assert wide.json()["scope"] == "email orders:read"
    assert narrow.json()["scope"] == "email"
    call = flows.tool_call("order_status")
    opened = await flows.mcp(enterprise.client, call, TENANT, token=wide.json()["access_token"])
    assert opened.status_code == 200, opened.text
    assert opened.json()["result"]["isError"] is False
    closed = await flows.mcp(enterprise.client, call, TENANT, token=narrow.json()["access_token"])
    assert closed.status_code == 401
    assert 'error="insufficient_scope"' in closed.headers["www-authenticate"]


# Refusals --------------------------------------------------------------------------------

NOW = int(time.time())
CLAIMS_REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "typ_not_id_jag": ({"header": {"typ": "JWT"}}, "typ must be oauth-id-jag+jwt"),
    "typ_missing": ({"header": {"typ": None}}, "typ must be oauth-id-jag+jwt"),
    "issuer_untrusted": ({"iss": "https://other-idp.test"}, "issuer is not trusted"),
    "audience_other": ({"audience": "https://elsewhere.test/oauth"}, "aud is not this"),
    "resource_other": ({"resource": "https://elsewhere.test/mcp"}, "resource is not this"),
    "resource_missing": ({"resource": None}, "resource is not this"),
    "client_other": ({"client_id": "another-client"}, "client_id is not the client"),
    "expired": ({"exp": NOW - 120, "iat": NOW - 400}, "has expired"),
    "issued_in_the_future": ({"iat": NOW + 600, "exp": NOW + 900}, "issued in the future"),
    "too_long_lived": ({"exp": NOW + 7200}, "valid for too long"),
    "exp_missing": ({"exp": None}, "must carry exp and iat"),
    "exp_not_a_number": ({"exp": float("nan")}, "not a signed JWT"),
    "iat_missing": ({"iat": None}, "must carry exp and iat"),
    "jti_missing": ({"jti": None}, "must carry a jti"),
    "sub_missing": ({"sub": None}, "subject cannot be used"),
}


@pytest.mark.parametrize("case", CLAIMS_REFUSED, ids=list(CLAIMS_REFUSED))
async def test_an_assertion_failing_a_check_is_refused(enterprise: Enterprise, case: str) -> None:
    changes, reason = CLAIMS_REFUSED[case]
    # Time moves on between collection and the test: the times are taken again now.
    shift = int(time.time()) - NOW
    changes = {
        name: value + shift if name in ("exp", "iat") and value is not None else value
        for name, value in changes.items()
    }
    refused(await enterprise.exchange(enterprise.assertion(**changes)), reason)


async def test_a_signature_by_another_key_under_a_published_kid_is_refused(
    enterprise: Enterprise,
) -> None:
    impostor = new_key("ES256", enterprise.idp.key.kid or "es-1")
    refused(
        await enterprise.exchange(enterprise.assertion(key=impostor)),
        "signature does not verify",
    )


async def test_an_algorithm_off_the_issuers_list_is_refused(
    serve: Serve, idp: EnterpriseIdp
) -> None:
    """Extension 7.4.1: an explicit allow-list; an RS256 assertion from an issuer allowed
    ES256 only is refused though its key is published, and ``alg: none`` always is."""
    rsa = new_key("RS256", "rs-1")
    idp.publish(idp.key, rsa)
    enterprise = await start(serve, idp, algorithms=["ES256"])
    refused(
        await enterprise.exchange(enterprise.assertion(key=rsa)),
        "algorithm is not allowed",
    )
    unsigned = ".".join(
        [
            _segment({"typ": "oauth-id-jag+jwt", "alg": "none"}),
            enterprise.assertion().split(".")[1],
            "",
        ]
    )
    refused(await enterprise.exchange(unsigned), "algorithm is not allowed")


async def test_a_key_the_issuer_does_not_publish_is_refused(enterprise: Enterprise) -> None:
    stranger = new_key("ES256", "never-published")
    refused(
        await enterprise.exchange(enterprise.assertion(key=stranger)),
        "key is not among its issuer's keys",
    )


async def test_something_that_is_no_jwt_is_refused(enterprise: Enterprise) -> None:
    refused(await enterprise.exchange("not-a-jwt"), "not a signed JWT")


async def test_an_assertion_is_spent_once_on_every_instance(
    serve: Serve, idp: EnterpriseIdp, database_url: str
) -> None:
    """Extension 7.4.2: a jti is refused again until the assertion expires, here and at a
    second instance on the same database (SQLite and PostgreSQL); only a hash is kept."""
    shared = {"database_url": database_url}
    enterprise = await start(serve, idp, shared)
    other = await serve(company(idp), PLAIN_COMPANY, backend_allowed_networks=LOOPBACK, **shared)
    assertion = enterprise.assertion()

    assert (await enterprise.exchange(assertion)).status_code == 200
    refused(await enterprise.exchange(assertion), "used before")
    refused(await exchange(other.client, enterprise.client_id, assertion), "used before")
    async with enterprise.served.app.services.database.engine.connect() as connection:
        rows = (await connection.execute(identity_assertions.select())).all()
    assert len(rows) == 1
    [row] = rows
    assert len(row.assertion_hash) == 64
    assert row.assertion_hash not in assertion


async def test_of_concurrent_presentations_exactly_one_is_answered(
    serve: Serve, idp: EnterpriseIdp, database_url: str
) -> None:
    shared = {"database_url": database_url}
    enterprise = await start(serve, idp, shared)
    other = await serve(company(idp), PLAIN_COMPANY, backend_allowed_networks=LOOPBACK, **shared)
    assertion = enterprise.assertion()
    clients = [enterprise.client, other.client] * 4

    answers = await asyncio.gather(
        *(exchange(client, enterprise.client_id, assertion) for client in clients)
    )

    assert sorted(answer.status_code for answer in answers) == [200] + [400] * 7
    for answer in answers:
        if answer.status_code == 400:
            refused(answer, "used before")


# Keys ------------------------------------------------------------------------------------


async def test_a_new_kid_refetches_the_keys_once(enterprise: Enterprise) -> None:
    """Key rotation: an assertion under a kid the kept set lacks fetches the set again and
    verifies; another unknown kid soon after does not fetch again."""
    idp = enterprise.idp
    assert (await enterprise.exchange(enterprise.assertion())).status_code == 200
    assert idp.fetches() == 1
    rotated = new_key("ES256", "es-2")
    idp.publish(rotated)

    assert (await enterprise.exchange(enterprise.assertion(key=rotated))).status_code == 200
    assert idp.fetches() == 2
    refused(
        await enterprise.exchange(enterprise.assertion(key=new_key("ES256", "es-3"))),
        "key is not among",
    )
    assert idp.fetches() == 2
    # The withdrawn key is trusted no more: the set was replaced whole.
    refused(await enterprise.exchange(enterprise.assertion()), "key is not among")


async def test_keys_that_cannot_be_fetched_answer_503(
    serve: Serve, idp: EnterpriseIdp, documents: HttpsDocuments
) -> None:
    """The assertion may be good: the client is told to retry, not to discard it."""
    enterprise = await start(serve, idp, jwks_uri=documents.url("/nothing-here.json"))
    answer = await enterprise.exchange(enterprise.assertion())
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"] == "temporarily_unavailable"
    assert "retry-after" in answer.headers


async def test_a_key_set_holding_a_private_key_is_not_trusted(
    serve: Serve, idp: EnterpriseIdp, documents: HttpsDocuments
) -> None:
    """A provider that publishes a private key has given it away: none of its set is used,
    and a failed fetch is not repeated for every assertion meanwhile."""
    documents.serve_json("/leaky.json", {"keys": [idp.key.as_dict(private=True)]})
    enterprise = await start(serve, idp, jwks_uri=documents.url("/leaky.json"))

    for _ in range(3):
        answer = await enterprise.exchange(enterprise.assertion())
        assert answer.status_code == 503, answer.text
    assert documents.requests("/leaky.json") == 1


async def test_no_assertion_reaches_a_log_line(
    enterprise: Enterprise, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frontdesk.login import issuer_keys

    good, bad = enterprise.assertion(), enterprise.assertion(aud="https://elsewhere.test")
    with captured_logs(monkeypatch, token_endpoint, issuer_keys) as logs:
        assert (await enterprise.exchange(good)).status_code == 200
        refused(await enterprise.exchange(bad), "aud")
    assert any(event["event"] == "tokens_issued" for event in logs)
    written = orjson.dumps(logs, default=str).decode()
    for assertion in (good, bad):
        for part in assertion.split("."):
            assert part not in written


def _segment(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(value)).rstrip(b"=").decode()
