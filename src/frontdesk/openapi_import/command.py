"""``frontdesk tools import-openapi``: the document read from a file or fetched from a URL,
imported into one company of the configured database (openapi_import.plan)."""

from __future__ import annotations

from pathlib import Path

from frontdesk.administration.command_database import opened
from frontdesk.config import Settings
from frontdesk.openapi_import.document import fetch, read_file
from frontdesk.openapi_import.plan import ImportPlan, ImportRequest, import_openapi
from frontdesk.outbound.clients import OutboundClients
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.companies import CompanyRepository


async def import_from(
    settings: Settings,
    tenant_key: str,
    file_or_url: str,
    *,
    base_url: str,
    include: tuple[str, ...] = (),
    source: str | None = None,
    dry_run: bool = False,
) -> ImportPlan:
    """Import the document at ``file_or_url`` (an https URL, or a path) into the company."""
    if file_or_url.startswith(("https://", "http://")):
        outbound = OutboundClients()
        try:
            document = await fetch(
                outbound.for_documents(),
                file_or_url,
                on_loopback=settings.client_documents_on_loopback,
            )
        finally:
            await outbound.aclose()
    else:
        document = read_file(Path(file_or_url))
    request = ImportRequest(document, base_url, include=include, source=source, dry_run=dry_run)
    async with opened(settings) as database:
        repository = CompanyRepository(database.engine, SecretBox(settings.data_keys))
        return await import_openapi(
            repository, tenant_key, request, production=settings.is_production
        )
