"""The demo company, seeded on a development instance so a first run has something to serve."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import structlog

from frontdesk.companies.definition import CompaniesFile, HttpProvider
from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.store.companies import CompanyRepository

log = structlog.get_logger(__name__)

DEMO_FILE = Path(__file__).parent.parent / "demo" / "companies.yaml"
# Where demo/companies.yaml puts the demo backend (examples/backend.py); the seed moves it to
# FRONTDESK_DEMO_BACKEND_PORT, so one setting names the port for the backend and the seed.
DEMO_BACKEND_URL = "http://127.0.0.1:8001/tools"
DEMO_BACKEND_PORT = 8001
_SEEDED_BACKEND_URL = re.compile(r"http://127\.0\.0\.1:[0-9]{1,5}/tools")


def demo_companies(backend_port: int = DEMO_BACKEND_PORT) -> CompaniesFile:
    """The demo file, its backend calls sent to ``backend_port`` on loopback."""
    demo = read_companies_file(DEMO_FILE)
    url = f"http://127.0.0.1:{backend_port}/tools"
    companies = []
    for company in demo.companies:
        tools = [
            tool.model_copy(update={"provider": tool.provider.model_copy(update={"url": url})})
            if isinstance(tool.provider, HttpProvider) and tool.provider.url == DEMO_BACKEND_URL
            else tool
            for tool in company.tools
        ]
        companies.append(company.model_copy(update={"tools": tools}))
    return demo.model_copy(update={"companies": companies})


async def seed_demo_company(
    repository: CompanyRepository, backend_port: int = DEMO_BACKEND_PORT
) -> None:
    """Create the demo company once; an operator's later edits to it are kept, but for the
    port of its loopback backend, which follows ``backend_port``: a demo company still
    calling the port it was seeded with (``./scripts/serve --port`` moves the backend)
    would send its customers' data to whatever listens there now."""
    demo = demo_companies(backend_port)
    stored = {company.tenant_key: company for company in await repository.all()}
    missing = demo.model_copy(
        update={"companies": [c for c in demo.companies if c.tenant_key not in stored]}
    )
    if missing.companies:
        await apply_companies(repository, missing)
        log.info("demo_seeded", tenants=[company.tenant_key for company in missing.companies])
    moved = [
        definition
        for company in demo.companies
        if company.tenant_key in stored
        and (definition := _moved(repository.opened(stored[company.tenant_key]), backend_port))
    ]
    if moved:
        await repository.apply(moved)
        log.info(
            "demo_backend_moved",
            tenants=[definition["tenant_key"] for definition in moved],
            port=backend_port,
        )


def _moved(definition: dict[str, Any], port: int) -> dict[str, Any] | None:
    """``definition`` with its loopback backend URLs (the seed's form, any port) on
    ``port``; None when none is elsewhere."""
    url = f"http://127.0.0.1:{port}/tools"
    moved = False
    for tool in definition.get("tools", []):
        provider = tool.get("provider", {})
        seeded = _SEEDED_BACKEND_URL.fullmatch(str(provider.get("url", "")))
        if provider.get("type") == "http" and seeded and provider["url"] != url:
            provider["url"] = url
            moved = True
    return definition if moved else None
