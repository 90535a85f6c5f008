"""Settings from the environment (``FRONTDESK_*``), checked once at start-up."""

from __future__ import annotations

import ipaddress
import os
from enum import StrEnum
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    DirectoryPath,
    Field,
    field_validator,
    model_validator,
)

from frontdesk.errors import ConfigurationError
from frontdesk.limits.ratelimit import parse_rate_limit

# The contract's body limit: "at most 256 KB in total". We read KB as KiB, the more
# lenient reading, so that no body the contract admits is refused.
MAX_BODY_BYTES = 256 * 1024
MAX_BATCH = 20

# Only a development deployment may run on this key; production refuses it.
DEV_SECRET_KEY = "frontdesk-development-key-not-for-production-use"  # noqa: S105
MIN_SECRET_KEY_LENGTH = 32
# Likewise for the keys company secrets are encrypted under (secret_box.py).
DEV_DATA_KEY = "frontdesk-development-data-key-not-for-production-use"

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
# The database backends Frontdesk runs on, each with its async driver.
DATABASE_SCHEMES = frozenset({"sqlite+aiosqlite", "postgresql+asyncpg"})


class Environment(StrEnum):
    DEVELOPMENT = "development"
    PRODUCTION = "production"


class Region(StrEnum):
    EU = "eu"
    US = "us"


def _split_list(value: object) -> object:
    """Accept comma-separated lists in the environment, as operators write them."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


ENV_PREFIX = "FRONTDESK_"
# Settings that once existed and now do nothing, with what took their place: an operator
# upgrading with one still set is told at start-up instead of silently getting another rule.
RETIRED_SETTINGS = {
    "FRONTDESK_REFRESH_RETRY_SECONDS": (
        "a spent refresh token now always ends its grant, unless the company opts into a"
        " retry window with signin.refresh_retry_seconds in the companies file"
    ),
}


class Settings(BaseModel):
    """Everything an operator can set. Every URL the service writes is built from ``base_url``.

    ``Settings()`` reads ``FRONTDESK_<FIELD>`` variables (names in any case); values given
    as arguments win over the environment. A plain pydantic model reading ``os.environ``
    itself, not pydantic-settings: its sources (dotenv, CLI, secrets directories), none of
    which Frontdesk offers, cost every worker memory (docs/decisions/settings.md).
    """

    # Defaults go through the validators too, as an operator's values do.
    model_config = ConfigDict(extra="ignore", frozen=True, validate_default=True)

    env: Environment = Environment.DEVELOPMENT
    base_url: str = "http://127.0.0.1:8000"
    region: Region = Region.EU
    # Relative to the working directory: ./scripts/serve and every `frontdesk` command run
    # from the checkout share var/frontdesk.db, the one default.
    database_url: str = "sqlite+aiosqlite:///var/frontdesk.db"
    # Connections each worker keeps open to PostgreSQL (plus up to 10 more under bursts).
    database_pool_size: int = Field(default=20, ge=1, le=200)
    # The longest a statement may run, on the server too (PostgreSQL's statement_timeout);
    # opening a connection and waiting for a pooled one get at most 3 s of it
    # (store.bounds). Past it a request is answered 503 with Retry-After.
    database_timeout_seconds: float = Field(default=5.0, gt=0, le=300)
    redis_url: str | None = None
    # The first key signs; every key verifies, so a new key can be rolled in without
    # ending the sessions signed with the old one.
    secret_keys: list[str] = Field(default_factory=lambda: [DEV_SECRET_KEY])
    session_ttl_seconds: int = Field(default=24 * 3600, gt=0)
    # The keys companies' secrets (client secrets, backend signing secrets) are encrypted
    # under in the database: the first encrypts, every key decrypts, as with secret_keys.
    # Separate from those, so rolling the session keys never touches stored secrets.
    data_keys: list[str] = Field(default_factory=lambda: [DEV_DATA_KEY])
    # How long a company's definition is served from memory before it is read again;
    # changes made with `frontdesk companies apply` reach every instance within this time.
    company_cache_seconds: float = Field(default=5.0, ge=0)
    # Per caller on the MCP endpoint, e.g. "600/minute" (a whole number, then second,
    # minute, hour or day); a company may set its own.
    mcp_rate_limit: str = "600/minute"
    # Per client address on client registration: stricter, as registrations are stored.
    registration_rate_limit: str = "20/minute"
    # Per client address on the token endpoint and the sign-in callback (per company), and
    # on authorize and revocation (over every company), counted before anything is read
    # from the database. As generous as the MCP limit: customers behind one address (an
    # office, a carrier's NAT) share it.
    oauth_rate_limit: str = "600/minute"
    # Per client id at the token endpoint, from any address. Far higher: a client metadata
    # document's id is one for every user of that product (every Claude user of a company).
    oauth_client_rate_limit: str = "20000/minute"
    # Per client address, the client metadata documents it makes Frontdesk fetch: only a
    # client_id URL with no document kept (or fetch under way) counts, so the customers of
    # a few products behind one address cost nothing after each product's first fetch,
    # while an address naming a new URL on every request is held to one a second.
    client_document_fetch_rate_limit: str = "60/minute"
    # Per admin API key (/admin/v1), and per client address for requests with no valid key.
    admin_rate_limit: str = "120/minute"
    # Clients whose X-Forwarded-For we believe (the load balancers in front of us).
    trusted_proxies: list[str] = Field(default_factory=list)
    # Networks a company's backend may resolve to besides public addresses (SSRF guard),
    # e.g. "10.0.0.0/8" for backends inside the operator's own network.
    backend_allowed_networks: list[str] = Field(default_factory=list)
    # Test-only: client metadata documents may also be fetched from loopback (127.0.0.0/8,
    # ::1), where the tests serve them. Documents are otherwise fetched from public addresses
    # only, whatever the backends may reach: anyone can name one. Production refuses it.
    client_documents_on_loopback: bool = False
    # Hosts accepted in addition to the base URL's own (DNS-rebinding protection).
    allowed_hosts: list[str] = Field(default_factory=list)
    cors_origins: list[str] = Field(default_factory=lambda: ["*"])
    # Retention (store.retention). A dynamically registered client that has not obtained a
    # token this many days after registering is deleted; 0 keeps every client.
    unused_client_days: int = Field(default=30, ge=0, le=3650)
    # Audit events older than this many days are deleted; 0 keeps them all. The default
    # covers a yearly review with a month to spare.
    audit_retention_days: int = Field(default=400, ge=0, le=36_500)
    # How often each worker runs the purge (jittered, one instance at a time on PostgreSQL);
    # 0 turns the periodic purge off, leaving `frontdesk purge` to the operator.
    purge_interval_seconds: int = Field(default=3600, ge=0, le=7 * 86_400)
    # Tool usage (frontdesk.usage): how often each worker adds its counts to the hourly
    # rollup (0: only as it stops), which is what a crashed worker can lose; and how many
    # days of the rollup the purge keeps (0 keeps it all).
    usage_flush_seconds: float = Field(default=10.0, ge=0, le=3600)
    usage_retention_days: int = Field(default=400, ge=0, le=36_500)
    # What one client may hold of a worker (http_server.py). The request line and headers
    # together, in bytes: a longer head is answered 431 (RFC 6585 section 5). At least
    # 8 KiB, the smallest read buffer the HTTP server (hyper) accepts.
    max_header_bytes: int = Field(default=16 * 1024, ge=8 * 1024, le=1024 * 1024)
    # From a connection's opening, or the end of its last response, until the next
    # request's headers are all in; a connection idle between requests is closed then too.
    # At most a minute, the server's own bound.
    header_read_timeout_seconds: float = Field(default=10.0, ge=0.001, le=60)
    # From the end of the headers until the last byte of the body (body_deadline.py).
    body_read_timeout_seconds: float = Field(default=30.0, gt=0, le=3600)
    # Connections one worker serves at once; more wait in the listen queue until one ends.
    max_connections_per_worker: int = Field(default=1000, ge=1, le=100_000)
    # Request bodies one client address (an IPv6 one by its /64) may have under way at once
    # in a worker (bodies_per_address.py); a body past it is answered 429 and its connection
    # closed. A body sent at once is under way for microseconds, so even an address many
    # customers share stays far below it, while one client dripping bodies holds at most this
    # many of the worker's connections.
    max_bodies_per_address: int = Field(default=32, ge=1, le=100_000)
    # Where `frontdesk serve` makes the directory, fresh and private to each start, in which
    # its workers keep their metrics (metrics.py); the system's temporary directory if unset.
    # A memory-backed file system (/dev/shm) keeps those writes off the disk.
    metrics_dir: DirectoryPath | None = None
    # When set, /metrics answers only a request bearing it (Authorization: Bearer ...);
    # without it, /metrics is open to whoever can reach the port (app.py).
    metrics_token: str | None = Field(default=None, min_length=16, max_length=256)
    seed_demo: bool | None = None
    # The loopback port of the demo company's backend (examples/backend.py reads the same
    # variable), written into the demo company when it is seeded (companies/seed.py).
    demo_backend_port: int = Field(default=8001, ge=1, le=65535)
    auto_migrate: bool = True
    log_level: str = "INFO"
    log_json: bool = True
    access_log: bool = True
    # The operators' sign-in to the console (/console/): one OpenID provider for the
    # deployment, and the verified addresses it may sign in (frontdesk.console).
    console_operator_issuer: str | None = Field(default=None, pattern=r"^https?://[^\s?#]+$")
    console_operator_client_id: str | None = None
    console_operator_client_secret: str | None = None
    console_operator_emails: list[str] = Field(default_factory=list)

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**_from_environment(), **values})

    _split = field_validator(
        "secret_keys",
        "data_keys",
        "trusted_proxies",
        "allowed_hosts",
        "cors_origins",
        "backend_allowed_networks",
        "console_operator_emails",
        mode="before",
    )(_split_list)

    @field_validator("base_url")
    @classmethod
    def _base_url_is_absolute(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an absolute http(s) URL, e.g. https://eu.frontdesk.example")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or a fragment")
        return value.rstrip("/")

    @field_validator("database_url")
    @classmethod
    def _database_is_supported(cls, value: str) -> str:
        # Checked here, so that another database (or driver) is one line at start-up rather
        # than a missing-module traceback at the first query.
        scheme = value.split(":", 1)[0].lower() if ":" in value else ""
        if scheme not in DATABASE_SCHEMES:
            raise ValueError(
                "must be sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER@HOST/DATABASE,"
                f" not {scheme or value!r}"
            )
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_are_names(cls, value: list[str]) -> list[str]:
        # Starlette's host check takes a name, or "*." and a name for its subdomains; a bare
        # "*" would turn the DNS-rebinding protection off, and any other "*" is no pattern.
        for item in value:
            name = item[2:] if item.startswith("*.") else item
            if not name or "*" in name or "/" in name or " " in name:
                raise ValueError(
                    f"{item!r} is not a host name or '*.' and a host name (the Host check"
                    " cannot be turned off)"
                )
        return value

    @field_validator(
        "mcp_rate_limit",
        "registration_rate_limit",
        "oauth_rate_limit",
        "oauth_client_rate_limit",
        "client_document_fetch_rate_limit",
        "admin_rate_limit",
    )
    @classmethod
    def _rate_limit_parses(cls, value: str) -> str:
        # Checked here so that a typo stops start-up rather than every company's first load.
        parse_rate_limit(value)
        return value

    @field_validator("trusted_proxies", "backend_allowed_networks")
    @classmethod
    def _proxies_are_addresses(cls, value: list[str]) -> list[str]:
        for item in value:
            ipaddress.ip_network(item, strict=False)
        return value

    @field_validator("secret_keys", "data_keys")
    @classmethod
    def _some_key(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one secret key is needed")
        return value

    @model_validator(mode="after")
    def _production_is_safe(self) -> Settings:
        if self.env is not Environment.PRODUCTION:
            return self
        problems = []
        if any(key == DEV_SECRET_KEY for key in self.secret_keys):
            problems.append("FRONTDESK_SECRET_KEYS still holds the development key")
        if any(len(key) < MIN_SECRET_KEY_LENGTH for key in self.secret_keys):
            problems.append(f"every secret key needs {MIN_SECRET_KEY_LENGTH} characters or more")
        if any(key == DEV_DATA_KEY for key in self.data_keys):
            problems.append(
                "FRONTDESK_DATA_KEYS is not set (or still holds the development key):"
                " company secrets would be encrypted under a key anyone can read"
            )
        if any(len(key) < MIN_SECRET_KEY_LENGTH for key in self.data_keys):
            problems.append(f"every data key needs {MIN_SECRET_KEY_LENGTH} characters or more")
        if self.base_scheme != "https" and self.base_host not in LOOPBACK_HOSTS:
            problems.append("FRONTDESK_BASE_URL must be https unless it is a loopback address")
        if self.seed_demo:
            problems.append("FRONTDESK_SEED_DEMO cannot be on in production")
        if self.client_documents_on_loopback:
            problems.append("FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK cannot be on in production")
        operators = self.console_operator_issuer
        if operators is not None and urlsplit(operators).scheme != "https":
            # The operators' code, tokens and client secret would travel in clear.
            problems.append("FRONTDESK_CONSOLE_OPERATOR_ISSUER must be https in production")
        # A network holding every address turns a guard off rather than widening it: any
        # client could then pose as a proxy's client (and escape its rate limit), or any
        # company's backend URL reach the instance's own network.
        for name, networks in (
            ("FRONTDESK_TRUSTED_PROXIES", self.trusted_proxies),
            ("FRONTDESK_BACKEND_ALLOWED_NETWORKS", self.backend_allowed_networks),
        ):
            if any(ipaddress.ip_network(item, strict=False).prefixlen == 0 for item in networks):
                problems.append(f"{name} cannot hold every address (0.0.0.0/0, ::/0) in production")
        if problems:
            raise ConfigurationError("unsafe production settings: " + "; ".join(problems))
        return self

    @property
    def base_scheme(self) -> str:
        return urlsplit(self.base_url).scheme

    @property
    def base_host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    @cached_property
    def accepted_hosts(self) -> frozenset[str]:
        """Host header values (without port) we answer to."""
        hosts = {self.base_host.lower(), *(host.lower() for host in self.allowed_hosts)}
        if self.base_host in LOOPBACK_HOSTS:
            hosts |= LOOPBACK_HOSTS
        # An IPv6 literal arrives in the Host header in brackets ("[2001:db8::1]:443").
        hosts |= {f"[{host}]" for host in hosts if ":" in host and not host.startswith("[")}
        return frozenset(hosts)

    @property
    def should_seed_demo(self) -> bool:
        if self.seed_demo is not None:
            return self.seed_demo
        return self.env is Environment.DEVELOPMENT

    @property
    def production_warnings(self) -> list[str]:
        """Settings production accepts but an operator should have chosen knowingly:
        ``serve`` logs each at start-up."""
        if not self.is_production:
            return []
        warnings = []
        if "*" in self.cors_origins:
            # Allowed, not refused: browser-based MCP clients call from origins no operator
            # can list in advance, and bearer tokens, not cookies, carry identity.
            warnings.append(
                "FRONTDESK_CORS_ORIGINS is '*': any web page may call the endpoints from a"
                " browser; list the origins of the browser clients you serve to narrow it"
            )
        return warnings

    @property
    def is_production(self) -> bool:
        return self.env is Environment.PRODUCTION

    def mcp_url(self, tenant_key: str) -> str:
        return f"{self.base_url}/v1/{tenant_key}/mcp"

    def issuer(self, tenant_key: str) -> str:
        return f"{self.base_url}/v1/{tenant_key}/oauth"


def retired_settings_in_environment() -> list[str]:
    """A warning for each retired ``FRONTDESK_*`` variable still set (``serve`` logs them)."""
    present = {name.upper() for name in os.environ}
    return [
        f"{name} is no longer read: {instead}"
        for name, instead in RETIRED_SETTINGS.items()
        if name in present
    ]


def _from_environment() -> dict[str, str]:
    """The ``FRONTDESK_*`` variables that name a setting, keyed by the setting's name."""
    fields = Settings.model_fields
    found: dict[str, str] = {}
    for name, value in os.environ.items():
        upper = name.upper()
        if upper.startswith(ENV_PREFIX):
            field = upper.removeprefix(ENV_PREFIX).lower()
            if field in fields:
                found[field] = value
    return found
