"""/admin/v1/companies: list, read, create or replace, patch and delete a company, in the
shape of one entry of the companies file (README "Companies file"). Each change is one
transaction through frontdesk.company_documents, validated as `companies apply` validates,
and reaches every instance within FRONTDESK_COMPANY_CACHE_SECONDS as the CLI's changes do
(the registry polls the same rows)."""

from __future__ import annotations

from starlette.responses import Response

from frontdesk import company_documents
from frontdesk.admin_api import writing
from frontdesk.admin_api.errors import invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration import delete_company_in
from frontdesk.store.companies import ApplyOutcome


async def list_companies(call: AdminCall) -> Response:
    """The companies the key may see: every one for an operator key, its own for a
    company key."""
    rows = await call.context.companies.all()
    return json_response(
        {
            "companies": [
                {
                    "tenant_key": row.tenant_key,
                    "name": row.definition["name"],
                    "region": row.definition["region"],
                    "active": row.definition["active"],
                    "mcp_url": call.context.settings.mcp_url(row.tenant_key),
                }
                for row in rows
                if call.key.may_manage(row.tenant_key)
            ]
        }
    )


async def get_company(call: AdminCall) -> Response:
    repository = call.context.companies
    return json_response(await company_documents.read_redacted(repository, call.company))


async def put_company(call: AdminCall) -> Response:
    """201 when created (operator keys only), 200 when replaced or unchanged."""
    document = await call.json_body()
    stored = await call.context.companies.get(call.company)
    if stored is None:
        call.require_operator("create a company")
    current = None if stored is None else stored.definition
    written = await writing.write(call, document, current)
    return json_response(written.document, 201 if written.outcome is ApplyOutcome.CREATED else 200)


async def patch_company(call: AdminCall) -> Response:
    """A JSON merge patch (RFC 7396) of the stored definition, its secrets kept unless the
    patch names them; the result is validated whole."""
    patch = await call.json_body()
    if not isinstance(patch, dict):
        raise invalid_request("a merge patch of a company is a JSON object")
    current = await company_documents.read_opened(call.context.companies, call.company)
    changed = company_documents.merge_patch(current, patch)
    written = await writing.write(call, changed, current)
    return json_response(written.document)


async def delete_company(call: AdminCall) -> Response:
    """What `companies delete` does: the company with its clients, customers and grants
    (revoked first), and its keys revoked. Operator keys only."""
    call.require_operator("delete a company")
    deleted = await delete_company_in(call.context.database, call.company)
    return json_response(
        {
            "tenant_key": call.company,
            "revoked_grants": deleted.revoked_families,
            "removed": dict(deleted.counts),
        }
    )
