"""Every change of a company through the admin API is written here: what a company key may
not change is refused first, then the document goes to administration.company_documents, and a
change made from a reading of the company is written only if the company is still as read.

A ``python`` provider runs a function of the deployment in-process, with the arguments a
caller sends: naming one is the operator's choice, as it is in the companies file the
operator applies. A company key may keep the python providers its company has, move or
remove them, but not name a function its definition does not already name (403). Nor
may it change its ``region`` or ``rate_limit``: the operator's choices (OPERATORS_FIELDS).

A change of a part (a tool, sign-in, branding) or a merge patch is made from the company
as read; were it written over a change made meanwhile, that change would be lost unseen.
So it names the revision it read, and the write is refused (409) when the company is no
longer at it. A whole company put with ``If-Match`` (RFC 9110 section 13.1.1) is held to the
revision its entity tag names (``GET`` answers it in ``ETag``): 412 when it is not current.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from frontdesk.admin_api.errors import AdminError, operators_only
from frontdesk.admin_api.guard import AdminCall
from frontdesk.administration import company_documents
from frontdesk.administration.company_documents import UNCHECKED, Written
from frontdesk.companies.definition import CompanyDefinition
from frontdesk.store.companies import CompanyChanged

# What the operator decides for a company, not the company: where its data lives (a
# company of another region is not served here) and how hard its callers may push.
OPERATORS_FIELDS = ("region", "rate_limit")


def _field(document: Any, field: str) -> Any:
    """A top-level field as the companies file reads it: its default when left out."""
    given = document.get(field) if isinstance(document, dict) else None
    return CompanyDefinition.model_fields[field].default if given is None else given


def entity_tag(revision: int) -> str:
    return f'"{revision}"'


def if_match(request: Request, revision: int | None) -> bool:
    """Whether the request is conditional on the company's revision (``If-Match``); 412 when
    its condition fails now."""
    given = request.headers.get("if-match")
    if given is None:
        return False
    tags = {tag.strip() for tag in given.split(",")}
    matches = revision is not None and ("*" in tags or entity_tag(revision) in tags)
    if not matches:
        raise _precondition_failed()
    return True


def _precondition_failed() -> AdminError:
    return AdminError(
        412, "precondition_failed", "the company is no longer at the revision If-Match names"
    )


async def write(
    call: AdminCall,
    document: Any,
    current: dict[str, Any] | None,
    read_at: int | None,
    *,
    checked: bool = True,
    conditional: bool = False,
) -> Written:
    """Create or replace the company the path names with ``document``, made from
    ``current`` (its stored definition, None when there is none) read at revision
    ``read_at``; ``checked``: only if it is still at that revision. ``conditional``: the
    request said so with If-Match, and is answered 412 rather than 409."""
    if call.key.tenant_key is not None:
        named = company_documents.python_targets(document)
        if named - company_documents.python_targets(current):
            raise operators_only("name a python provider's function")
        for field in OPERATORS_FIELDS:
            if _field(document, field) != _field(current, field):
                raise operators_only(f"change a company's {field}")
    try:
        return await company_documents.write(
            call.context.settings,
            call.context.companies,
            call.company,
            document,
            read_at if checked else UNCHECKED,
        )
    except CompanyChanged:
        if conditional:
            raise _precondition_failed() from None
        raise
