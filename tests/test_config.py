"""Settings: read from FRONTDESK_* variables and refused at start-up when unsafe."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.config import (
    DEV_SECRET_KEY,
    Environment,
    Region,
    Settings,
    retired_settings_in_environment,
)
from frontdesk.errors import ConfigurationError

STRONG_KEY = "k" * 32
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def production(**values: Any) -> Settings:
    defaults: dict[str, Any] = {
        "env": "production",
        "base_url": "https://eu.frontdesk.example",
        "secret_keys": [STRONG_KEY],
        "data_keys": [STRONG_KEY],
    }
    return Settings(**{**defaults, **values})


def test_defaults_describe_a_local_development_instance() -> None:
    """With nothing set, the instance is a development one on loopback, in eu."""
    settings = Settings()
    assert settings.env is Environment.DEVELOPMENT
    assert settings.region is Region.EU
    assert settings.base_url == "http://127.0.0.1:8000"
    assert settings.secret_keys == [DEV_SECRET_KEY]
    assert settings.cors_origins == ["*"]
    assert settings.trusted_proxies == []
    assert settings.client_documents_on_loopback is False
    assert settings.should_seed_demo is True


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SECRET_KEYS", "first-key, second-key", ["first-key", "second-key"]),
        ("SECRET_KEYS", "only-key", ["only-key"]),
        ("TRUSTED_PROXIES", "10.0.0.0/8,192.0.2.7", ["10.0.0.0/8", "192.0.2.7"]),
        ("ALLOWED_HOSTS", "api.example.com , ,other.example", ["api.example.com", "other.example"]),
        (
            "CORS_ORIGINS",
            "https://a.example,https://b.example",
            ["https://a.example", "https://b.example"],
        ),
        ("CORS_ORIGINS", "", []),
    ],
)
def test_list_settings_are_read_as_comma_separated_values(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: list[str]
) -> None:
    """Operators write lists as a,b,c; spaces and empty items are dropped."""
    monkeypatch.setenv(f"FRONTDESK_{variable}", value)
    assert getattr(Settings(), variable.lower()) == expected


def test_scalar_settings_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every FRONTDESK_* variable reaches its setting, converted to its type."""
    for name, value in {
        "REGION": "us",
        "BASE_URL": "https://us.frontdesk.example/",
        "DATABASE_URL": "postgresql+asyncpg://db.internal/frontdesk",
        "REDIS_URL": "redis://cache.internal:6379/0",
        "COMPANY_CACHE_SECONDS": "0",
        "MCP_RATE_LIMIT": "50/second",
        "SEED_DEMO": "false",
        "ACCESS_LOG": "0",
        "CLIENT_DOCUMENTS_ON_LOOPBACK": "true",
    }.items():
        monkeypatch.setenv(f"FRONTDESK_{name}", value)
    settings = Settings()
    assert settings.region is Region.US
    assert settings.base_url == "https://us.frontdesk.example"
    assert settings.database_url == "postgresql+asyncpg://db.internal/frontdesk"
    assert settings.redis_url == "redis://cache.internal:6379/0"
    assert settings.company_cache_seconds == 0
    assert settings.mcp_rate_limit == "50/second"
    assert settings.should_seed_demo is False
    assert settings.access_log is False
    assert settings.client_documents_on_loopback is True


def test_a_trusted_proxy_that_is_no_address_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo in FRONTDESK_TRUSTED_PROXIES stops start-up instead of trusting nothing."""
    monkeypatch.setenv("FRONTDESK_TRUSTED_PROXIES", "10.0.0.0/8, load-balancer")
    with pytest.raises(ValidationError, match="load-balancer"):
        Settings()


def test_an_empty_key_list_is_refused() -> None:
    """Sessions cannot be signed without at least one secret key."""
    with pytest.raises(ValidationError, match="at least one secret key"):
        Settings(secret_keys=[])


@pytest.mark.parametrize(
    ("base_url", "reason"),
    [
        ("eu.frontdesk.example", "absolute http"),
        ("/v1", "absolute http"),
        ("ftp://eu.frontdesk.example", "absolute http"),
        ("https://", "absolute http"),
        ("https://eu.frontdesk.example/?region=eu", "query or a fragment"),
        ("https://eu.frontdesk.example/#top", "query or a fragment"),
    ],
)
def test_a_base_url_that_cannot_prefix_every_url_is_refused(base_url: str, reason: str) -> None:
    """The base URL must be an absolute http(s) URL without query or fragment."""
    with pytest.raises(ValidationError, match=reason) as caught:
        Settings(base_url=base_url)
    assert caught.value.errors()[0]["loc"] == ("base_url",)


@pytest.mark.parametrize(
    ("base_url", "kept"),
    [
        ("https://eu.frontdesk.example/", "https://eu.frontdesk.example"),
        ("https://example.com/frontdesk/", "https://example.com/frontdesk"),
        ("http://localhost:8000", "http://localhost:8000"),
    ],
)
def test_a_base_url_loses_its_trailing_slash(base_url: str, kept: str) -> None:
    """URLs are built as base_url + path, so a trailing slash is dropped once, here."""
    settings = Settings(base_url=base_url)
    assert settings.base_url == kept
    assert settings.mcp_url("acme") == f"{kept}/v1/acme/mcp"
    assert settings.issuer("acme") == f"{kept}/v1/acme/oauth"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"secret_keys": [DEV_SECRET_KEY]}, "FRONTDESK_SECRET_KEYS still holds the dev"),
        ({"secret_keys": [STRONG_KEY, DEV_SECRET_KEY]}, "still holds the development key"),
        ({"secret_keys": ["short-key"]}, "every secret key needs 32 characters or more"),
        ({"secret_keys": [STRONG_KEY, "k" * 31]}, "every secret key needs 32 characters"),
        ({"base_url": "http://eu.frontdesk.example"}, "FRONTDESK_BASE_URL must be https"),
        ({"base_url": "http://192.0.2.10:8000"}, "FRONTDESK_BASE_URL must be https"),
        ({"seed_demo": True}, "FRONTDESK_SEED_DEMO cannot be on in production"),
        (
            {"client_documents_on_loopback": True},
            "FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK cannot be on in production",
        ),
        ({"trusted_proxies": ["0.0.0.0/0"]}, "FRONTDESK_TRUSTED_PROXIES cannot hold every"),
        ({"trusted_proxies": ["10.0.0.0/8", "::/0"]}, "FRONTDESK_TRUSTED_PROXIES cannot hold"),
        (
            {"backend_allowed_networks": ["0.0.0.0/0"]},
            "FRONTDESK_BACKEND_ALLOWED_NETWORKS cannot hold every address",
        ),
        (
            {"console_operator_issuer": "http://login.frontdesk.example"},
            "FRONTDESK_CONSOLE_OPERATOR_ISSUER must be https in production",
        ),
    ],
)
def test_production_refuses_unsafe_settings(values: dict[str, Any], message: str) -> None:
    """Production refuses the dev key, a short key, plain http off loopback, the demo, and
    client metadata documents fetched from loopback."""
    with pytest.raises(ConfigurationError, match="unsafe production settings") as caught:
        production(**values)
    assert message in str(caught.value)


def test_production_names_every_unsafe_setting_at_once() -> None:
    """All problems are listed together, so one restart is enough to fix them."""
    with pytest.raises(ConfigurationError) as caught:
        production(secret_keys=[DEV_SECRET_KEY], base_url="http://example.com", seed_demo=True)
    assert str(caught.value).count(";") == 2


def test_production_refuses_unsafe_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FRONTDESK_ENV=production with the defaults (dev key) does not start."""
    monkeypatch.setenv("FRONTDESK_ENV", "production")
    monkeypatch.setenv("FRONTDESK_BASE_URL", "https://eu.frontdesk.example")
    with pytest.raises(ConfigurationError, match="development key"):
        Settings()


@pytest.mark.parametrize(
    "base_url", ["https://eu.frontdesk.example", "http://127.0.0.1:8000", "http://localhost"]
)
def test_production_accepts_safe_settings(base_url: str) -> None:
    """https, or http on loopback, with strong keys, is a valid production set-up."""
    settings = production(base_url=base_url)
    assert settings.is_production
    assert settings.should_seed_demo is False


def test_a_loopback_base_url_accepts_every_loopback_name() -> None:
    """On loopback, clients may say localhost, 127.0.0.1 or [::1] interchangeably."""
    for base_url in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        assert Settings(base_url=base_url).accepted_hosts >= LOOPBACK_NAMES


def test_a_public_base_url_accepts_its_own_host_and_the_allowed_ones() -> None:
    """A public base URL accepts its host and FRONTDESK_ALLOWED_HOSTS, and no loopback name."""
    settings = Settings(base_url="https://EU.Frontdesk.example", allowed_hosts=["Internal.Example"])
    assert settings.accepted_hosts == {"eu.frontdesk.example", "internal.example"}


def test_an_ipv6_base_url_accepts_its_bracketed_host() -> None:
    """An IPv6 literal is accepted in the bracketed form a Host header carries."""
    settings = Settings(base_url="https://[2001:db8::1]:8443")
    assert "[2001:db8::1]" in settings.accepted_hosts


def test_settings_cannot_change_after_start_up() -> None:
    """Settings are frozen: no code path can loosen them while serving."""
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.env = Environment.PRODUCTION


@pytest.mark.parametrize("host", ["*", "a*b.example", "*.", "exa mple.com", "*.*.example"])
def test_allowed_hosts_take_names_or_a_subdomain_wildcard_only(host: str) -> None:
    """The Host check cannot be switched off, or given a pattern it would not match."""
    with pytest.raises(ValueError, match="host name"):
        Settings(allowed_hosts=[host])


def test_allowed_hosts_take_a_subdomain_wildcard() -> None:
    assert Settings(allowed_hosts=["*.example.com"]).allowed_hosts == ["*.example.com"]


def test_production_takes_narrow_networks_and_warns_of_any_origin() -> None:
    """Named networks are fine; CORS '*' is allowed in production but warned of at start."""
    settings = production(trusted_proxies=["10.0.0.0/8"], backend_allowed_networks=["10.1.0.0/16"])
    assert [warning.split(":")[0] for warning in settings.production_warnings] == [
        "FRONTDESK_CORS_ORIGINS is '*'"
    ]
    assert production(cors_origins=["https://app.example"]).production_warnings == []
    assert Settings().production_warnings == []


def test_a_retired_setting_still_set_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator upgrading with FRONTDESK_REFRESH_RETRY_SECONDS set learns it does nothing."""
    monkeypatch.delenv("FRONTDESK_REFRESH_RETRY_SECONDS", raising=False)
    assert retired_settings_in_environment() == []
    monkeypatch.setenv("frontdesk_refresh_retry_seconds", "30")
    [warning] = retired_settings_in_environment()
    assert warning.startswith("FRONTDESK_REFRESH_RETRY_SECONDS is no longer read")
    assert "signin.refresh_retry_seconds" in warning
