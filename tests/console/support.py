"""What the console's tests share: a company with a console, signing in through its dev
login, and reading the pages' forms."""

from __future__ import annotations

import html
import re

import httpx

from tests.conftest import BASE_URL
from tests.oauth import flows

SAME_ORIGIN = {"origin": BASE_URL, "sec-fetch-site": "same-origin"}
STAFF = "milton@vandelay.example"

# Two companies with a console each: vandelay's staff are its domain, pendant's one person.
CONSOLE_COMPANIES = """
companies:
  - tenant_key: vandelay
    name: Vandelay Industries
    signin:
      login: {type: dev}
    console:
      login: {type: dev}
      staff: {domains: [vandelay.example]}
    tools:
      - name: echo
        description: Repeats text.
        annotations:
          title: Echo
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        input_schema:
          type: object
          properties: {text: {type: string}}
          required: [text]
        provider: {type: python, target: "tests.fixtures.tools:echo"}
      - name: whoami
        description: Says who is asking.
        access: personal
        annotations:
          title: Whoami
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: true
        provider: {type: python, target: "tests.fixtures.tools:whoami"}
  - tenant_key: pendant
    name: Pendant Publishing
    console:
      login: {type: dev}
      staff: {emails: [elaine@pendant.example]}
    tools:
      - name: echo
        description: Repeats text.
        annotations:
          title: Echo
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        provider: {type: python, target: "tests.fixtures.tools:echo"}
"""


async def console_sign_in(
    client: httpx.AsyncClient, tenant: str = "vandelay", email: str = STAFF
) -> httpx.Response:
    """Through the company's dev login: the answer to the login form."""
    started = await client.get("/console/signin", params={"company": tenant})
    assert started.status_code == 303, started.text
    form = await client.get(started.headers["location"])
    assert form.status_code == 200, form.text
    page = flows.form_of(form.text)
    assert page.action is not None
    return await client.post(
        page.action,
        data={"flow": page.inputs["flow"], "email": email, "name": ""},
        headers={**flows.FORM, **SAME_ORIGIN},
    )


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return html.unescape(found.group(1))


async def post(
    client: httpx.AsyncClient,
    path: str,
    data: dict[str, str],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(
        path, data=data, headers={**flows.FORM, **(SAME_ORIGIN if headers is None else headers)}
    )
