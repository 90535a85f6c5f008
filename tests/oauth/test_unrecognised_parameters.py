"""RFC 6749 3.1 and 3.2: "The authorization server MUST ignore unrecognized request
parameters", repeated or not; only a parameter it reads must not be given twice."""

from __future__ import annotations

from urllib.parse import urlencode

import httpx
import pytest

from tests.oauth import flows

pytestmark = pytest.mark.anyio

UNRECOGNISED = [("x-trace", "1"), ("x-trace", "2"), ("", "a"), ("", "b")]


async def test_a_repeated_unrecognised_token_parameter_is_ignored(
    client: httpx.AsyncClient,
) -> None:
    """The code is exchanged as if the unknown parameters were not there."""
    signed_in = await flows.sign_in(client)
    pairs = [*flows.code_form(signed_in).items(), *UNRECOGNISED]
    response = await flows.token_request(client, pairs)
    assert response.status_code == 200, response.text


async def test_a_repeated_unrecognised_revocation_parameter_is_ignored(
    client: httpx.AsyncClient,
) -> None:
    """200 as for any revocation (RFC 7009 2.2), not 400."""
    client_id = await flows.register(client)
    body = urlencode([("token", "unknown"), ("client_id", client_id), *UNRECOGNISED])
    response = await client.post(flows.oauth_path("revoke"), content=body, headers=flows.FORM)
    assert response.status_code == 200, response.text


async def test_a_repeated_unrecognised_authorize_parameter_is_ignored(
    client: httpx.AsyncClient,
) -> None:
    """The consent page, not a 303 with invalid_request."""
    client_id = await flows.register(client)
    params = flows.authorize_params(client_id, flows.Pkce.new())
    response = await flows.authorize(client, [*params.items(), *UNRECOGNISED])
    assert response.status_code == 200, response.headers.get("location")
