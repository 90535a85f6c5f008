"""One rule for the client name the consent page shows (oauth.client_names), applied to
dynamic registration (RFC 7591) and to Client ID Metadata Documents alike."""

from __future__ import annotations

import unicodedata
from typing import Any

import httpx
import pytest

from frontdesk.oauth.client_document_rules import parse_document
from frontdesk.oauth.client_names import ClientNameRefused, clean_client_name
from frontdesk.oauth.errors import InvalidClientMetadata
from frontdesk.oauth.register import parse_registration
from tests.oauth import flows

URL = "https://client.example/oauth/client.json"
REDIRECT = "http://127.0.0.1:33418/callback"

# One of each kind a name may not hold, as the attack that uses it.
HIDDEN = {
    "right-to-left override": "Example \u202edetcejeR",
    "left-to-right embedding": "\u202aClaude",
    "pop directional formatting": "Claude\u202c",
    "right-to-left isolate": "Claude \u2067x\u2069",
    "first strong isolate": "\u2068Claude",
    "left-to-right mark": "Claude\u200e",
    "right-to-left mark": "\u200fClaude",
    "arabic letter mark": "Claude\u061c",
    "zero-width space": "Cl\u200baude",
    "zero-width non-joiner": "Cl\u200caude",
    "zero-width joiner": "Cl\u200daude",
    "word joiner": "Cla\u2060ude",
    "byte order mark": "\ufeffClaude",
    "soft hyphen": "Cla\u00adude",
    "NUL": "Claude\x00",
    "line feed": "Example\nApproved by your bank",
    "tab": "Claude\tDesktop",
    "C1 next line": "Claude\u0085",
    "delete": "Claude\x7f",
    "line separator": "Claude\u2028Desktop",
    "paragraph separator": "Claude\u2029Desktop",
    "private use": "Claude\ue000",
    "supplementary private use": "Claude\U000f0000",
    "tag character": "Claude\U000e0041",
}


def document(client_name: Any) -> dict[str, Any]:
    return {"client_id": URL, "redirect_uris": [REDIRECT], "client_name": client_name}


@pytest.mark.parametrize("name", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_name_with_a_hidden_character_is_refused_naming_it(name: str) -> None:
    """Controls, bidi controls, invisible and private-use characters refuse the name."""
    hidden = next(char for char in name if unicodedata.category(char)[0] in "CZ" and char != " ")
    with pytest.raises(ClientNameRefused, match=f"U\\+{ord(hidden):04X}"):
        clean_client_name(name)


@pytest.mark.parametrize("name", HIDDEN.values(), ids=HIDDEN.keys())
def test_registration_refuses_a_hidden_character_as_invalid_client_metadata(name: str) -> None:
    """RFC 7591 3.2.2: invalid_client_metadata, naming client_name; never cleaned."""
    with pytest.raises(InvalidClientMetadata) as refused:
        parse_registration({"redirect_uris": [REDIRECT], "client_name": name}, [])
    assert refused.value.description.startswith("client_name ")


@pytest.mark.parametrize("name", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_metadata_document_with_a_hidden_character_is_refused(name: str) -> None:
    """The same rule for a Client ID Metadata Document: the document is refused."""
    with pytest.raises(ValueError, match="client_name"):
        parse_document(URL, document(name))


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("Claude", "Claude"),
        ("  Claude Desktop \u3000", "Claude Desktop"),
        # Decomposed accents are composed: one name, however it was typed.
        ("Cafe\u0301 Cre\u0300me", "Caf\u00e9 Cr\u00e8me"),
        ("\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u65e5\u672c\u8a9e", None),
        ("Claude \U0001f916", None),
        ("n" * 200, None),
        ("   ", ""),
        ("", ""),
        (None, ""),
    ],
)
def test_a_shown_name_is_trimmed_and_normalised(sent: str | None, shown: str | None) -> None:
    """Surrounding whitespace goes, NFC applies; no name, an empty or blank one is None."""
    expected = sent if shown is None else (shown or None)
    assert clean_client_name(sent) == expected
    registered = parse_registration({"redirect_uris": [REDIRECT], "client_name": sent}, [])
    assert registered.client_name == expected
    assert parse_document(URL, document(sent)).client_name == expected


@pytest.mark.parametrize(
    "name",
    [
        "n" * 201,
        # 200 characters as sent, 400 once normalised (U+0958 is QA plus a nukta in NFC).
        "\u0958" * 200,
        42,
        ["Claude"],
        {"en": "Claude"},
        True,
    ],
    ids=["too long", "too long once normalised", "number", "list", "object", "boolean"],
)
def test_a_long_name_or_one_that_is_not_a_string_is_refused(name: object) -> None:
    """Not cut nor dropped: a client that sent it can say what it meant."""
    with pytest.raises(InvalidClientMetadata) as refused:
        parse_registration({"redirect_uris": [REDIRECT], "client_name": name}, [])
    assert refused.value.description.startswith("client_name ")
    with pytest.raises(ValueError, match="client_name"):
        parse_document(URL, document(name))


@pytest.mark.anyio
async def test_the_registration_endpoint_answers_400_naming_client_name(
    client: httpx.AsyncClient,
) -> None:
    """Over HTTP: 400 invalid_client_metadata naming the field and the character."""
    response = await flows.register_response(
        client, {"redirect_uris": [flows.REDIRECT_URI], "client_name": "Cl\u200baude"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert "client_name" in response.json()["error_description"]
    assert "U+200B" in response.json()["error_description"]


@pytest.mark.anyio
async def test_the_registration_endpoint_stores_the_cleaned_name(
    client: httpx.AsyncClient,
) -> None:
    """Over HTTP: the name registered and answered is trimmed and composed."""
    response = await flows.register_response(
        client, {"redirect_uris": [flows.REDIRECT_URI], "client_name": " Cafe\u0301 "}
    )
    assert response.status_code == 201, response.text
    assert response.json()["client_name"] == "Caf\u00e9"
