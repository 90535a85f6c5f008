"""The Grafana dashboard and the Prometheus alert rules shipped in deploy/ query only series
a live instance exposes: ``frontdesk serve`` is driven through every kind of traffic they
chart (a guest call, a sign-in, a signed-in call, a refresh and its reuse, a revocation, a
denied consent, backend calls that fail and time out, a rate-limited call), then /metrics
is scraped with its bearer token and every metric name the expressions name must be there,
with every label they match on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REQUIRE_SERVICES, ROOT
from tests.live.conftest import LiveService, service_with_own_database
from tests.oauth.flows import (
    Pkce,
    consent_page,
    decide,
    flow_of,
    mcp,
    obtain_tokens,
    refresh,
    register,
    revoke,
    tokens_of,
    tool_call,
    whoami,
)

pytestmark = pytest.mark.live

DASHBOARD = ROOT / "deploy" / "grafana" / "frontdesk-dashboard.json"
ALERTS = ROOT / "deploy" / "prometheus" / "frontdesk-alerts.yml"
METRICS_TOKEN = "live-scrape-token-0123456789"

# A metric name in an expression: Frontdesk's families only (le, rate, sum... are not).
_METRIC = re.compile(r"\bfrontdesk_[a-z_]+\b")
# A selector's matchers: ``name{label="x", other=~"y"}``.
_SELECTOR = re.compile(r"\b(frontdesk_[a-z_]+)\{([^}]*)\}")
_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
# Labels grouped by: ``by (le, company)``.
_GROUPING = re.compile(r"\bby\s*\(([^)]*)\)")


def dashboard_expressions() -> list[str]:
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    expressions = [
        target["expr"]
        for panel in document["panels"]
        for target in panel.get("targets", [])
        if "expr" in target
    ]
    for variable in document["templating"]["list"]:
        if variable.get("type") == "query":
            expressions.append(variable["definition"])
    return expressions


def alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in document["groups"] for rule in group["rules"]]


def test_the_alert_rules_are_well_formed(tmp_path: Path) -> None:
    """promtool's check when it is installed (CI installs it: scripts/install-test-servers);
    the rule file's structure either way."""
    promtool = shutil.which("promtool")
    if promtool is None and REQUIRE_SERVICES:
        pytest.fail("promtool is not installed; FRONTDESK_TEST_REQUIRE_SERVICES=1 needs it")
    if promtool is not None:
        checked = subprocess.run(
            [promtool, "check", "rules", str(ALERTS)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    assert set(document) == {"groups"}
    names = set()
    for group in document["groups"]:
        assert isinstance(group["name"], str)
        assert group["rules"]
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", rule["alert"]), rule["alert"]
            assert rule["alert"] not in names
            names.add(rule["alert"])
            assert _METRIC.search(rule["expr"]), rule["alert"]
            assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]
            assert re.fullmatch(r"[0-9]+[smh]", rule.get("for", "0s")), rule["alert"]
            assert rule["labels"]["severity"] in {"page", "warn", "info"}
            assert rule["annotations"]["summary"]


def test_the_dashboard_is_well_formed() -> None:
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [panel["id"] for panel in document["panels"]]
    assert len(ids) == len(set(ids))
    charted = [panel for panel in document["panels"] if panel["type"] == "timeseries"]
    assert charted
    assert all(panel["targets"] for panel in charted)
    for expression in dashboard_expressions():
        assert expression.count("(") == expression.count(")"), expression


@contextlib.contextmanager
def metrics_service(backend: str, workdir: Path) -> Iterator[LiveService]:
    # A spent refresh token presented again is reuse: the test companies keep the
    # contract's rule (no retry window).
    environment = {"FRONTDESK_METRICS_TOKEN": METRICS_TOKEN}
    with service_with_own_database(backend, workdir, environment) as service:
        yield service


async def drive_every_kind_of_traffic(http: httpx.AsyncClient) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    # Guest calls, and backend calls that succeed, fail and time out.
    assert (await mcp(http, ping, "acme")).status_code == 200
    for tool, arguments in (("echo", {"text": "hi"}), ("crash", {}), ("slow", {})):
        assert (await mcp(http, tool_call(tool, arguments), "acme")).status_code == 200
    # A tenant key nobody has.
    assert (await mcp(http, ping, "no-such-company")).status_code == 404
    # A sign-in, a signed-in call, a refresh, the spent token again (reuse), a revocation.
    tokens = await obtain_tokens(http)
    assert (await whoami(http, tokens.access)).status_code == 200
    fresh = tokens_of(await refresh(http, tokens), tokens.client_id)
    assert (await refresh(http, tokens)).status_code == 400
    assert (await revoke(http, fresh.refresh, fresh.client_id)).status_code == 200
    # A customer who denies.
    client_id = await register(http)
    denied = await decide(http, flow_of(await consent_page(http, client_id, Pkce.new())), "deny")
    assert denied.status_code == 303
    # The strict company allows three calls a minute.
    statuses = [(await mcp(http, ping, "strict")).status_code for _ in range(4)]
    assert statuses[-1] == 429


async def traffic_then_scrape(service: LiveService) -> httpx.Response:
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30.0) as http:
        await drive_every_kind_of_traffic(http)
        assert (await http.get("/metrics")).status_code == 401
        return await http.get("/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"})


# Synchronous: the PostgreSQL database is made and dropped with an event loop of its own.
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_every_series_the_dashboard_and_alerts_query_exists(backend: str, tmp_path: Path) -> None:
    with metrics_service(backend, tmp_path) as service:
        scraped = asyncio.run(traffic_then_scrape(service))
    assert scraped.status_code == 200

    labels_of: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(scraped.text):
        for sample in family.samples:
            labels_of.setdefault(sample.name, set()).update(sample.labels)

    expressions = dashboard_expressions() + [rule["expr"] for rule in alert_rules()]
    queried = {name for expression in expressions for name in _METRIC.findall(expression)}
    # Every family the dashboard and the rules chart, the new ones above all.
    assert {
        "frontdesk_company_request_duration_seconds_count",
        "frontdesk_signins_failed_total",
        "frontdesk_backend_calls_total",
        "frontdesk_rate_limited_total",
        "frontdesk_database_connections_in_use",
        "frontdesk_outage_answers_total",
    } <= queried
    missing = sorted(queried - set(labels_of))
    assert not missing, f"queried but not exposed: {missing}\n{service.output()}"

    for expression in expressions:
        for name, matchers in _SELECTOR.findall(expression):
            for label in _MATCHER.findall(matchers):
                assert label in labels_of[name], f"{name} has no label {label}: {expression}"
        names = _METRIC.findall(expression)
        for grouping in _GROUPING.findall(expression):
            for label in filter(None, (part.strip() for part in grouping.split(","))):
                assert any(label in labels_of[name] for name in names), (label, expression)
