"""What the consent page tells the customer before they allow a client (oauth.consent_page,
oauth.client_display): the company's personal tools by title, each that may change or
delete something marked; a metadata-document client by its verified host, its own name
second; a registered client marked unverified; a link to the account page; and the account
page naming each client as the consent page did."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import CompanyDefinition
from frontdesk.companies.files import read_companies_file
from frontdesk.oauth.client_display import UNNAMED, ClientDisplay, client_display
from frontdesk.oauth.consent_page import PersonalTool, personal_tools
from tests.conftest import BASE_URL
from tests.oauth import flows
from tests.oauth.conftest import Serve
from tests.oauth.test_account_page import signed_in_page
from tests.support.https_documents import Answer, HttpsDocuments, run_https_documents

pytestmark = pytest.mark.anyio

TENANT = "bakery"
KIOSK = "kiosk"
TOOL = 'provider: {type: python, target: "tests.fixtures.tools:whoami"}'
BAKERY = f"""
companies:
  - tenant_key: {TENANT}
    name: Corner Bakery
    signin:
      login: {{type: dev}}
    tools:
      - name: todays_menu
        title: Today's menu
        description: Public, so not the customer's to allow.
        annotations:
          title: Today's menu
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        {TOOL}
      - name: order_status
        title: My order status
        description: Reads only.
        access: personal
        annotations:
          title: My order status
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        {TOOL}
      - name: cancel_order
        title: Cancel my order
        description: Destructive, as the company says.
        access: personal
        annotations:
          title: Cancel my order
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: false
        {TOOL}
      - name: add_note
        description: Adds only, titled in its annotations.
        access: personal
        annotations:
          {{title: Add a note to my order, readOnlyHint: false, destructiveHint: false,
          idempotentHint: false, openWorldHint: false}}
        {TOOL}
      - name: redeem_points
        description: Described as one that may destroy.
        access: personal
        annotations:
          title: redeem_points
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: false
        {TOOL}
  - tenant_key: {KIOSK}
    name: Station Kiosk
    signin:
      login: {{type: dev}}
    tools:
      - name: timetable
        description: Public only.
        annotations:
          title: Timetable
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        {TOOL}
"""
# In the catalog's order, by name (tools/list's stable order).
EXPECTED_TOOLS = [
    PersonalTool("Add a note to my order", destructive=False),
    PersonalTool("Cancel my order", destructive=True),
    PersonalTool("My order status", destructive=False),
    PersonalTool("redeem_points", destructive=True),
]
DOCUMENT_PATH = "/assistant/client.json"
VOID = frozenset({"input", "br", "img", "meta", "link", "hr"})


class _Elements(HTMLParser):
    """Each element's class list and text, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}, []))
        if tag not in VOID:
            self._open.append(len(self.found) - 1)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for index in self._open:
            self.found[index][2].append(data)


def elements(
    page: str, tag: str | None = None, css_class: str | None = None
) -> Iterator[tuple[dict[str, str], str]]:
    """(attributes, text with whitespace collapsed) of each matching element."""
    parser = _Elements()
    parser.feed(page)
    parser.close()
    for found_tag, attributes, texts in parser.found:
        if tag is not None and found_tag != tag:
            continue
        if css_class is not None and css_class not in attributes.get("class", "").split():
            continue
        yield attributes, " ".join("".join(texts).split())


def texts(page: str, tag: str | None = None, css_class: str | None = None) -> list[str]:
    return [text for _, text in elements(page, tag, css_class)]


@pytest.fixture
async def bakery(app: Frontdesk, tmp_path: Path) -> None:
    await flows.add_companies(app, tmp_path, BAKERY)


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpsDocuments]:
    """Where a metadata-document client publishes itself, trusted as in
    test_client_document_endpoints."""
    with run_https_documents(tmp_path) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        yield server


def publish(documents: HttpsDocuments, client_name: str) -> str:
    url = documents.url(DOCUMENT_PATH)
    documents.serve_json(
        DOCUMENT_PATH,
        {"client_id": url, "client_name": client_name, "redirect_uris": [flows.REDIRECT_URI]},
    )
    return url


# What the page is given ---------------------------------------------------------------------


def test_the_personal_tools_are_listed_by_title_with_mcps_cautious_defaults(
    tmp_path: Path,
) -> None:
    """title, then annotations.title, then name; public tools left out; marked destructive
    unless readOnlyHint is true or destructiveHint false (MCP ToolAnnotations)."""
    path = tmp_path / "bakery.yaml"
    path.write_text(BAKERY, encoding="utf-8")
    definition: CompanyDefinition = read_companies_file(path).companies[0]
    assert personal_tools(ServedCompany(definition, "60/minute")) == EXPECTED_TOOLS


def test_a_metadata_document_client_is_named_by_its_host_and_its_own_name_comes_second() -> None:
    url = "https://assistant.example.com/oauth/client.json"
    assert client_display(url, "Claude") == ClientDisplay(
        name="assistant.example.com",
        verified_host="assistant.example.com",
        calls_itself="Claude",
    )
    # A name that only repeats the host says nothing more.
    assert client_display(url, "Assistant.Example.com").calls_itself is None
    assert client_display(url, None).verified


def test_a_registered_client_is_named_by_its_own_unverified_name() -> None:
    shown = client_display("fdc_registered", "Claude")
    assert (shown.name, shown.verified, shown.calls_itself) == ("Claude", False, None)
    assert client_display("fdc_registered", None).name == UNNAMED


# The page the customer reads ----------------------------------------------------------------


@pytest.mark.usefixtures("bakery")
async def test_the_consent_page_names_each_personal_tool_and_marks_the_destructive(
    client: httpx.AsyncClient,
) -> None:
    client_id = await flows.register(client, TENANT, client_name="Claude")
    page = (await flows.consent_page(client, client_id, flows.Pkce.new(), TENANT)).text

    listed = list(elements(page, "li"))
    tools = [
        (text, "destructive" in attributes.get("class", ""))
        for attributes, text in listed
        if any(text.startswith(tool.title) for tool in EXPECTED_TOOLS)
    ]
    marked = "⚠ can change or delete things"
    assert tools == [
        ("Add a note to my order", False),
        (f"Cancel my order {marked}", True),
        ("My order status", False),
        (f"redeem_points {marked}", True),
    ]
    # The marking is more than colour: a bordered badge with a sign and words.
    assert texts(page, "span", "badge") == [marked, marked]
    assert "Today's menu" not in html.unescape(page)
    assert texts(page, "h1") == ["Allow Claude to use your Corner Bakery account?"]
    assert len(texts(page, css_class="unverified")) == 1
    assert texts(page, css_class="verified") == []


@pytest.mark.usefixtures("bakery")
async def test_a_company_without_personal_tools_names_none(client: httpx.AsyncClient) -> None:
    """The kiosk's only tool is public: the page says what signing in allows in general."""
    client_id = await flows.register(client, KIOSK)
    page = (await flows.consent_page(client, client_id, flows.Pkce.new(), KIOSK)).text
    assert texts(page, "ul", "tools") == []
    assert texts(page, "span", "badge") == []
    assert "use Station Kiosk's assistant tools as you" in texts(page, "li")


async def test_the_consent_page_links_to_the_account_page(client: httpx.AsyncClient) -> None:
    client_id = await flows.register(client)
    page = (await flows.consent_page(client, client_id, flows.Pkce.new())).text
    links = {text: attributes["href"] for attributes, text in elements(page, "a")}
    assert links["your Initech account page"] == f"{BASE_URL}/v1/{flows.TENANT}/account"


async def test_a_metadata_document_client_is_named_alike_on_consent_and_account_pages(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """Consent leads with the verified host and says what the client calls itself; the
    account page, once the customer allowed it, names it the same way (it named it by its
    host alone, and the consent page by the self-chosen name alone)."""
    served = await serve(client_documents_on_loopback=True)
    client_id = publish(documents, "Claude")
    host = urlsplit(client_id).hostname
    consent = await flows.consent_page(served.client, client_id, flows.Pkce.new())
    assert texts(consent.text, "h1") == [f"Allow {host} to use your Initech account?"]
    assert texts(consent.text, css_class="calls-itself") == ["Claude"]
    assert texts(consent.text, css_class="unverified") == []
    (verified,) = texts(consent.text, "div", "verified")
    assert verified.startswith(f"✓ Verified: {host} ")

    await flows.obtain_tokens(served.client, client_id=client_id)
    account = await signed_in_page(served.client)
    assert texts(account, "h2", "client-name") == [host]
    assert texts(account, css_class="calls-itself") == ["Claude"]
    assert texts(account, "div", "verified") == [verified]
    assert re.search(r'class="provenance unverified"', account) is None


async def test_the_account_page_names_a_client_by_its_host_when_its_document_is_gone(
    serve: Serve, documents: HttpsDocuments
) -> None:
    """A second instance, which never fetched the document, finds it gone (404): the page
    still lists the client, verified, by its host, and leaves out the name it cannot read."""
    first = await serve(client_documents_on_loopback=True)
    client_id = publish(documents, "Claude")
    await flows.obtain_tokens(first.client, client_id=client_id)
    documents.serve(DOCUMENT_PATH, Answer(b"", status=404))

    second = await serve(client_documents_on_loopback=True)
    account = await signed_in_page(second.client)
    assert texts(account, "h2", "client-name") == [urlsplit(client_id).hostname]
    assert texts(account, css_class="calls-itself") == []
    assert len(texts(account, "div", "verified")) == 1
    # Fetched by the sign-in on the first instance, then by the second's page, refused.
    assert documents.requests(DOCUMENT_PATH) == 2
