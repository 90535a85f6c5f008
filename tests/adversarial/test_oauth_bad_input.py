"""Bad input at the OAuth endpoints (interface 4.3-4.6, 7.2; DESIGN: forms): the form parser of
/token and /revoke and the query parser of /authorize always answer the contract's
4xx or 303, and leave every row of every table as it was."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode

import httpx
import pytest
from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.oauth.forms import MAX_FORM_BYTES
from tests.adversarial.conftest import FUZZ, RawClient, assert_clean_headers, snapshot
from tests.conftest import BASE_URL, start_app
from tests.oauth import flows

pytestmark = pytest.mark.anyio

FORM_TYPE = "application/x-www-form-urlencoded"


@dataclass(frozen=True, slots=True)
class Known:
    """Real values junk is mixed with, chosen so that no mix can legitimately succeed:
    A's code comes without its verifier, B's tokens without B's client id."""

    client_a: str
    code_a: str
    client_b: str
    access_b: str
    refresh_b: str
    verifier: str


@pytest.fixture
async def known(client: httpx.AsyncClient) -> Known:
    signed_in = await flows.sign_in(client)
    tokens = await flows.obtain_tokens(client)
    return Known(
        signed_in.client_id,
        signed_in.code,
        tokens.client_id,
        tokens.access,
        tokens.refresh,
        flows.Pkce.new().verifier,
    )


@dataclass(frozen=True, slots=True)
class Ref:
    """A value only the running test knows (a client id, a code): examples are drawn
    before the test runs, so they name it and the test puts it in."""

    name: str


Value = str | Ref
Part = tuple[str, Value] | str


def resolve(value: Value, known: Known) -> str:
    return str(getattr(known, value.name)) if isinstance(value, Ref) else value


# Values and encodings ------------------------------------------------------------------------

# Percent-encoding gone wrong, and the bytes a form body must not hold raw.
GARBAGE = (
    "%",
    "%z",
    "%zz",
    "%FF",
    "%C0%AF",
    "%ED%A0%80",
    "%F4%90%80%80",
    "%00",
    "%0D%0A",
    "%E2%82",
    "\x00",
    "\r\n",
    "\xff",
    "\u00e9",
    "&&",
    "==",
    ";",
    "+",
)
junk_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "a\x00b", "\r\nX-Injected: 1", '"', "'", "\\", "%00"]),
    st.integers(min_value=1, max_value=MAX_FORM_BYTES + 10).map(lambda size: "v" * size),
)
segments = st.one_of(st.sampled_from(GARBAGE), st.text(max_size=8))
content_types = st.one_of(
    st.just(FORM_TYPE),
    st.sampled_from(
        [
            FORM_TYPE + "; charset=utf-8",
            FORM_TYPE.upper(),
            FORM_TYPE + "; charset=latin-1",
            "application/json",
            "multipart/form-data; boundary=x",
            "text/plain",
            "",
        ]
    ),
)


def refs(*names: str) -> st.SearchStrategy[Value]:
    return st.sampled_from([Ref(name) for name in names])


@st.composite
def parts(draw: st.DrawFn, names: Sequence[str], values: st.SearchStrategy[Value]) -> list[Part]:
    """Known and unknown names with real or junk values, sometimes repeated, with raw
    garbage put between them."""
    pairs: list[Part] = list(
        draw(
            st.lists(
                st.tuples(st.sampled_from(names) | st.text(max_size=8), values | junk_text),
                max_size=8,
            )
        )
    )
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        pairs.insert(draw(st.integers(min_value=0, max_value=len(pairs))), draw(segments))
    return pairs


@st.composite
def forms(
    draw: st.DrawFn,
    names: Sequence[str],
    values: st.SearchStrategy[Value],
    bases: Sequence[list[Part]],
) -> list[Part]:
    """Junk, or a well-formed request with parameters dropped, added or repeated: the
    second kind gets past the parser to the checks behind it."""
    extra = draw(parts(names, values))
    if not draw(st.booleans()):
        return extra
    kept = [part for part in draw(st.sampled_from(bases)) if draw(st.integers(0, 9)) > 0]
    return [*kept, *extra[: draw(st.integers(0, 2))]]


def encode(body: list[Part], known: Known, ascii_only: bool) -> bytes:
    text = "&".join(
        part if isinstance(part, str) else f"{quote(part[0])}={quote(resolve(part[1], known))}"
        for part in body
    )
    return text.encode("ascii", "ignore") if ascii_only else text.encode("utf-8", "surrogatepass")


def _oauth_error(response: httpx.Response) -> str:
    assert response.headers["content-type"] == "application/json", response.text
    body = response.json()
    assert isinstance(body["error"], str)
    assert isinstance(body.get("error_description", ""), str)
    error: str = body["error"]
    return error


# /token ------------------------------------------------------------------------------------

TOKEN_NAMES = (
    "grant_type",
    "client_id",
    "code",
    "redirect_uri",
    "code_verifier",
    "refresh_token",
    "scope",
    "resource",
)
token_values = st.one_of(
    st.sampled_from(
        [
            "authorization_code",
            "refresh_token",
            "client_credentials",
            flows.REDIRECT_URI,
            "email profile",
            "openid admin",
        ]
    ),
    refs("client_a", "code_a", "refresh_b", "access_b", "verifier"),
)


# A's code without its verifier, B's refresh token in A's name: nothing can succeed.
TOKEN_BASES: list[list[Part]] = [
    [
        ("grant_type", "authorization_code"),
        ("client_id", Ref("client_a")),
        ("code", Ref("code_a")),
        ("redirect_uri", flows.REDIRECT_URI),
        ("code_verifier", Ref("verifier")),
    ],
    [
        ("grant_type", "refresh_token"),
        ("client_id", Ref("client_a")),
        ("refresh_token", Ref("refresh_b")),
    ],
]


@hypothesis_settings(FUZZ, max_examples=150)
@given(
    body=forms(TOKEN_NAMES, token_values, TOKEN_BASES),
    ascii_only=st.booleans(),
    content_type=content_types,
    basic=st.none() | st.sampled_from(["", "\x00", "fdc_nobody"]) | refs("client_a"),
)
async def test_any_token_form_is_refused_and_stores_nothing(
    app: Frontdesk,
    client: httpx.AsyncClient,
    known: Known,
    body: list[Part],
    ascii_only: bool,
    content_type: str,
    basic: Value | None,
) -> None:
    """Any junk token form: 400 or 401 with an OAuth error, and no row changes."""
    headers = {"content-type": content_type}
    if basic is not None:
        user = resolve(basic, known)
        headers["authorization"] = "Basic " + base64.b64encode(f"{user}:".encode()).decode()
    before = await snapshot(app)
    response = await client.post(
        flows.oauth_path("token"), content=encode(body, known, ascii_only), headers=headers
    )
    assert response.status_code in (400, 401), (response.status_code, response.text)
    error = _oauth_error(response)
    event(f"{response.status_code} {error}")
    assert (response.status_code == 401) == (error == "invalid_client"), response.text
    assert "no-store" in response.headers["cache-control"]
    assert await snapshot(app) == before


# /revoke -----------------------------------------------------------------------------------


@hypothesis_settings(FUZZ, max_examples=120)
@given(
    body=forms(
        ("token", "client_id", "token_type_hint"),
        refs("client_a", "access_b", "refresh_b", "code_a"),
        [
            [("token", Ref(token)), ("client_id", Ref("client_a"))]
            for token in ("access_b", "refresh_b", "code_a")
        ],
    ),
    ascii_only=st.booleans(),
    content_type=content_types,
)
async def test_any_revocation_form_changes_nothing_it_should_not(
    app: Frontdesk,
    client: httpx.AsyncClient,
    known: Known,
    body: list[Part],
    ascii_only: bool,
    content_type: str,
) -> None:
    """Junk revocations, and B's tokens revoked by A: 200, 400 or 401, no row changes."""
    raw = encode(body, known, ascii_only)
    before = await snapshot(app)
    response = await client.post(
        flows.oauth_path("revoke"), content=raw, headers={"content-type": content_type}
    )
    event(f"status {response.status_code}")
    if response.status_code == 200:
        assert response.content == b""
        form = dict(parse_qsl(raw.decode("ascii"), keep_blank_values=True))
        assert form["client_id"] == known.client_a
    else:
        assert response.status_code in (400, 401), (response.status_code, response.text)
        _oauth_error(response)
    assert await snapshot(app) == before


async def test_the_tokens_of_b_outlive_revocation_in_the_name_of_a(
    client: httpx.AsyncClient, known: Known
) -> None:
    """Control for the revocation property: B's tokens are live, and A cannot end them."""
    response = await flows.revoke(client, known.refresh_b, known.client_a)
    assert response.status_code == 200
    assert (await flows.whoami(client, known.access_b)).status_code == 200


# /authorize --------------------------------------------------------------------------------

AUTHORIZE_NAMES = (
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "scope",
    "state",
    "resource",
)
CHALLENGE = flows.Pkce.new().challenge
authorize_values = st.one_of(
    st.sampled_from(
        [
            "code",
            "token",
            flows.REDIRECT_URI,
            flows.REDIRECT_URI + "/",
            CHALLENGE,
            "S256",
            "plain",
            "email",
            flows.mcp_url(),
        ]
    ),
    refs("client_a", "client_b"),
)
VALID_QUERY: list[Part] = [
    (name, Ref("client_a") if name == "client_id" else value)
    for name, value in flows.authorize_params("-", flows.Pkce.new()).items()
]


@hypothesis_settings(FUZZ, max_examples=150)
@given(query=forms(AUTHORIZE_NAMES, authorize_values, [VALID_QUERY]))
async def test_any_authorize_query_is_a_page_or_a_redirect_and_stores_nothing(
    app: Frontdesk, raw_client: RawClient, known: Known, query: list[Part]
) -> None:
    """Any authorize query: a page or a 303 to the registered URI, clean, nothing stored."""
    before = await snapshot(app)
    raw_client.raw.query = encode(query, known, ascii_only=False)
    response = await raw_client.client.get(flows.oauth_path("authorize"))
    assert_clean_headers(raw_client.raw.headers())
    assert response.status_code in (200, 303, 400), (response.status_code, response.text)
    event(f"status {response.status_code}")
    if response.status_code == 303:
        location = response.headers["location"]
        base, question, sent = location.partition("?")
        assert base == flows.REDIRECT_URI, location
        assert question
        # Exactly the registered URI plus encoded parameters.
        assert urlencode(parse_qsl(sent, keep_blank_values=True)) == sent
        assert dict(parse_qsl(sent))["iss"] == flows.issuer()
    else:
        assert response.headers["content-type"].startswith("text/html")
        assert "location" not in response.headers
        assert response.headers["x-frame-options"] == "DENY"
    assert await snapshot(app) == before


# Targeted, on every database backend ---------------------------------------------------------


@pytest.fixture
async def any_backend(
    database_url: str, make_settings: Callable[..., Settings]
) -> AsyncIterator[tuple[Frontdesk, httpx.AsyncClient]]:
    """An app on SQLite, then on PostgreSQL (which refuses a NUL in any text it is sent)."""
    app = await start_app(make_settings(database_url=database_url))
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.11", 40004))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield app, client
    finally:
        await app.services.stop()


def targeted_forms(known: Known) -> dict[str, list[bytes]]:
    """Bodies for each form endpoint: repeated, NUL-laden, huge, badly encoded."""
    a, code = quote(known.client_a).encode(), quote(known.code_a).encode()
    redirect = quote(flows.REDIRECT_URI, safe="").encode()
    exchange = b"grant_type=authorization_code&client_id=" + a + b"&redirect_uri=" + redirect
    junk = [
        b"",
        b"%",
        b"%%",
        b"&&&",
        b"=&=&=",
        b"\x00",
        b"\xff\xfe",
        b"%FF=%FE",
        b"%C0%AF=1",
        b"%ED%A0%80=1",
        b"a=" + b"v" * MAX_FORM_BYTES,
        b"a=" + b"%00" * (MAX_FORM_BYTES // 3 - 1),
    ]
    return {
        "token": [
            *junk,
            exchange + b"&grant_type=refresh_token",
            exchange + b"&code=" + code + b"&code=" + code + b"&code_verifier=" + b"v" * 43,
            exchange + b"&code=" + code + b"%00&code_verifier=" + b"v" * 43,
            exchange + b"&code=%00&code_verifier=%00",
            exchange + b"&code=" + code + b"&code_verifier=" + b"%C3%A9" * 50,
            b"grant_type=refresh_token&client_id=" + a + b"&refresh_token=%00",
            b"grant_type=refresh_token&client_id=" + a + b"&refresh_token=fdrt_%00" + b"x" * 40,
            b"grant_type=refresh_token&client_id=" + a + b"%00&refresh_token=x",
            b"grant_type=refresh_token&client_id=" + a + b"&refresh_token=x&scope=%00",
            b"grant_type=%00&client_id=" + a,
            b"grant_type=authorization_code&client_id=" + b"c" * 10_000,
        ],
        "revoke": [
            *junk,
            b"token=%00&client_id=" + a,
            b"token=fdat_%00&client_id=" + a,
            b"token=" + b"t" * 15_000 + b"&client_id=" + a,
            b"token=x&client_id=" + a + b"&client_id=" + a,
            b"token=x&client_id=%00",
        ],
        "consent": [*junk, b"flow=%00&decision=allow", b"flow=" + b"f" * 10_000],
        "login": [*junk, b"flow=%00&email=a%00%40b.example", b"flow=x.y&email=%FF"],
    }


BASIC_HEADERS = (
    "Basic",
    "Basic %%%",
    "Basic " + base64.b64encode(b"\xff:").decode(),
    "Basic " + base64.b64encode(b"fdc_x\x00:").decode(),
    "Basic " + base64.b64encode(b"%00:").decode(),
    "Basic " + "A" * 10_000,
    "Basic " + base64.b64encode(b":" * 100).decode(),
)


async def test_targeted_bad_forms_store_nothing_on_any_backend(
    any_backend: tuple[Frontdesk, httpx.AsyncClient],
) -> None:
    """NULs, bad UTF-8, repeats, oversize and odd Basic auth: 4xx, no 5xx, nothing stored."""
    app, client = any_backend
    signed_in = await flows.sign_in(client)
    tokens = await flows.obtain_tokens(client)
    known = Known(
        signed_in.client_id, signed_in.code, tokens.client_id, tokens.access, tokens.refresh, ""
    )
    before = await snapshot(app)
    for endpoint, bodies in targeted_forms(known).items():
        for body in bodies:
            response = await client.post(
                flows.oauth_path(endpoint), content=body, headers={"content-type": FORM_TYPE}
            )
            allowed = (200, 400, 401) if endpoint == "revoke" else (400, 401)
            assert response.status_code in allowed, (endpoint, body[:80], response.text[:200])
    for authorization in BASIC_HEADERS:
        for endpoint in ("token", "revoke"):
            response = await client.post(
                flows.oauth_path(endpoint),
                content=b"grant_type=refresh_token&refresh_token=x&token=x",
                headers={"content-type": FORM_TYPE, "authorization": authorization},
            )
            assert response.status_code in (400, 401), (endpoint, authorization[:40])
    assert await snapshot(app) == before


async def test_targeted_bad_queries_and_paths_store_nothing_on_any_backend(
    any_backend: tuple[Frontdesk, httpx.AsyncClient],
) -> None:
    """Junk authorize queries and tenant keys: page, 303 or 404, never 5xx, nothing stored."""
    app, client = any_backend
    client_id = await flows.register(client)
    valid = flows.authorize_params(client_id, flows.Pkce.new())
    before = await snapshot(app)
    queries = [
        {**valid, "client_id": "fdc_%00"},
        {**valid, "client_id": client_id + "\x00"},
        {**valid, "client_id": "c" * 30_000},
        {**valid, "redirect_uri": flows.REDIRECT_URI + "\x00"},
        {**valid, "state": "\x00" * 100},
        {**valid, "state": "s" * 30_000},
        {**valid, "scope": "email\x00"},
        {**valid, "resource": "\x00"},
        {**valid, "code_challenge": "\x00" * 43},
    ]
    for query in queries:
        response = await flows.authorize(client, query)
        assert response.status_code in (200, 303, 400), (query, response.text[:200])
    for raw in (b"client_id=%FF%FE", b"%00=%00", b"client_id=" + quote(client_id).encode() * 2):
        response = await client.get(flows.oauth_path("authorize") + "?" + raw.decode("latin-1"))
        assert response.status_code == 400
    for tenant in ("ini%00tech", "%FF", "x" * 5000, "initech%00", "%2e%2e"):
        for path in (f"/v1/{tenant}/mcp", f"/v1/{tenant}/oauth/token"):
            response = await client.post(path, content=b"{}", headers={"content-type": FORM_TYPE})
            assert response.status_code == 404, path[:60]
        response = await client.get(f"/v1/{tenant}/oauth/authorize")
        assert response.status_code == 404
    assert await snapshot(app) == before
