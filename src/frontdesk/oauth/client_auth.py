"""Client authentication at the token and revocation endpoints (interface 4.5, 4.6): public
clients prove nothing but their id, which must name a client of this company."""

from __future__ import annotations

from starlette.requests import Request

from frontdesk.oauth.client_documents import ClientDocumentRefused, ClientDocumentUnavailable
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import InvalidClient, TemporarilyUnavailable
from frontdesk.observability import metrics


async def authenticated_client(
    services: OAuthServices, request: Request, signin: SigninCompany, client_id: str
) -> str:
    """The client id (as ``forms.client_id_of`` read it, once per request) of a client this
    company knows, or 401 ``invalid_client``; 503 ``temporarily_unavailable`` when the
    client's metadata document cannot be fetched now (a 401 would make the client discard
    tokens that are still good)."""
    await services.limit_document_fetch(request, client_id)
    try:
        client = await services.clients.find(signin.tenant_key, client_id, signin.setup)
    except ClientDocumentRefused as refused:
        raise InvalidClient(refused.description) from None
    except ClientDocumentUnavailable as unavailable:
        metrics.outage_answered("client_document")
        raise TemporarilyUnavailable(unavailable.description, unavailable.retry_after) from None
    if client is None:
        raise InvalidClient("unknown client")
    return client.client_id
