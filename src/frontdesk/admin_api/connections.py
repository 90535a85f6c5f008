"""A company's connections under /admin/v1/companies/{tenant}: its clients and its
customers' grants, listed and revoked through administration.company_state, as `clients` and
`grants` on the command line do. A revoked grant's tokens are refused (401) from their
next call on every instance."""

from __future__ import annotations

from starlette.responses import Response

from frontdesk.admin_api.errors import invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration.company_state import (
    list_clients_in,
    list_grants_in,
    revoke_client_in,
    revoke_grants_in,
)

LARGEST_GRANT_ID = 2**31 - 1


async def list_clients(call: AdminCall) -> Response:
    rows = await list_clients_in(call.context.database, call.company)
    return json_response(
        {
            "clients": [
                {
                    "client_id": row.client_id,
                    "client_name": row.client_name,
                    "registered": row.registered,
                    "created_at": row.created_at,
                    "live_grants": row.live_grants,
                }
                for row in rows
            ]
        }
    )


async def revoke_client(call: AdminCall) -> Response:
    """Every grant the client holds at the company ends; its registration stays."""
    client_id = str(call.request.path_params["clientId"])
    revoked = await revoke_client_in(call.context.database, call.company, client_id)
    return json_response({"revoked_grants": revoked})


async def list_grants(call: AdminCall) -> Response:
    customer = call.request.query_params.get("customer")
    if customer == "":
        raise invalid_request("customer, when given, names a customer (subject or email)")
    rows = await list_grants_in(call.context.database, call.company, customer)
    return json_response(
        {
            "grants": [
                {
                    "id": row.family_id,
                    "live": row.revoked_at is None,
                    "customer": row.subject,
                    "email": row.email,
                    "client_id": row.client_id,
                    "scope": row.scope,
                    "created_at": row.created_at,
                    "revoked_at": row.revoked_at,
                    "last_used_at": row.last_used_at,
                }
                for row in rows
            ]
        }
    )


async def revoke_grant(call: AdminCall) -> Response:
    text = str(call.request.path_params["grantId"])
    # token_families.id is a 32-bit integer column: a larger id could never be one, and
    # PostgreSQL would refuse the comparison rather than find nothing.
    if not text.isdigit() or not 1 <= int(text) <= LARGEST_GRANT_ID:
        raise invalid_request(f"a grant id is a whole number from 1 to {LARGEST_GRANT_ID}")
    grant_id = int(text)
    # A grant already revoked is left as it is: an empty list, as `grants revoke` says
    # "nothing to revoke"; another company's grant is 404 (administration.UnknownTarget).
    revoked = await revoke_grants_in(call.context.database, call.company, family_ids=[grant_id])
    return json_response({"revoked_grants": revoked})
