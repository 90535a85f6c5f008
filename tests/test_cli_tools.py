"""`frontdesk tools import-openapi`: a company's tools from an OpenAPI document in a file or
at a URL, the diff printed, a dry run writing nothing, a refusal in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from frontdesk.cli.main import main
from tests.support.orders_api import ORDERS_31, serve_orders_api

BASE_URL = "https://api.orderly.example"


@pytest.fixture(autouse=True)
def company(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fresh SQLite database holding the company ``orderly``."""
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}")
    companies = tmp_path / "companies.yaml"
    companies.write_text(
        yaml.safe_dump({"companies": [{"tenant_key": "orderly", "name": "Orderly"}]}),
        encoding="utf-8",
    )
    assert run("companies", "apply", str(companies)).exit_code == 0


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def stored_tools() -> list[str]:
    shown = run("companies", "show", "orderly")
    assert shown.exit_code == 0, shown.output
    return [tool["name"] for tool in json.loads(shown.stdout)["tools"]]


def test_a_dry_run_prints_the_diff_and_the_import_applies_it(tmp_path: Path) -> None:
    document = tmp_path / "orders.yaml"
    document.write_text(yaml.safe_dump(ORDERS_31, sort_keys=False), encoding="utf-8")
    command = ("tools", "import-openapi", "orderly", str(document), "--base-url", BASE_URL)

    dry = run(*command, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines() == [
        "+ listOrders",
        "+ place_order",
        "+ getOrder",
        "+ cancelOrder",
        "+ broken",
        "orderly: 5 added, 0 changed, 0 removed, 0 unchanged (import 'Orders API')",
        "dry run: nothing was written",
    ]
    assert stored_tools() == []

    applied = run(*command, "--include", "getOrder")
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines() == [
        "+ getOrder",
        "orderly: 1 added, 0 changed, 0 removed, 0 unchanged (import 'Orders API')",
    ]
    assert stored_tools() == ["getOrder"]

    again = run(*command, "--include", "listOrders")
    assert again.stdout.splitlines()[:2] == ["+ listOrders", "- getOrder"]
    assert stored_tools() == ["listOrders"]


def test_a_document_is_fetched_from_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    # Plain http on loopback, as the test-only setting allows for metadata documents.
    monkeypatch.setenv("FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK", "true")
    with serve_orders_api() as api:
        url = f"{api.base_url}/openapi.json"
        result = run("tools", "import-openapi", "orderly", url, "--base-url", api.base_url)
    assert result.exit_code == 0, result.output
    assert stored_tools() == ["listOrders", "place_order", "getOrder", "cancelOrder", "broken"]


def test_a_url_outside_https_is_refused_without_the_test_setting() -> None:
    result = run(
        "tools", "import-openapi", "orderly", "http://127.0.0.1:9/x.json", "--base-url", BASE_URL
    )
    assert result.exit_code == 1
    assert "cannot fetch the document: 'http://127.0.0.1:9/x.json' is not an https URL" in (
        result.output
    )


def test_a_bad_document_unknown_company_or_base_url_each_end_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"openapi": "3.1.0", "paths": {}}), encoding="utf-8")
    refused = run("tools", "import-openapi", "orderly", str(bad), "--base-url", BASE_URL)
    assert refused.exit_code == 1
    assert refused.output == (
        'Error: the document is not valid OpenAPI 3.1: at (document): "info" is a required'
        " property\n"
    )
    good = tmp_path / "good.json"
    good.write_text(json.dumps(ORDERS_31), encoding="utf-8")
    unknown = run("tools", "import-openapi", "nobody", str(good), "--base-url", BASE_URL)
    assert unknown.exit_code == 2
    plain_http = run("tools", "import-openapi", "orderly", str(good), "--base-url", "http://x.io")
    assert plain_http.exit_code == 2
    assert "must be https" in plain_http.output
    assert stored_tools() == []
