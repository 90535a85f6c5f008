"""deploy/nginx/frontdesk.conf run by a real nginx in front of a real ``frontdesk serve``.

The example file itself is served, with only what a machine-specific deployment changes
substituted: the listening ports (loopback, free ones), the upstream's port and the
certificate paths (a throwaway CA's). TLS is real, so the public base URL is https and
differs from the address Frontdesk listens on, as in production.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from tests.conftest import ROOT, unavailable
from tests.live.conftest import LiveService, free_port, running_service, stop_process

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

EXAMPLE = ROOT / "deploy" / "nginx" / "frontdesk.conf"
START_DEADLINE = 15.0
TIMEOUT = 15.0
# Registrations allowed per address here: the third from one address is refused.
REGISTRATIONS = "2/minute"
# Customers' machines, as nginx sees them (Linux answers on all of 127.0.0.0/8).
ALICE, BOB, CAROL, DAVE = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"
# The example's own per-address bounds (limit_conn; limit_req's burst).
CONNECTIONS_PER_ADDRESS = 64
REQUEST_BURST = 200
ACCESS_LOG = "/var/log/nginx/frontdesk.access.log"


def nginx_binary() -> str:
    """Skip without nginx, or fail when CI said it must be there."""
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None
    )
    if found is None:
        unavailable("nginx is not installed (run ./scripts/install-test-servers)")
    return found


def substitute(text: str, old: str, new: str, times: int = 1) -> str:
    """Replace ``old``, which the example must hold exactly ``times`` times, so the test
    cannot silently serve something other than the example once the example changes."""
    assert text.count(old) == times, f"{EXAMPLE.name} should hold {old!r} {times} times"
    return text.replace(old, new)


def site_for_test(
    upstream_port: int, http_port: int, https_port: int, certs: Path, logs: Path
) -> str:
    site = EXAMPLE.read_text()
    # Both servers, the redirecting one too, log in the example's own format.
    site = substitute(site, ACCESS_LOG, str(logs / "frontdesk.access.log"), times=2)
    site = substitute(site, "server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};")
    site = substitute(site, "listen 80;", f"listen 127.0.0.1:{http_port};")
    site = substitute(site, "listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;")
    site = substitute(
        site,
        "/etc/letsencrypt/live/frontdesk.example.com/fullchain.pem",
        str(certs / "fullchain.pem"),
    )
    site = substitute(
        site,
        "/etc/letsencrypt/live/frontdesk.example.com/privkey.pem",
        str(certs / "privkey.pem"),
    )
    # IPv6 listeners may not exist in a test machine's network namespace.
    return "\n".join(line for line in site.splitlines() if "listen [::]" not in line) + "\n"


def main_config(prefix: Path, site: Path) -> str:
    """What Debian's /etc/nginx/nginx.conf provides around a site file, in ``prefix``."""
    # As root, nginx's workers would run as nobody, who cannot enter pytest's private
    # temporary directory; the test's own nginx may stay root.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\n"
        f"error_log {prefix}/error.log warn;\n"
        # Room for one address's CONNECTIONS_PER_ADDRESS and more: limit_conn, not this,
        # is what refuses them.
        "events { worker_connections 512; }\n"
        "http {\n"
        f"  access_log {prefix}/access.log;\n"
        f"  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
        f"  fastcgi_temp_path {prefix}/fastcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n"
        f"  scgi_temp_path {prefix}/scgi;\n"
        "  default_type application/octet-stream;\n"
        f"  include {site};\n"
        "}\n"
    )


@dataclass(frozen=True)
class Proxy:
    http_port: int
    https_port: int
    ca: ssl.SSLContext
    service: LiveService
    access_log: Path

    @property
    def public_url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    def client(self, source: str = "127.0.0.1") -> httpx.Client:
        """A customer's machine at address ``source``, trusting the proxy's certificate."""
        transport = httpx.HTTPTransport(local_address=source, verify=self.ca)
        return httpx.Client(transport=transport, base_url=self.public_url, timeout=TIMEOUT)


def _wait_for_port(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE
    while True:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited with {process.returncode}:\n{log.read_text()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"nginx did not listen within {START_DEADLINE:g}s")
        time.sleep(0.05)


@contextlib.contextmanager
def running_nginx(config: Path, prefix: Path, port: int) -> Iterator[None]:
    nginx = nginx_binary()
    checked = subprocess.run(
        [nginx, "-t", "-p", str(prefix), "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    output = prefix / "nginx.out"
    with output.open("wb") as log:
        process = subprocess.Popen(
            [nginx, "-p", str(prefix), "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_port(process, port, prefix / "error.log")
        yield
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    nginx_binary()
    workdir = tmp_path_factory.mktemp("nginx-proxy")
    prefix = workdir / "nginx"
    certs = workdir / "certs"
    for directory in (prefix, certs):
        directory.mkdir()
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    issued.cert_chain_pems[0].write_to_path(str(certs / "fullchain.pem"))
    issued.private_key_pem.write_to_path(str(certs / "privkey.pem"))
    ca = ssl.create_default_context()
    authority.configure_trust(ca)

    upstream_port, http_port, https_port = free_port(), free_port(), free_port()
    site = prefix / "frontdesk.conf"
    site.write_text(site_for_test(upstream_port, http_port, https_port, certs, prefix))
    config = prefix / "nginx.conf"
    config.write_text(main_config(prefix, site))
    environment = {
        "FRONTDESK_TRUSTED_PROXIES": "127.0.0.1/32",
        "FRONTDESK_REGISTRATION_RATE_LIMIT": REGISTRATIONS,
    }
    with (
        running_service(
            "sqlite",
            f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
            workdir,
            port=upstream_port,
            extra_env=environment,
            public_url=f"https://127.0.0.1:{https_port}",
        ) as service,
        running_nginx(config, prefix, https_port),
    ):
        yield Proxy(http_port, https_port, ca, service, prefix / "frontdesk.access.log")


def register(client: httpx.Client, **headers: str) -> httpx.Response:
    return client.post(
        "/v1/demo/oauth/register",
        json={"redirect_uris": ["http://127.0.0.1:33418/callback"], "client_name": "proxy"},
        headers=headers,
    )


def tools_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_an_mcp_call_through_the_proxy_is_answered(proxy: Proxy) -> None:
    """A guest's tools/call over TLS at the public address reaches Frontdesk and back; the
    Host the client used is the one Frontdesk checks (another is 400)."""
    with proxy.client() as client:
        answered = client.post(
            "/v1/demo/mcp", json=tools_call("search_products", {"query": "chocolate"})
        )
    assert answered.status_code == 200, answered.text
    assert answered.json()["result"]["structuredContent"]["count"] >= 1
    assert answered.headers["strict-transport-security"] == "max-age=31536000"

    with proxy.client() as client:
        elsewhere = client.post(
            "/v1/demo/mcp",
            json=tools_call("echo", {"text": "hi"}),
            headers={"Host": "evil.example"},
        )
    # nginx's only server answers any name; Frontdesk refuses a Host it does not serve.
    assert elsewhere.status_code == 400, elsewhere.text


def test_plain_http_is_redirected_to_https(proxy: Proxy) -> None:
    with httpx.Client(timeout=TIMEOUT) as client:
        redirected = client.get(f"http://127.0.0.1:{proxy.http_port}/v1/demo/mcp")
    assert redirected.status_code == 301
    assert redirected.headers["location"] == "https://127.0.0.1/v1/demo/mcp"


def test_the_metadata_names_the_public_address(proxy: Proxy) -> None:
    """Discovery through the proxy points clients at the https address, never at the
    loopback port Frontdesk listens on."""
    with proxy.client() as client:
        resource = client.get("/.well-known/oauth-protected-resource/v1/demo/mcp")
        server = client.get("/.well-known/oauth-authorization-server/v1/demo/oauth")
        challenged = client.post("/v1/demo/mcp", json=tools_call("order_status", {}))
    public = proxy.public_url
    assert resource.status_code == 200, resource.text
    assert resource.json()["resource"] == f"{public}/v1/demo/mcp"
    assert resource.json()["authorization_servers"] == [f"{public}/v1/demo/oauth"]
    assert server.json()["issuer"] == f"{public}/v1/demo/oauth"
    assert server.json()["token_endpoint"] == f"{public}/v1/demo/oauth/token"
    assert challenged.status_code == 401
    assert (
        f'resource_metadata="{public}/.well-known/oauth-protected-resource/v1/demo/mcp"'
        in challenged.headers["www-authenticate"]
    )


def test_rate_limits_count_the_forwarded_address(proxy: Proxy) -> None:
    """Every request reaches Frontdesk from nginx's 127.0.0.1, yet each customer's machine
    has a registration limit of its own; a forged X-Forwarded-For does not escape it."""
    with proxy.client(ALICE) as alice, proxy.client(BOB) as bob:
        allowed = [register(alice).status_code for _ in range(2)]
        refused = register(alice)
        forged = register(alice, **{"X-Forwarded-For": "203.0.113.9"})
        other = register(bob)
    assert allowed == [201, 201]
    assert refused.status_code == 429, refused.text
    assert forged.status_code == 429, forged.text
    assert other.status_code == 201, other.text


def test_bodies_over_the_limit_are_refused(proxy: Proxy) -> None:
    """Just over 256 KiB: Frontdesk's own JSON 413 comes through the margin; 300 KB:
    nginx refuses it before it reaches Frontdesk."""
    just_over = tools_call("echo", {"text": "x" * (257 * 1024)})
    far_over = tools_call("echo", {"text": "x" * (300 * 1024)})
    with proxy.client() as client:
        frontdesk = client.post("/v1/demo/mcp", json=just_over)
        nginx = client.post("/v1/demo/mcp", json=far_over)
    assert frontdesk.status_code == 413
    assert frontdesk.headers["content-type"].startswith("application/json")
    assert nginx.status_code == 413
    assert nginx.headers["content-type"].startswith("text/html")


def test_metrics_are_not_public(proxy: Proxy) -> None:
    with proxy.client() as client:
        public = client.get("/metrics")
    with httpx.Client(timeout=TIMEOUT) as client:
        direct = client.get(f"{proxy.service.base_url}/metrics")
    assert public.status_code == 404
    assert direct.status_code == 200


def test_the_access_log_holds_paths_without_query_strings(proxy: Proxy) -> None:
    """An identity provider's ?code= (or any query) never reaches nginx's access log, on the
    https server or the one redirecting plain http."""
    secret = "code-never-logged-4f1c"
    query = {"code": secret, "state": secret}
    with proxy.client() as client:
        client.get("/v1/demo/oauth/callback", params=query)
    with httpx.Client(timeout=TIMEOUT) as client:
        client.get(f"http://127.0.0.1:{proxy.http_port}/v1/demo/oauth/callback", params=query)
    lines = wait_for_log_lines(proxy.access_log, "/v1/demo/oauth/callback", 2)
    assert all('"GET /v1/demo/oauth/callback HTTP/1.1"' in line for line in lines), lines
    logged = proxy.access_log.read_text()
    assert secret not in logged
    assert "?" not in logged


def wait_for_log_lines(log: Path, fragment: str, count: int) -> list[str]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        text = log.read_text() if log.exists() else ""
        lines = [line for line in text.splitlines() if fragment in line]
        if len(lines) >= count:
            return lines
        assert time.monotonic() < deadline, f"{count} lines with {fragment} not in {text!r}"
        time.sleep(0.05)


def test_one_address_holds_at_most_its_connections(proxy: Proxy) -> None:
    """limit_conn: an address with CONNECTIONS_PER_ADDRESS requests in progress (bodies
    still on their way) is refused 429 for one more; another address is served."""
    held: list[ssl.SSLSocket] = []
    try:
        for _ in range(CONNECTIONS_PER_ADDRESS):
            client = tls_connection(proxy, CAROL)
            held.append(client)
            client.sendall(slow_body_head(proxy))
        # nginx counts a request once its head is in: the held ones are all counted when a
        # further one from the address is refused, as it must be within the deadline.
        refused = answer_to_one_more(proxy, CAROL)
        with proxy.client(BOB) as bob:
            other = bob.get("/healthz")
    finally:
        for client in held:
            client.close()
    assert refused.startswith(b"HTTP/1.1 429 "), refused
    assert other.status_code == 200, other.text


def test_one_address_past_its_rate_is_refused(proxy: Proxy) -> None:
    """limit_req: past the burst (and what the rate refills meanwhile), an address is
    refused 429; another address is served."""
    statuses: list[int] = []
    with proxy.client(DAVE) as dave:
        while 429 not in statuses:
            assert len(statuses) < 5 * REQUEST_BURST, "never refused"
            statuses.append(dave.get("/healthz").status_code)
    with proxy.client(BOB) as bob:
        other = bob.get("/healthz")
    assert len(statuses) > REQUEST_BURST
    assert set(statuses) == {200, 429}
    assert other.status_code == 200, other.text


def tls_connection(proxy: Proxy, source: str) -> ssl.SSLSocket:
    raw = socket.create_connection(
        ("127.0.0.1", proxy.https_port), timeout=TIMEOUT, source_address=(source, 0)
    )
    return proxy.ca.wrap_socket(raw, server_hostname="127.0.0.1")


def slow_body_head(proxy: Proxy) -> bytes:
    """A registration's head, announcing a body it never sends."""
    return (
        "POST /v1/demo/oauth/register HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{proxy.https_port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    ).encode()


def answer_to_one_more(proxy: Proxy, source: str) -> bytes:
    """What nginx answers one more request from ``source`` (with a body on its way)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        with contextlib.closing(tls_connection(proxy, source)) as client:
            client.sendall(slow_body_head(proxy))
            client.settimeout(1.0)
            try:
                answer = client.recv(65536)
            except TimeoutError:
                answer = b""  # still counted in: the held ones may not all be yet
        if answer or time.monotonic() > deadline:
            return answer
