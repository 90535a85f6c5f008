"""Bearer tokens on the MCP endpoint (interface 5.2-5.5, 7.1): who a token speaks for, what a
guest is told, and every token that must be refused with 401."""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
)

from frontdesk.app import Frontdesk
from frontdesk.store.tables import access_tokens
from tests.oauth import flows

# Each test runs on SQLite and PostgreSQL: PostgreSQL has its own statements for these.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

RESOURCE_METADATA = (
    'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource'
    '/v1/initech/mcp"'
)
# RFC 6750 3.1: a request that sent no credentials is told where to sign in, not an error.
GUEST_CHALLENGE = f'{RESOURCE_METADATA}, scope="profile email"'
# OpenAI Apps SDK: ChatGPT reads error and error_description in the result's challenge.
GUEST_CHALLENGE_IN_RESULT = (
    f'{RESOURCE_METADATA}, error="insufficient_scope",'
    ' error_description="Sign in to use this tool", scope="profile email"'
)
SCHEMES = [{"type": "noauth"}, {"type": "oauth2", "scopes": ["profile", "email"]}]
PERSONAL_RESOURCE_AND_PROMPT = """
companies:
  - tenant_key: hooli
    name: Hooli
    signin:
      login: {type: dev}
    resources:
      - uri: hooli://statement
        name: statement
        access: personal
        text: "Your statement."
    prompts:
      - name: review
        access: personal
        messages:
          - role: user
            text: "Review my account."
"""


def assert_token_refused(response: httpx.Response, tenant: str = "initech") -> None:
    """401 with an invalid_token challenge pointing at the company's discovery document."""
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource'
        f'/v1/{tenant}/mcp", error="invalid_token",'
        ' error_description="The access token is invalid, expired or revoked",'
        ' scope="profile email"'
    )
    assert response.json()["error"]["code"] == -32003


# Signed-in customers -----------------------------------------------------------------------


async def test_a_valid_token_reaches_a_personal_tool_as_the_customer(
    client: httpx.AsyncClient,
) -> None:
    """whoami sees the customer's subject, email, name and scopes."""
    tokens = await flows.obtain_tokens(client, email="Peter@Initech.example", name="Peter G")
    result = await flows.whoami_result(client, tokens.access)
    assert result == {
        "guest": False,
        "subject": "dev:peter@initech.example",
        "email": "Peter@Initech.example",
        "name": "Peter G",
        "scopes": ["email", "profile"],
    }


@pytest.mark.parametrize(
    ("scope", "sees_email", "sees_name"),
    [("email", True, False), ("profile", False, True), ("profile email", True, True)],
)
async def test_a_tool_sees_only_what_the_scope_allows(
    client: httpx.AsyncClient, scope: str, sees_email: bool, sees_name: bool
) -> None:
    """email only with the email scope, name only with the profile scope."""
    tokens = await flows.obtain_tokens(client, scope=scope, name="Samir")
    result = await flows.whoami_result(client, tokens.access)
    assert (result["email"] == "peter@initech.example") is sees_email
    assert (result["name"] == "Samir") is sees_name
    assert result["email"] is None or sees_email
    assert result["name"] is None or sees_name
    assert result["scopes"] == sorted(scope.split())
    assert result["subject"] == "dev:peter@initech.example"


async def test_the_bearer_scheme_is_case_insensitive(client: httpx.AsyncClient) -> None:
    """'bearer' in lower case is the same scheme (RFC 7235 2.1)."""
    tokens = await flows.obtain_tokens(client)
    response = await flows.mcp(
        client, flows.tool_call("whoami"), authorization=f"bearer {tokens.access}"
    )
    assert response.status_code == 200, response.text


# Guests ------------------------------------------------------------------------------------


async def test_a_guest_calling_a_personal_tool_gets_401_with_a_challenge_without_error(
    client: httpx.AsyncClient,
) -> None:
    """401 whose WWW-Authenticate names resource_metadata and scope but no error (RFC 6750)."""
    response = await flows.whoami(client, None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == GUEST_CHALLENGE
    reply = response.json()
    assert reply["id"] == 1
    assert reply["result"]["isError"] is True


async def test_the_result_challenge_keeps_error_and_description_for_chatgpt(
    client: httpx.AsyncClient,
) -> None:
    """_meta["mcp/www_authenticate"] carries insufficient_scope and error_description."""
    result = (await flows.whoami(client, None)).json()["result"]
    assert result["_meta"]["mcp/www_authenticate"] == [GUEST_CHALLENGE_IN_RESULT]


@pytest.mark.parametrize(
    ("method", "params"),
    [("resources/read", {"uri": "hooli://statement"}), ("prompts/get", {"name": "review"})],
)
async def test_a_guest_asking_for_a_personal_resource_or_prompt_is_challenged_alike(
    app: Frontdesk,
    client: httpx.AsyncClient,
    tmp_path: Path,
    method: str,
    params: dict[str, str],
) -> None:
    """-32003 with the result's challenge in data; the header has no error, as for tools."""
    await flows.add_companies(app, tmp_path, PERSONAL_RESOURCE_AND_PROMPT)
    response = await flows.mcp(client, flows.rpc(method, params), "hooli")
    assert response.status_code == 401
    hooli = RESOURCE_METADATA.replace("/initech/", "/hooli/")
    assert response.headers["www-authenticate"] == f'{hooli}, scope="profile email"'
    error = response.json()["error"]
    assert error["code"] == -32003
    assert error["data"]["mcp/www_authenticate"] == [
        GUEST_CHALLENGE_IN_RESULT.replace("/initech/", "/hooli/")
    ]


async def test_the_python_sdk_reads_where_and_what_to_sign_in_from_the_challenge(
    client: httpx.AsyncClient,
) -> None:
    """mcp.client.auth finds resource_metadata and scope, and no error to step up on."""
    response = await flows.whoami(client, None)
    # The SDK's OAuth client parses an httpx2 response; same status and header here.
    seen = httpx2.Response(401, headers={"WWW-Authenticate": response.headers["www-authenticate"]})
    assert extract_resource_metadata_from_www_auth(seen) == (
        "http://127.0.0.1:8000/.well-known/oauth-protected-resource/v1/initech/mcp"
    )
    assert extract_scope_from_www_auth(seen) == "profile email"
    assert extract_field_from_www_auth(seen, "error") is None


async def test_the_challenge_points_at_a_document_that_is_served(
    client: httpx.AsyncClient,
) -> None:
    """The resource_metadata URL answers with initech's protected-resource document."""
    challenge = (await flows.whoami(client, None)).headers["www-authenticate"]
    url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
    document = (await client.get(url)).json()
    assert document["resource"] == flows.mcp_url()


async def test_a_batch_with_a_personal_call_is_401_and_carries_every_reply(
    client: httpx.AsyncClient,
) -> None:
    """The public call's reply is in the 401 body beside the personal call's, challenged once."""
    batch = [flows.tool_call("echo", {"text": "hi"}, 1), flows.tool_call("whoami", None, 2)]
    response = await flows.mcp(client, batch)
    assert response.status_code == 401
    assert response.headers.get_list("www-authenticate") == [GUEST_CHALLENGE]
    replies = {reply["id"]: reply for reply in response.json()}
    assert set(replies) == {1, 2}
    assert replies[1]["result"]["isError"] is False
    assert replies[1]["result"]["content"][0]["text"] == "hi"
    assert "_meta" not in replies[1]["result"]
    assert replies[2]["result"]["isError"] is True
    assert replies[2]["result"]["_meta"]["mcp/www_authenticate"] == [GUEST_CHALLENGE_IN_RESULT]


async def test_a_guest_can_still_call_public_tools(client: httpx.AsyncClient) -> None:
    """A public tool at a sign-in company works without a token, and challenges nobody."""
    response = await flows.mcp(client, flows.tool_call("echo", {"text": "hi"}))
    assert response.status_code == 200
    assert "www-authenticate" not in response.headers


async def test_a_token_in_the_query_string_is_ignored(client: httpx.AsyncClient) -> None:
    """Bearer tokens count only in the Authorization header (interface 5.6)."""
    tokens = await flows.obtain_tokens(client)
    response = await client.post(
        "/v1/initech/mcp",
        params={"access_token": tokens.access},
        json=flows.tool_call("whoami"),
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == GUEST_CHALLENGE


async def test_tools_list_offers_both_schemes_on_every_tool(client: httpx.AsyncClient) -> None:
    """Every tool lists noauth and oauth2 in securitySchemes and in _meta; guests see whoami."""
    response = await flows.mcp(client, flows.rpc("tools/list"))
    assert response.status_code == 200
    tools = response.json()["result"]["tools"]
    assert {tool["name"] for tool in tools} == {"echo", "whoami"}
    for tool in tools:
        assert tool["securitySchemes"] == SCHEMES
        assert tool["_meta"]["securitySchemes"] == SCHEMES


async def test_tools_list_of_a_company_without_signin_has_no_schemes(
    client: httpx.AsyncClient,
) -> None:
    """acme offers no sign-in, so it claims no oauth2 scheme."""
    response = await flows.mcp(client, flows.rpc("tools/list"), "acme")
    for tool in response.json()["result"]["tools"]:
        assert "securitySchemes" not in tool


# Refused tokens ----------------------------------------------------------------------------


async def test_an_expired_access_token_is_401(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """A token past its expiry: 401 invalid_token."""
    tokens = await flows.obtain_tokens(client)
    await flows.expire(app, access_tokens)
    assert_token_refused(await flows.whoami(client, tokens.access))


async def test_a_revoked_access_token_is_401_even_for_public_tools(
    client: httpx.AsyncClient,
) -> None:
    """A revoked token is refused outright, not downgraded to a guest."""
    tokens = await flows.obtain_tokens(client)
    await flows.revoke(client, tokens.access, tokens.client_id)
    response = await flows.mcp(client, flows.tool_call("echo", {"text": "x"}), token=tokens.access)
    assert_token_refused(response)


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer garbage",
        "Bearer ",
        "Bearer",
        "Bearer fdat_" + "A" * 43,
        "Bearer fdat_" + "A" * 300,
        "Bearer \u00e9t\u00e9".encode("latin-1"),
        "Basic dXNlcjpwYXNz",
        "Token fdat_abc",
        "Digest username=x",
    ],
)
async def test_malformed_tokens_and_other_schemes_are_401(
    client: httpx.AsyncClient, authorization: str | bytes
) -> None:
    """An Authorization header that is not a live Bearer access token: 401 invalid_token."""
    raw = authorization if isinstance(authorization, bytes) else authorization.encode("latin-1")
    response = await client.post(
        "/v1/initech/mcp",
        json=flows.tool_call("echo", {"text": "x"}),
        headers=[(b"authorization", raw)],
    )
    assert_token_refused(response)


async def test_a_valid_token_under_another_scheme_is_401(client: httpx.AsyncClient) -> None:
    """A live access token sent as 'Token <value>' is not a Bearer credential."""
    tokens = await flows.obtain_tokens(client)
    response = await flows.mcp(
        client, flows.tool_call("whoami"), authorization=f"Token {tokens.access}"
    )
    assert_token_refused(response)


@pytest.mark.parametrize("which", ["refresh", "code"])
async def test_a_refresh_token_or_code_is_not_an_access_token(
    client: httpx.AsyncClient, which: str
) -> None:
    """Only access tokens open the MCP endpoint."""
    signed_in = await flows.sign_in(client)
    tokens = flows.tokens_of(await flows.exchange(client, signed_in), signed_in.client_id)
    token = tokens.refresh if which == "refresh" else signed_in.code
    assert_token_refused(await flows.whoami(client, token))


async def test_a_token_of_another_sign_in_company_is_401_there(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """initech's token at hooli: 401 with hooli's discovery document in the challenge."""
    tokens = await flows.obtain_tokens(client)
    assert_token_refused(await flows.whoami(client, tokens.access, "hooli"), "hooli")


async def test_a_token_sent_to_a_company_without_signin_is_401_without_discovery(
    client: httpx.AsyncClient,
) -> None:
    """initech's token at acme: 401 error=invalid_token and no resource_metadata (interface 5.4)."""
    tokens = await flows.obtain_tokens(client)
    response = await flows.mcp(
        client, flows.tool_call("echo", {"text": "x"}), "acme", token=tokens.access
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        'Bearer error="invalid_token",'
        ' error_description="This company has not set up customer sign-in"'
    )
