"""A real OpenID Connect provider on loopback, for tests.

Runs the npm package ``oidc-provider`` (see ``oidc_provider/server.mjs``) as a subprocess so
that Frontdesk's OIDC relying-party code is exercised against a spec-complete provider rather than
a mock.
Requires Node.js (20 or later) and npm on PATH.

Typical use::

    with run_oidc_provider(clients=[...], accounts=[{"sub": "alice", ...}]) as provider:
        ...  # point the relying party at provider.issuer
        async with httpx.AsyncClient() as browser:
            callback_url = await complete_login(browser, authorize_url, login="alice")
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import html
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, Any
from urllib.parse import urljoin, urlsplit

import httpx

PROVIDER_DIR = Path(__file__).resolve().parent / "oidc_provider"

_READY_LINE = re.compile(r"^READY (http://127\.0\.0\.1:\d+)$")


class OidcProviderError(RuntimeError):
    """The test provider could not be installed, started or driven."""


class OidcProvider:
    """A running test provider. ``issuer`` is also the base URL of every endpoint."""

    def __init__(self, issuer: str, output: list[str]) -> None:
        self.issuer = issuer
        self._output = output

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def output(self) -> str:
        """Everything the provider process printed so far (handy in assertion messages)."""
        return "".join(list(self._output))


def _pinned_version() -> str | None:
    manifest = json.loads((PROVIDER_DIR / "package.json").read_text())
    version = manifest.get("dependencies", {}).get("oidc-provider")
    return version if isinstance(version, str) else None


def _installed_version() -> str | None:
    installed = PROVIDER_DIR / "node_modules" / "oidc-provider" / "package.json"
    try:
        version = json.loads(installed.read_text()).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def _is_installed() -> bool:
    # package.json pins an exact version; comparing with it (not just "node_modules exists")
    # reinstalls after a version bump and after an interrupted install.
    installed = _installed_version()
    return installed is not None and installed == _pinned_version()


def ensure_installed() -> None:
    """Install the provider's npm dependencies unless they are already in place."""
    if _is_installed():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise OidcProviderError(
            "npm was not found on PATH; the OIDC test provider needs Node.js 20+ and npm "
            "(on Debian: apt-get install nodejs npm)"
        )
    # Parallel test workers may all arrive here at once; npm must not run twice in one folder.
    digest = hashlib.sha256(str(PROVIDER_DIR).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"frontdesk-oidc-provider-{digest}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _is_installed():
            return
        # `npm ci` installs exactly the lockfile and never rewrites it.
        has_lockfile = (PROVIDER_DIR / "package-lock.json").exists()
        command = [npm, "ci" if has_lockfile else "install", "--no-audit", "--no-fund"]
        result = subprocess.run(
            command,
            cwd=PROVIDER_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if result.returncode != 0 or not _is_installed():
            raise OidcProviderError(
                f"{' '.join(command[1:])} failed in {PROVIDER_DIR} "
                f"(exit {result.returncode}):\n{result.stdout}{result.stderr}"
            )


def _pump(stream: IO[str], sink: list[str], lines: queue.Queue[str | None]) -> None:
    # Drain the pipe for the whole life of the process: a full pipe would block the provider.
    for line in stream:
        sink.append(line)
        lines.put(line)
    lines.put(None)


@contextlib.contextmanager
def run_oidc_provider(
    clients: Sequence[Mapping[str, Any]],
    accounts: Sequence[Mapping[str, Any]],
    *,
    require_pkce: bool = True,
    port: int = 0,
    startup_timeout: float = 30.0,
    stop_timeout: float = 5.0,
) -> Iterator[OidcProvider]:
    """Run a provider with the given client registrations and accounts.

    ``clients`` take oidc-provider client metadata (client_id, client_secret, redirect_uris,
    token_endpoint_auth_method, ...). ``accounts`` need a ``sub`` plus any standard claims
    (email, email_verified, name, ...). With ``port=0`` the provider binds a free loopback port
    itself and reports it, so there is no window in which another process can take the port.
    """
    ensure_installed()
    node = shutil.which("node")
    if node is None:
        raise OidcProviderError(
            "node was not found on PATH; the OIDC test provider needs Node.js 20+"
        )

    with tempfile.TemporaryDirectory(prefix="frontdesk-oidc-") as workdir:
        config_path = Path(workdir) / "config.json"
        config = {
            "clients": list(clients),
            "accounts": list(accounts),
            "require_pkce": require_pkce,
        }
        config_path.write_text(json.dumps(config))

        env = {**os.environ, "OIDC_CONFIG": str(config_path), "OIDC_PORT": str(port)}
        process = subprocess.Popen(
            [node, "server.mjs"],
            cwd=PROVIDER_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output: list[str] = []
        lines: queue.Queue[str | None] = queue.Queue()
        pump = threading.Thread(target=_pump, args=(process.stdout, output, lines), daemon=True)
        pump.start()
        try:
            issuer = _wait_until_ready(process, lines, output, startup_timeout)
            yield OidcProvider(issuer, output)
        finally:
            process.terminate()
            try:
                process.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            pump.join(timeout=stop_timeout)
            # Closing the pipe ourselves avoids a ResourceWarning (an error under pytest's
            # filterwarnings=error); only once the pump is done, so it never reads a closed file.
            if process.stdout is not None and not pump.is_alive():
                process.stdout.close()


def _wait_until_ready(
    process: subprocess.Popen[str],
    lines: queue.Queue[str | None],
    output: list[str],
    timeout: float,
) -> str:
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise OidcProviderError(
                f"OIDC test provider not ready after {timeout:.0f}s:\n{''.join(output)}"
            )
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            code = process.wait()
            raise OidcProviderError(
                f"OIDC test provider exited with code {code} before it was ready:\n"
                + "".join(output)
            )
        match = _READY_LINE.match(line.strip())
        if match:
            return match.group(1)


class _FormParser(HTMLParser):
    """Collects the first <form> of a page: its action and named <input> values."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_form = False
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action", "")
            self._in_form = True
        elif tag == "input" and self._in_form and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._in_form:
            self._in_form = False
            self._done = True


def _error_text(page: str) -> str:
    """The error fields of oidc-provider's error page (one <pre> per field), else the raw page."""
    fields = [
        re.sub(r"<[^>]+>", "", field) for field in re.findall(r"<pre>(.*?)</pre>", page, re.S)
    ]
    return html.unescape("; ".join(fields)) if fields else page[:2000]


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def _without_query(url: str) -> tuple[str, str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc, parts.path


async def complete_login(
    client: httpx.AsyncClient,
    authorize_url: str,
    login: str,
    *,
    max_steps: int = 12,
) -> str:
    """Sign in at the provider as account ``login`` (its ``sub``) and grant consent.

    Plays the browser: follows the provider's redirects, fills in the development login form and
    submits the consent form, keeping cookies in ``client``. Returns the URL the provider finally
    redirects to at the relying party (carrying ``code``/``state`` or ``error``) without requesting
    it. An unknown ``login`` comes back as ``error=access_denied``.

    Cookies in ``client`` carry the provider session: reusing a client that already signed in
    skips the login form, and then ``login`` is not consulted. Use a fresh client per user.
    """
    provider_origin = _origin(authorize_url)
    redirect_uri = httpx.URL(authorize_url).params.get("redirect_uri")

    def is_relying_party(url: str) -> bool:
        if redirect_uri is not None:
            return _without_query(url) == _without_query(redirect_uri)
        # Without redirect_uri in the URL (e.g. pushed authorization requests) anything that leaves
        # the provider's origin is the way back to the relying party.
        return _origin(url) != provider_origin

    method, url, form_data = "GET", authorize_url, None
    for _ in range(max_steps):
        response = await client.request(method, url, data=form_data, follow_redirects=False)
        if response.is_redirect:
            location = urljoin(str(response.url), response.headers["location"])
            if is_relying_party(location):
                return location
            if _origin(location) != provider_origin:
                raise OidcProviderError(f"provider redirected to unexpected {location}")
            method, url, form_data = "GET", location, None
            continue

        if response.status_code != httpx.codes.OK:
            raise OidcProviderError(
                f"{method} {url} answered {response.status_code}: {_error_text(response.text)}"
            )
        form = _FormParser()
        form.feed(response.text)
        prompt = form.fields.get("prompt")
        if form.action is None or prompt not in ("login", "consent"):
            raise OidcProviderError(f"no login or consent form at {url}: {response.text[:2000]}")
        fields = dict(form.fields)
        if prompt == "login":
            fields["login"] = login
            # The development login form marks a password as required but never checks it.
            fields["password"] = "-"
        method, url, form_data = "POST", urljoin(str(response.url), form.action), fields

    raise OidcProviderError(f"no redirect to the relying party after {max_steps} steps")
