"""Bad input at client registration (interface 2.3, 4.4; DESIGN: redirect URIs): only a valid
registration is stored, and a redirect URI is accepted exactly when it is an https URI,
or an http one on a loopback host, with no userinfo, no fragment and nothing that is
not a URI character."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import httpx
import pytest
from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from frontdesk.app import Frontdesk
from frontdesk.oauth.register import MAX_REDIRECT_URIS
from tests.adversarial import targets
from tests.adversarial.conftest import FUZZ, snapshot
from tests.oauth import flows

pytestmark = pytest.mark.anyio


@pytest.fixture
async def company_loaded(app: Frontdesk) -> None:
    """The company is loaded before the first snapshot: its first load records its tools'
    versions (tool change control), which is the catalog's doing, not the registration's."""
    assert await app.services.registry.active(flows.TENANT) is not None


# Each part of a redirect URI: forms that keep it valid, and forms attacks use.
PARTS: tuple[tuple[list[str], list[str]], ...] = (
    (["https", "http", "HTTPS", "Http"], ["javascript", "data", "file", "ftp", "ws", ""]),
    (["://"], [":", ":/", ":///", "//", ""]),
    ([""], ["user@", "user:pw@", "good.example@", ":@", "@", "a%40b@"]),
    (
        [
            "app.example",
            "APP.Example",
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.0.0.2",
            "[::1]",
            "[0:0:0:0:0:0:0:1]",
            "xn--80ak6aa92e.com",
            "%65vil.example",
        ],
        [
            "localhost.",
            "localhost.evil.example",
            "127.1",
            "0.0.0.0",  # noqa: S104 -- a host under test; nothing binds to it
            "10.0.0.1",
            "[::]",
            "[::1",
            "::1",
            "\u0430pple.com",
            "b\u00fccher.example",
            "exa mple.com",
            "good.example\\.evil.example",
            "evil.example[::1]",
            "[::1]evil",
            "",
        ],
    ),
    (["", ":443", ":0", ":65535", ":"], [":65536", ":8o", ":-1", ":80:90", ": 80"]),
    (["", "/", "/cb", "/cb/", "/a/../cb", "/c%2Fb", "//evil.example"], ["/\u00e9", "/c b"]),
    (
        ["", "?x=1", "?", "?a=@b", "%0d%0aSet-Cookie:x=1"],
        ["#", "#frag", "?a=1#b", "\r\n", '"', "'"],
    ),
)
INJECTED = ["\r\n", "\n", "\t", " ", "\x00", '"', "<", ">", "\\", "^", "`", "{", "|", "\u00e9"]


@st.composite
def redirect_uris(draw: st.DrawFn) -> str:
    """Redirect URIs built from parts, each part sometimes one an attack uses, sometimes
    with a character slipped in or padded past the length limit."""
    uri = "".join(
        draw(st.sampled_from(bad if draw(st.integers(0, 7)) == 0 else good)) for good, bad in PARTS
    )
    if draw(st.integers(0, 7)) == 0:
        where = draw(st.integers(min_value=0, max_value=len(uri)))
        uri = uri[:where] + draw(st.sampled_from(INJECTED)) + uri[where:]
    if draw(st.integers(0, 19)) == 0:
        uri += "a" * draw(st.sampled_from([1900, 2000 - len(uri), 2001 - len(uri), 5000]))
    return uri


any_uri = st.one_of(redirect_uris(), st.text(max_size=60))


@hypothesis_settings(FUZZ, max_examples=2000)
@given(any_uri)
def test_a_redirect_uri_is_accepted_exactly_when_it_is_valid(uri: str) -> None:
    """The validator agrees with the contract's rule, stated independently, both ways."""
    accepted = targets.registration_document({"redirect_uris": [uri]})
    event("accepted" if accepted else "refused")
    assert accepted == targets.acceptable_redirect_uri(uri), uri


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["App\r\nX-Injected: 1", "a\x00b", "\u202eevil", "x" * 200, "x" * 201]),
    json_values,
)


GOOD_URIS = st.sampled_from(
    [flows.REDIRECT_URI, "https://app.example/cb", "http://localhost:6274/oauth/callback"]
)
# Each member of a registration: values that keep it valid, and values that do not.
MEMBERS: dict[str, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
    "redirect_uris": (
        st.lists(GOOD_URIS | redirect_uris(), min_size=1, max_size=3),
        st.lists(any_uri, max_size=MAX_REDIRECT_URIS + 1) | json_values,
    ),
    "client_name": (
        st.text(
            st.characters(min_codepoint=0x20, exclude_characters="\x7f", exclude_categories=["Cs"]),
            max_size=30,
        ),
        names,
    ),
    "token_endpoint_auth_method": (
        st.just("none"),
        st.sampled_from(["client_secret_basic", "private_key_jwt"]) | json_values,
    ),
    "grant_types": (
        st.lists(st.sampled_from(["authorization_code", "refresh_token"])),
        st.lists(st.sampled_from(["authorization_code", "implicit"]), min_size=1) | json_values,
    ),
    "response_types": (
        st.just(["code"]),
        st.lists(st.sampled_from(["code", "token"])) | json_values,
    ),
    "logo_uri": (st.text(max_size=10), json_values),
}


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Registration documents: each member right, wrong, missing or of the wrong type."""
    document: dict[str, Any] = {}
    for name, (good, bad) in MEMBERS.items():
        choice = draw(st.integers(0, 9))
        if choice == 0 and name != "redirect_uris":
            continue
        document[name] = draw(bad if choice == 1 or (choice == 0) else good)
    if draw(st.integers(0, 19)) == 0:
        return draw(json_values)
    return document


def is_valid_registration(document: Any) -> bool:
    """interface 2.3 and DESIGN, stated apart from the validator: redirect URIs decide; a name
    must be text a consent page shows as itself, an auth method a string (answered with
    none), more grants and response types than ours accepted as long as ours are among
    them (RFC 7591 3.2.1)."""
    if not isinstance(document, dict):
        return False
    name = document.get("client_name")
    if name is not None and (
        not isinstance(name, str)
        or len(name) > 200
        or len(unicodedata.normalize("NFC", name)) > 200
        or any(unicodedata.category(char) in {"Cc", "Cf", "Co", "Cs", "Zl", "Zp"} for char in name)
    ):
        return False
    method = document.get("token_endpoint_auth_method")
    if method is not None and not isinstance(method, str):
        return False
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
        return False
    if not all(isinstance(uri, str) and targets.acceptable_redirect_uri(uri) for uri in uris):
        return False
    for member, ours in (("grant_types", "authorization_code"), ("response_types", "code")):
        declared = document.get(member)
        if declared is not None and (
            not isinstance(declared, list)
            or not all(isinstance(item, str) for item in declared)
            or ours not in declared
        ):
            return False
    return True


@hypothesis_settings(FUZZ, max_examples=600)
@given(documents())
def test_the_validator_accepts_exactly_the_valid_documents(document: Any) -> None:
    """parse_registration and the contract's rule agree on every generated document."""
    accepted = targets.registration_document(document)
    event("accepted" if accepted else "refused")
    assert accepted == is_valid_registration(document), document


@pytest.mark.usefixtures("company_loaded")
@hypothesis_settings(FUZZ, max_examples=150)
@given(documents())
async def test_only_valid_registrations_are_stored(
    app: Frontdesk, client: httpx.AsyncClient, document: Any
) -> None:
    """A valid document adds exactly its client; anything else is a 400 and changes nothing."""
    before = await snapshot(app)
    response = await client.post(
        flows.oauth_path("register"),
        content=json.dumps(document).encode(),
        headers={"content-type": "application/json"},
    )
    after = await snapshot(app)
    event(f"status {response.status_code}")
    if is_valid_registration(document):
        assert response.status_code == 201, response.text
        added = [row for row in after["oauth_clients"] if row not in before["oauth_clients"]]
        assert len(added) == 1
        assert repr(response.json()["client_id"]) in added[0]
        assert response.json()["redirect_uris"] == document["redirect_uris"]
        # Besides the client, at most the audit log records the registration.
        for name, rows in before.items():
            if name == "oauth_clients" or "audit" in name:
                assert set(rows) <= set(after[name]), name
            else:
                assert after[name] == rows, name
    else:
        assert response.status_code == 400, response.text
        assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
        assert after == before


NASTY = (
    "javascript:alert(1)",
    "javascript://app.example/%0aalert(1)",
    "data:text/html;base64,PHNjcmlwdD4=",
    "file:///etc/passwd",
    "http://app.example/cb",
    "http://localhost.evil.example/cb",
    "https://\u0430pple.com/cb",
    "https://b\u00fccher.example/cb",
    "https://good.example@evil.example/cb",
    "https://good.example\\@evil.example/cb",
    "https://good.example\\.evil.example/cb",
    "http://evil.example[::1]/cb",
    "http://[::1]evil.example/cb",
    "https://app.example/cb#frag",
    "https://app.example/cb\r\nSet-Cookie: x=1",
    "https://app.example/c b",
    'https://app.example/cb"onload="x',
    "https://app.example/<script>",
    "https://app.example/" + "a" * 2000,
    " https://app.example/cb",
    "https://app.example/cb\x00",
)
ACCEPTED = (
    "https://app.example/cb%0d%0aSet-Cookie:x=1",
    "https://xn--80ak6aa92e.com/cb",
    "http://[::1]:33418/cb",
    "https://app.example/cb?x=%22",
)


@pytest.mark.usefixtures("company_loaded")
async def test_nasty_redirect_uris_are_refused_and_encoded_ones_kept(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Dangerous, confusable and injected URIs are refused; percent-encoded ones are kept."""
    before = await snapshot(app)
    for uri in NASTY:
        response = await flows.register_response(client, {"redirect_uris": [uri]})
        assert response.status_code == 400, uri
        assert response.json()["error"] == "invalid_redirect_uri", uri
    assert await snapshot(app) == before
    for uri in ACCEPTED:
        response = await flows.register_response(client, {"redirect_uris": [uri]})
        assert response.status_code == 201, uri
        assert response.json()["redirect_uris"] == [uri]
