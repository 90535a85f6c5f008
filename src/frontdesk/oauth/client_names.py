"""The one rule for a client's display name (``client_name``), wherever it enters: dynamic
client registration (RFC 7591 2) and Client ID Metadata Documents
(draft-ietf-oauth-client-id-metadata-document). The consent page shows it to the customer
as the name of what asks for their account, so it must read as what it is.

Refused (RFC 7591 3.2.2 ``invalid_client_metadata``, naming the field), not cleaned:
characters that are not shown as themselves, of the Unicode general categories

- Cc, controls (C0 and C1: NUL, which PostgreSQL cannot store either, tab, line feeds);
- Cf, formatting: the bidirectional embeddings, overrides, isolates and marks (U+202A-202E,
  U+2066-2069, U+200E, U+200F, U+061C), which make the page show the text in another order
  than it was written, and the invisible characters (U+200B-200D, U+2060, U+FEFF, U+00AD);
- Co, private use, which each font draws as it likes;
- Cs, surrogates, which are no characters;
- Zl and Zp, line and paragraph separators.

Cleaning them out would show a name the client never sent, and one built to look like
another's (``Cl<U+200B>aude``) would come out as exactly that other name; a client that
sends them is refused and can say what it meant. Refused too: a name that is not a
string, and one over MAX_CLIENT_NAME characters, as sent or once normalised.

Cleaned: surrounding whitespace is trimmed, and the name is normalised to NFC, so that a
name shows and compares the same however its accents were composed. A name left empty
is no name (RFC 7591 2: the member is optional); ``null`` is no name either.
"""

from __future__ import annotations

import unicodedata

# As sent, and once normalised: the column holds this many (store.tables).
MAX_CLIENT_NAME = 200
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


class ClientNameRefused(ValueError):
    """A client_name this service will not show; the message says why."""


def clean_client_name(value: object) -> str | None:
    """The name to store and show, or None for no name; ClientNameRefused otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ClientNameRefused("client_name must be a string")
    if len(value) > MAX_CLIENT_NAME:
        raise ClientNameRefused(f"client_name is longer than {MAX_CLIENT_NAME} characters")
    hidden = next((char for char in value if is_hidden(char)), None)
    if hidden is not None:
        raise ClientNameRefused(
            f"client_name holds U+{ord(hidden):04X}, a control, formatting or other"
            " character that is not shown as itself"
        )
    # A few compatibility characters (U+0958, U+FB2C, ...) normalise to two or three.
    name = unicodedata.normalize("NFC", value).strip()
    if len(name) > MAX_CLIENT_NAME:
        raise ClientNameRefused(
            f"client_name is longer than {MAX_CLIENT_NAME} characters once normalised (NFC)"
        )
    return name or None


def is_hidden(char: str) -> bool:
    """Whether ``char`` is one a client name may not hold."""
    return unicodedata.category(char) in HIDDEN_CATEGORIES
