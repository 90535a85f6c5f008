"""The http provider as a companies file declares it: which URLs and secrets are accepted
(companies/definition.py, HttpProvider)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.companies.definition import HttpProvider

SECRET = "a-secret-of-sixteen-or-more"


def provider(**fields: Any) -> HttpProvider:
    document: dict[str, Any] = {"type": "http", "secret": SECRET, **fields}
    return HttpProvider.model_validate({k: v for k, v in document.items() if v is not None})


@pytest.mark.parametrize(
    "url",
    [
        "https://backend.initrode.example/tools",
        "https://10.0.0.5:8443/frontdesk?company=initrode",
        "http://127.0.0.1:8001/tools",
        "http://localhost:8001/tools",
        "http://[::1]:8001/tools",
    ],
)
def test_https_anywhere_and_http_to_loopback_are_accepted(url: str) -> None:
    """https to any host; plain http only to a loopback host."""
    assert provider(url=url).url == url


@pytest.mark.parametrize(
    "url",
    [
        "http://backend.initrode.example/tools",
        "http://10.0.0.5/tools",
        "http://127.0.0.2/tools",
        "http://localhost.initrode.example/tools",
    ],
)
def test_plain_http_to_another_host_is_refused(url: str) -> None:
    """Customer data never crosses a network in clear text."""
    with pytest.raises(ValidationError, match="must be https"):
        provider(url=url)


@pytest.mark.parametrize(
    "url", ["ftp://backend.initrode.example/", "/tools", "backend.initrode.example", "https://"]
)
def test_a_url_that_is_not_absolute_http_is_refused(url: str) -> None:
    """Another scheme, or no host, is not a backend address."""
    with pytest.raises(ValidationError, match="absolute https URL"):
        provider(url=url)


@pytest.mark.parametrize(
    "url",
    [
        "https://user:password@backend.initrode.example/tools",
        "https://user@backend.initrode.example/tools",
        "https://backend.initrode.example/tools#section",
    ],
)
def test_credentials_or_a_fragment_in_the_url_are_refused(url: str) -> None:
    """Secrets belong in secret/secret_env, and a fragment is never sent."""
    with pytest.raises(ValidationError, match="credentials or a fragment"):
        provider(url=url)


def test_a_url_longer_than_2048_characters_is_refused() -> None:
    """The URL is bounded like every other stored field."""
    with pytest.raises(ValidationError):
        provider(url="https://backend.initrode.example/" + "a" * 2048)


@pytest.mark.parametrize(
    ("secret", "secret_env"),
    [(None, None), (SECRET, "INITRODE_SECRET")],
    ids=["neither", "both"],
)
def test_exactly_one_of_secret_and_secret_env_is_required(
    secret: str | None, secret_env: str | None
) -> None:
    """A call is signed with one key from one place."""
    with pytest.raises(ValidationError, match="exactly one of secret or secret_env"):
        HttpProvider.model_validate(
            {
                "type": "http",
                "url": "https://backend.initrode.example/tools",
                **({"secret": secret} if secret else {}),
                **({"secret_env": secret_env} if secret_env else {}),
            }
        )


def test_a_secret_env_names_an_environment_variable() -> None:
    """secret_env is accepted alone, and must look like a variable name."""
    url = "https://backend.initrode.example/tools"
    named = HttpProvider(type="http", url=url, secret_env="INITRODE_SECRET")
    assert named.secret is None
    with pytest.raises(ValidationError):
        HttpProvider(type="http", url=url, secret_env="initrode-secret")


def test_a_short_secret_is_refused() -> None:
    """Fewer than 16 characters is too weak a key for the HMAC."""
    with pytest.raises(ValidationError):
        provider(url="https://backend.initrode.example/tools", secret="too-short")


def test_an_unknown_field_is_refused() -> None:
    """A typo such as secrets_env is an error, not an ignored field."""
    with pytest.raises(ValidationError):
        provider(url="https://backend.initrode.example/tools", secrets_env="X")
