"""The secrets in a company's definition: sealed in its stored row, redacted when printed.

Two fields hold a secret: an OpenID Connect login's ``client_secret`` and an HTTP tool
provider's ``secret``. In the stored document each is ``{"sealed": "fd1..."}``
(secret_box.py), its associated data naming the company and the field, so a sealed value
copied into another company's row, or another field, does not open. A row stored before
sealing holds them in clear: it still loads, and the next apply seals it.

The ``*_env`` fields name environment variables instead; they are no secret, and are
checked here for being set (at apply, at start-up, and when the secret is used).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from typing import Any

import structlog

from frontdesk.errors import ConfigurationError
from frontdesk.sealing.secret_box import CannotOpen, KeyNotConfigured, SecretBox

log = structlog.get_logger(__name__)

SEALED = "sealed"
# What `companies show` prints in a secret's place. The definition refuses it as a secret
# (definition.py), so a printed definition applied back cannot replace the real one.
REDACTED = "<redacted>"


class SecretsUnreadable(ConfigurationError):
    """A stored company's secrets cannot be opened with the configured data keys."""


def not_redacted(value: str | None) -> str | None:
    """A definition's secret field validator: a definition printed by `companies show` and
    applied back would otherwise replace the secret with the placeholder printed for it."""
    if value is not None and value.startswith(REDACTED):
        raise ValueError(
            "is the placeholder `frontdesk companies show` prints in a secret's place;"
            " give the secret itself, or name a variable that holds it (*_env)"
        )
    return value


def _slots(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """Each secret field of a definition document: its name for people and for the
    associated data, the object holding it, and its key there."""
    signin = document.get("signin")
    login = signin.get("login") if isinstance(signin, dict) else None
    if isinstance(login, dict) and login.get("type") == "oidc":
        yield "signin.login.client_secret", login, "client_secret"
    tools = document.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        provider = tool.get("provider") if isinstance(tool, dict) else None
        if isinstance(provider, dict) and provider.get("type") == "http":
            # By the tool's name (unique in a company), not its position: the field stays
            # the same when tools are reordered.
            yield f"tools[{tool.get('name')}].provider.secret", provider, "secret"


def _associated(tenant_key: str, field: str) -> str:
    return f"frontdesk/company-secret\x00{tenant_key}\x00{field}"


def seal_secrets(tenant_key: str, document: dict[str, Any], box: SecretBox) -> dict[str, Any]:
    """A copy of ``document`` with every clear secret sealed under the current key."""
    sealed = copy.deepcopy(document)
    for field, holder, key in _slots(sealed):
        value = holder.get(key)
        if isinstance(value, str):
            holder[key] = {SEALED: box.seal(value, _associated(tenant_key, field))}
    return sealed


def open_secrets(
    tenant_key: str, document: dict[str, Any], box: SecretBox
) -> tuple[dict[str, Any], bool]:
    """A copy of the stored ``document`` with its secrets in clear, and whether it should be
    sealed again (a secret in clear, or sealed under a key other than the current one).
    SecretsUnreadable, naming the company, when a secret cannot be opened."""
    opened = copy.deepcopy(document)
    stale = False
    for field, holder, key in _slots(opened):
        value = holder.get(key)
        if isinstance(value, str):
            stale = True  # stored before secrets were sealed
            continue
        if not isinstance(value, dict):
            continue
        sealed = value.get(SEALED)
        if not isinstance(sealed, str):
            raise SecretsUnreadable(f"company {tenant_key!r}: its {field} is not a sealed value")
        try:
            holder[key] = box.open(sealed, _associated(tenant_key, field))
        except KeyNotConfigured:
            raise SecretsUnreadable(
                f"company {tenant_key!r}: its secrets were encrypted with a key not in"
                " FRONTDESK_DATA_KEYS"
            ) from None
        except CannotOpen:
            raise SecretsUnreadable(
                f"company {tenant_key!r}: its {field} does not open: it was altered, or"
                " sealed for another company or field"
            ) from None
        # Which key wrote it: an id, public by design (secret_box.py), not the secret.
        writer = box.key_id(sealed)
        stale = stale or writer != box.current_key_id
    return opened, stale


def redact_secrets(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of a definition document, sealed or not, fit to print: no secret in it."""
    redacted = copy.deepcopy(document)
    for _field, holder, key in _slots(redacted):
        if holder.get(key) is not None:
            holder[key] = REDACTED
    return redacted


def _variables(document: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Each ``*_env`` field a definition document sets, with the variable it names."""
    for field, holder, key in _slots(document):
        variable = holder.get(f"{key}_env")
        if isinstance(variable, str):
            yield f"{field}_env", variable


def unset_variables(tenant_key: str, document: dict[str, Any]) -> list[str]:
    """One line per ``*_env`` field naming a variable this process does not have set."""
    return [
        unset_message(tenant_key, field, variable)
        for field, variable in _variables(document)
        if not os.environ.get(variable)
    ]


def unset_message(tenant_key: str, field: str, variable: str) -> str:
    return (
        f"company {tenant_key!r}: the environment variable {variable} named by {field} is not set"
    )


def secret_from_environment(tenant_key: str, field: str, variable: str) -> str | None:
    """The secret ``variable`` holds; None, with the reason logged, when it is not set.

    The caller answers its own caller plainly (a tool error, sign-in unavailable): the
    variable's name is for the operator's log, not for customers."""
    value = os.environ.get(variable)
    if not value:
        log.error(
            "company_secret_unset",
            tenant=tenant_key,
            error=unset_message(tenant_key, field, variable),
        )
        return None
    return value
