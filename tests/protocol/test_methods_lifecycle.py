"""``initialize``, ``ping``, ``logging/setLevel``, unknown methods and list cursors."""

from __future__ import annotations

import httpx
import mcp.types
import pytest

from frontdesk import __version__
from frontdesk.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from frontdesk.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS
from tests.support.jsonrpc import call, error_of, request

LIST_METHODS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def initialize_params(version: object = "2025-11-25") -> dict[str, object]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    }


def test_the_newest_version_is_the_2025_11_25_revision() -> None:
    """The newest version offered is 2025-11-25 (DESIGN, protocol versions)."""
    assert LATEST_VERSION == "2025-11-25"
    assert SUPPORTED_VERSIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_echoes_a_supported_version(
    client: httpx.AsyncClient, version: str
) -> None:
    """A client's supported protocolVersion is echoed back."""
    result = await call(client, "initialize", initialize_params(version))
    assert result["protocolVersion"] == version


@pytest.mark.parametrize("version", ["2099-01-01", "2024-10-07", "", 20250618, None])
async def test_initialize_offers_the_newest_version_for_an_unknown_one(
    client: httpx.AsyncClient, version: object
) -> None:
    """An unknown or malformed protocolVersion is answered with 2025-11-25."""
    result = await call(client, "initialize", initialize_params(version))
    assert result["protocolVersion"] == "2025-11-25"


async def test_initialize_without_params_offers_the_newest_version(
    client: httpx.AsyncClient,
) -> None:
    """A bare initialize still negotiates, offering the newest version."""
    assert (await call(client, "initialize"))["protocolVersion"] == "2025-11-25"


async def test_initialize_answers_a_valid_mcp_initialize_result(
    client: httpx.AsyncClient,
) -> None:
    """The result validates as MCP's InitializeResult."""
    mcp.types.InitializeResult.model_validate(await call(client, "initialize", initialize_params()))


async def test_initialize_states_honest_capabilities(client: httpx.AsyncClient) -> None:
    """Tools, resources, prompts, completions and logging; no list-change or subscriptions."""
    result = await call(client, "initialize", initialize_params())
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
        "prompts": {"listChanged": False},
        "completions": {},
        "logging": {},
    }


async def test_initialize_names_the_server_and_the_company(client: httpx.AsyncClient) -> None:
    """serverInfo names frontdesk and its version, titled with the company's name."""
    result = await call(client, "initialize", initialize_params())
    assert result["serverInfo"] == {
        "name": "frontdesk",
        "title": "Acme Corp",
        "version": __version__,
    }


async def test_initialize_carries_the_companys_instructions(client: httpx.AsyncClient) -> None:
    """A company's instructions are passed to the client."""
    result = await call(client, "initialize", initialize_params())
    assert result["instructions"] == "Acme sells anvils."


async def test_initialize_leaves_out_instructions_a_company_has_not_written(
    client: httpx.AsyncClient,
) -> None:
    """No instructions declared, no instructions field."""
    result = await call(client, "initialize", initialize_params(), path="/v1/globex/mcp")
    assert "instructions" not in result
    assert result["serverInfo"]["title"] == "Globex"


async def test_ping_answers_an_empty_result(client: httpx.AsyncClient) -> None:
    """ping answers {}."""
    assert await call(client, "ping") == {}


@pytest.mark.parametrize("level", LOG_LEVELS)
async def test_setting_a_valid_log_level_answers_an_empty_result(
    client: httpx.AsyncClient, level: str
) -> None:
    """logging/setLevel accepts every RFC 5424 level MCP names."""
    assert await call(client, "logging/setLevel", {"level": level}) == {}


@pytest.mark.parametrize("level", ["loud", "DEBUG", "", 3, None])
async def test_setting_an_invalid_log_level_is_invalid_params(
    client: httpx.AsyncClient, level: object
) -> None:
    """A level MCP does not name is -32602."""
    error = await error_of(client, "logging/setLevel", {"level": level})
    assert error["code"] == INVALID_PARAMS


async def test_setting_a_log_level_without_one_is_invalid_params(
    client: httpx.AsyncClient,
) -> None:
    """logging/setLevel without a level is -32602."""
    assert (await error_of(client, "logging/setLevel"))["code"] == INVALID_PARAMS


@pytest.mark.parametrize(
    "method",
    ["server/discover", "tools/nope", "sampling/createMessage", "notifications/initialized"],
)
async def test_an_unknown_method_is_method_not_found_in_a_200(
    client: httpx.AsyncClient, method: str
) -> None:
    """A method we do not offer is -32601 inside a 200 reply, so clients can probe."""
    response = await client.post("/v1/acme/mcp", json=request(method, request_id="probe"))
    assert response.status_code == 200
    reply = response.json()
    assert reply["id"] == "probe"
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert "result" not in reply


@pytest.mark.parametrize("method", LIST_METHODS)
async def test_a_cursor_on_a_listing_is_invalid_params(
    client: httpx.AsyncClient, method: str
) -> None:
    """Every listing is one page, so any cursor is one we never issued: -32602."""
    assert (await error_of(client, method, {"cursor": "abc"}))["code"] == INVALID_PARAMS


@pytest.mark.parametrize("method", LIST_METHODS)
async def test_a_listing_without_a_cursor_has_no_next_cursor(
    client: httpx.AsyncClient, method: str
) -> None:
    """A listing is complete in one page and says so by having no nextCursor."""
    assert "nextCursor" not in await call(client, method, {})
