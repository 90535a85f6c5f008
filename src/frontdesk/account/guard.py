"""Whether a form posted to the account page came from the account page itself.

Two checks, each enough on its own to stop another site's form, so that a slip in one
leaves the other (OWASP's CSRF cheat sheet: a token, and a check of the request's source):

- the CSRF token of the session (oauth.account_session), compared in constant time;
- the request's source: its ``Origin`` is this service's own. Our pages send no Referer
  (``Referrer-Policy: no-referrer``), and under that policy a browser sends
  ``Origin: null`` with a POST (Fetch, "append a request Origin header"): "null" is then
  taken only with ``Sec-Fetch-Site: same-origin`` (Fetch Metadata Request Headers), which
  the browser sets itself and no page can forge. A POST without an Origin header is no
  browser's form, and is refused too.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request


def own_origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


def from_own_page(request: Request, origin: str) -> bool:
    sent = request.headers.get("origin")
    site = request.headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return False
    if sent == origin:
        return True
    return sent == "null" and site == "same-origin"
