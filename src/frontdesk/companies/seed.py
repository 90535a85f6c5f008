"""The demo company, seeded on a development instance so a first run has something to serve."""

from __future__ import annotations

from pathlib import Path

import structlog

from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.store.companies import CompanyRepository

log = structlog.get_logger(__name__)

DEMO_FILE = Path(__file__).parent.parent / "demo" / "companies.yaml"


async def seed_demo_company(repository: CompanyRepository) -> None:
    """Create the demo company once; an operator's later edits to it are kept."""
    demo = read_companies_file(DEMO_FILE)
    existing = {stored.tenant_key for stored in await repository.all()}
    missing = demo.model_copy(
        update={"companies": [c for c in demo.companies if c.tenant_key not in existing]}
    )
    if missing.companies:
        await apply_companies(repository, missing)
        log.info("demo_seeded", tenants=[company.tenant_key for company in missing.companies])
