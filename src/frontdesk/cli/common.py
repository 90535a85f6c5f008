"""What every ``frontdesk`` command shares: its settings, and the one place where an
expected failure becomes one line on stderr and an exit code, never a traceback.

Exit codes: 1 for a failure of the settings, the database or the address to serve on;
2 for a usage error, which naming a company (or a customer, client or grant of it) that
does not exist is.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from frontdesk.administration.company_state import UnknownCompany, UnknownTarget
from frontdesk.config import ENV_PREFIX, Settings
from frontdesk.errors import FrontdeskError

T = TypeVar("T")


class NotFound(click.ClickException):
    """A company, customer, client or grant named on the command line does not exist."""

    exit_code = 2


def settings(**values: Any) -> Settings:
    """The settings from FRONTDESK_* variables (``values`` win); invalid ones stop the
    command naming the variable to fix."""
    try:
        return Settings(**values)
    except ValidationError as error:
        raise click.ClickException(f"invalid settings: {describe(error)}") from None
    except FrontdeskError as error:
        raise click.ClickException(f"invalid settings: {error}") from None


def describe(error: ValidationError) -> str:
    """Each problem under the variable an operator sets, not the pydantic field."""
    problems = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else ""
        name = f"{ENV_PREFIX}{field.upper()}" if field else "settings"
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"{name}: {message}")
    return "; ".join(problems)


def run(work: Callable[[], Awaitable[T]]) -> T:
    """Run one command's work; an expected failure ends the command in one line."""
    try:
        return asyncio.run(work())  # type: ignore[arg-type]
    except (UnknownCompany, UnknownTarget) as error:
        raise NotFound(str(error)) from None
    except FrontdeskError as error:
        raise click.ClickException(str(error)) from None
    except DBAPIError as error:
        # The driver's own first line: SQLAlchemy's text would quote the statement.
        reason = str(error.orig if error.orig is not None else error).strip().splitlines()
        raise click.ClickException(f"database error: {reason[0] if reason else error}") from None


def local_base_url(host: str, port: int) -> str:
    """The URL ``serve --host H --port P`` advertises when FRONTDESK_BASE_URL is not set:
    the address served, loopback in place of a wildcard one (0.0.0.0, ::)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"http://{host}:{port}"
    if address.is_unspecified:
        address = ipaddress.ip_address("::1" if address.version == 6 else "127.0.0.1")
    shown = f"[{address}]" if address.version == 6 else str(address)
    return f"http://{shown}:{port}"
