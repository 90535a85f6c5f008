"""Who a ``client_id`` names: a client registered here (RFC 7591), or a client that
publishes its own metadata at an https URL used as its id (a Client ID Metadata Document,
draft-ietf-oauth-client-id-metadata-document, which MCP 2025-11-25 asks authorization
servers to accept). Either way the endpoints get the same verified client.

Nothing is stored for a metadata-document client: its document is fetched, checked and
kept in memory for as long as its ``Cache-Control`` allows (oauth.client_documents).
"""

from __future__ import annotations

from dataclasses import dataclass

from frontdesk.companies.definition import SigninSetup
from frontdesk.oauth.client_documents import (
    ClientDocumentRefused,
    ClientDocuments,
    is_client_document_url,
)
from frontdesk.oauth.errors import InvalidRedirectUri
from frontdesk.oauth.redirects import check_redirect_uri
from frontdesk.store.clients import Client, ClientRepository


@dataclass(frozen=True, slots=True)
class KnownClient:
    client_id: str
    # What the client calls itself, unverified either way; how the pages name the client
    # (its verified host first, for a metadata-document client) is oauth.client_display.
    name: str | None
    redirect_uris: tuple[str, ...]


class ClientDirectory:
    def __init__(self, registered: ClientRepository, documents: ClientDocuments) -> None:
        self._registered = registered
        self._documents = documents

    def would_fetch(self, client_id: str) -> bool:
        """Whether finding ``client_id`` would fetch a metadata document now (an https URL
        with nothing kept for it): an outbound request its sender chose."""
        return is_client_document_url(client_id) and not self._documents.answers_without_fetching(
            client_id
        )

    async def register(self, client: Client) -> None:
        await self._registered.add(client)

    async def find(self, tenant_key: str, client_id: str, setup: SigninSetup) -> KnownClient | None:
        """The client, or None when no client of this company has the id. For a metadata
        document, raises ClientDocumentRefused when it breaks a rule (this company's redirect
        rules included) and ClientDocumentUnavailable when it cannot be fetched now."""
        if is_client_document_url(client_id):
            document = await self._documents.fetch(client_id)
            for index, uri in enumerate(document.redirect_uris):
                try:
                    check_redirect_uri(uri, setup.native_redirect_schemes)
                except InvalidRedirectUri as refused:
                    raise ClientDocumentRefused(
                        f"redirect_uris[{index}]: {refused.description}"
                    ) from None
            return KnownClient(
                client_id=document.client_id,
                name=document.client_name,
                redirect_uris=document.redirect_uris,
            )
        client = await self._registered.get(tenant_key, client_id)
        if client is None:
            return None
        return KnownClient(
            client_id=client.client_id,
            name=client.client_name,
            redirect_uris=tuple(client.redirect_uris),
        )
