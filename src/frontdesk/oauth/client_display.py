"""How a client is named to the customer, on the consent page and on the account page alike:
one rule, so the assistant a customer allowed is the one they find (and can remove) later.

- A metadata-document client (draft-ietf-oauth-client-id-metadata-document) is named by
  the host of its ``client_id`` URL: the one thing about it this service verified, as that
  host answered for the URL over verified TLS. The draft's section "OAuth Phishing
  Attacks" warns that its ``client_name`` is the client's own claim, so that name comes
  second, as what it calls itself. The host is shown as the URL has it (an IDN in its
  ``xn--`` form), so a look-alike name in another script cannot pass for a known one.
- A registered client (RFC 7591) is named by its ``client_name``, marked unverified: its
  metadata is self-asserted (RFC 7591 section 5), named or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from frontdesk.oauth.client_document_rules import is_client_document_url

UNNAMED = "Unnamed application"


@dataclass(frozen=True, slots=True)
class ClientDisplay:
    # What the pages lead with: the verified host, or the registered client's own name.
    name: str
    # The host that answered for a metadata-document client's id; None for a registered one.
    verified_host: str | None
    # A metadata-document client's own name, shown second ("calls itself"); None when it
    # has none or it only repeats the host.
    calls_itself: str | None

    @property
    def verified(self) -> bool:
        return self.verified_host is not None


def client_display(client_id: str, claimed_name: str | None) -> ClientDisplay:
    """The client as the pages name it; ``claimed_name`` is the ``client_name`` it chose
    (registration or metadata document), already checked by oauth.client_names."""
    if is_client_document_url(client_id):
        host = urlsplit(client_id).hostname or client_id
        repeats_host = claimed_name is not None and claimed_name.casefold() == host.casefold()
        return ClientDisplay(
            name=host,
            verified_host=host,
            calls_itself=None if repeats_host else claimed_name,
        )
    return ClientDisplay(name=claimed_name or UNNAMED, verified_host=None, calls_itself=None)
