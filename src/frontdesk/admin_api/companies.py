"""/admin/v1/companies: list, read, create or replace, patch and delete a company, in the
shape of one entry of the companies file (README "Companies file"). Each change is one
transaction through administration.company_documents, validated as `companies apply` validates,
and reaches every instance within FRONTDESK_COMPANY_CACHE_SECONDS as the CLI's changes do
(the registry polls the same rows)."""

from __future__ import annotations

from starlette.responses import Response

from frontdesk.admin_api import writing
from frontdesk.admin_api.errors import invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration import company_documents
from frontdesk.administration.company_documents import Written
from frontdesk.administration.company_state import UnknownCompany, delete_company_in
from frontdesk.sealing.company_secrets import redact_secrets
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
    """The company, its secrets redacted, its revision in ``ETag`` (for ``If-Match``)."""
    stored = await call.context.companies.get(call.company)
    if stored is None:
        raise UnknownCompany(call.company)
    response = json_response(redact_secrets(stored.definition))
    response.headers["ETag"] = writing.entity_tag(stored.revision)
    return response


async def put_company(call: AdminCall) -> Response:
    """201 when created (operator keys only), 200 when replaced or unchanged; with
    If-Match, only over the revision it names."""
    document = await call.json_body()
    stored = await call.context.companies.get(call.company)
    if stored is None:
        call.require_operator("create a company")
    revision = None if stored is None else stored.revision
    conditional = writing.if_match(call.request, revision)
    written = await writing.write(
        call,
        document,
        None if stored is None else stored.definition,
        revision,
        checked=conditional,
        conditional=conditional,
    )
    return _written(written, 201 if written.outcome is ApplyOutcome.CREATED else 200)


async def patch_company(call: AdminCall) -> Response:
    """A JSON merge patch (RFC 7396) of the stored definition, its secrets kept unless the
    patch names them; the result is validated whole, and written only over what was read."""
    patch = await call.json_body()
    if not isinstance(patch, dict):
        raise invalid_request("a merge patch of a company is a JSON object")
    current = await company_documents.read_opened(call.context.companies, call.company)
    conditional = writing.if_match(call.request, current.revision)
    changed = company_documents.merge_patch(current.document, patch)
    written = await writing.write(
        call, changed, current.document, current.revision, conditional=conditional
    )
    return _written(written, 200)


def _written(written: Written, status: int) -> Response:
    response = json_response(written.document, status)
    response.headers["ETag"] = writing.entity_tag(written.revision)
    return response


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
