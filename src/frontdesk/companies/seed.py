"""The demo company, seeded on a development instance so a first run has something to serve."""

from __future__ import annotations

from pathlib import Path

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
    """Create the demo company once; an operator's later edits to it are kept (so is the
    backend port it was seeded with)."""
    demo = demo_companies(backend_port)
    existing = {stored.tenant_key for stored in await repository.all()}
    missing = demo.model_copy(
        update={"companies": [c for c in demo.companies if c.tenant_key not in existing]}
    )
    if missing.companies:
        await apply_companies(repository, missing)
        log.info("demo_seeded", tenants=[company.tenant_key for company in missing.companies])
