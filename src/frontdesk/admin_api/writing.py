"""Every change of a company through the admin API is written here: what a company key may
not change is refused first, then the document goes to frontdesk.company_documents.

A ``python`` provider runs a function of the deployment in-process, with the arguments a
caller sends: naming one is the operator's choice, as it is in the companies file the
operator applies. A company key may keep the python providers its company has, move or
remove them, but not name a function its definition does not already name (403).
"""

from __future__ import annotations

from typing import Any

from frontdesk import company_documents
from frontdesk.admin_api.errors import operators_only
from frontdesk.admin_api.guard import AdminCall
from frontdesk.company_documents import Written


async def write(call: AdminCall, document: Any, current: dict[str, Any] | None) -> Written:
    """Create or replace the company the path names with ``document``; ``current`` is its
    stored definition (None when there is none)."""
    if call.key.tenant_key is not None:
        named = company_documents.python_targets(document)
        if named - company_documents.python_targets(current):
            raise operators_only("name a python provider's function")
    return await company_documents.write(
        call.context.settings, call.context.companies, call.company, document
    )
