"""Customer sign-in over HTTP, as an MCP client and the customer's browser do it:
register → authorize → consent (Allow) → dev login → code → tokens; and one refresh."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import httpx

from benchkit.processes import BenchError

REDIRECT_URI = "http://127.0.0.1:9/callback"
EMAIL = "bench@example.com"
SUBJECT = f"dev:{EMAIL}"
# Signed-in scenarios spread their requests over this many customers, one token each: as
# many as wrk has connections, so that concurrent calls carry different tokens.
CUSTOMERS = 32


def customer_email(number: int) -> str:
    """The email of the bench's customer ``number`` (1 and up; the first is EMAIL)."""
    return f"bench{number}@example.com"


HTTP_TIMEOUT = 15.0


class _Form(HTMLParser):
    """The action and named inputs of a page's first form."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.inputs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action")
        elif tag == "input" and values.get("name"):
            self.inputs[values["name"]] = values.get("value", "")


def _form(response: httpx.Response, step: str) -> tuple[str, str]:
    """The form's action and its sealed ``flow``."""
    if response.status_code != 200:
        raise BenchError(f"sign-in, {step}: HTTP {response.status_code}: {response.text[:300]}")
    parser = _Form()
    parser.feed(response.text)
    if parser.action is None or "flow" not in parser.inputs:
        raise BenchError(f"sign-in, {step}: no form with a flow on the page")
    return parser.action, parser.inputs["flow"]


def _redirected(response: httpx.Response, step: str) -> str:
    if response.status_code != 303:
        raise BenchError(f"sign-in, {step}: HTTP {response.status_code}: {response.text[:300]}")
    return response.headers["location"]


@dataclass(frozen=True, slots=True)
class SignedIn:
    client_id: str
    access_token: str
    refresh_token: str
    seconds: float


def _authorize(
    browser: httpx.Client, base_url: str, tenant: str, client_id: str
) -> tuple[str, str, tuple[str, str]]:
    """The client sends the browser to authorize: its PKCE verifier, its state, and the
    consent form's action and flow."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    state = secrets.token_urlsafe(8)
    authorize = browser.get(
        f"{base_url}/v1/{tenant}/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "profile email",
            "state": state,
            "resource": f"{base_url}/v1/{tenant}/mcp",
        },
    )
    return verifier, state, _form(authorize, "authorize")


def deny_consent(base_url: str, tenant: str, client_id: str) -> None:
    """A customer who answers Deny at the consent page: the client is sent access_denied."""
    with httpx.Client(timeout=HTTP_TIMEOUT, follow_redirects=False) as browser:
        _verifier, _state, (action, flow) = _authorize(browser, base_url, tenant, client_id)
        back = _redirected(browser.post(action, data={"flow": flow, "decision": "deny"}), "deny")
        if "error=access_denied" not in back:
            raise BenchError(f"consent denied: sent to {back}")


def sign_in(
    base_url: str, tenant: str, email: str = EMAIL, client_id: str | None = None
) -> SignedIn:
    """The whole flow for one customer, with a client registered for it unless given one."""
    started = time.perf_counter()
    oauth = f"{base_url}/v1/{tenant}/oauth"
    # One client plays the MCP client and the browser: it keeps the cookie that binds the
    # sign-in to the browser. Redirects are read, never followed.
    with httpx.Client(timeout=HTTP_TIMEOUT, follow_redirects=False) as browser:
        if client_id is None:
            registered = browser.post(
                f"{oauth}/register",
                json={"redirect_uris": [REDIRECT_URI], "client_name": "Frontdesk bench"},
            )
            if registered.status_code != 201:
                raise BenchError(f"sign-in, register: {registered.status_code} {registered.text}")
            client_id = str(registered.json()["client_id"])
        verifier, state, (action, flow) = _authorize(browser, base_url, tenant, client_id)
        consent = browser.post(action, data={"flow": flow, "decision": "allow"})
        action, flow = _form(browser.get(_redirected(consent, "consent")), "login form")
        login = browser.post(action, data={"flow": flow, "email": email, "name": "Bench"})
        back = _redirected(login, "dev login")
        if not back.startswith(REDIRECT_URI + "?"):
            raise BenchError(f"sign-in: sent to {back} instead of back to the client")
        query = {name: values[0] for name, values in parse_qs(urlsplit(back).query).items()}
        if query.get("state") != state or "code" not in query:
            raise BenchError(f"sign-in: the client got {query}")
        tokens = browser.post(
            f"{oauth}/token",
            data={
                "grant_type": "authorization_code",
                "client_id": client_id,
                "code": query["code"],
                "redirect_uri": REDIRECT_URI,
                "code_verifier": verifier,
            },
        )
        if tokens.status_code != 200:
            raise BenchError(f"sign-in, token: {tokens.status_code} {tokens.text}")
        body = tokens.json()
    elapsed = time.perf_counter() - started
    return SignedIn(client_id, body["access_token"], body["refresh_token"], elapsed)


def check_refresh(base_url: str, tenant: str, client_id: str, token: str) -> None:
    """One refresh grant, as wrk will send it, must return a new pair."""
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        response = client.post(
            f"{base_url}/v1/{tenant}/oauth/token",
            data={"grant_type": "refresh_token", "client_id": client_id, "refresh_token": token},
        )
    body = response.json() if response.status_code == 200 else {}
    if not (
        str(body.get("access_token", "")).startswith("fdat_")
        and str(body.get("refresh_token", "")).startswith("fdrt_")
        and body.get("token_type") == "Bearer"
    ):
        raise BenchError(f"refresh grant: HTTP {response.status_code}: {response.text[:300]}")
