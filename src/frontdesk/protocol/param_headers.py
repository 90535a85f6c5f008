"""A tool's ``Mcp-Param-*`` headers (MCP 2026-07-28, Streamable HTTP, "Custom Headers from
Tool Parameters"): the check that the headers a client repeats for intermediaries say what
the body says. Which arguments a tool declares is read from its schema when the company is
defined (companies.header_declarations).

A load balancer may route on the header while the tool acts on the body; the server is the
one place that sees both, so it refuses any disagreement (``HeaderMismatch``, -32020).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from frontdesk.companies.header_declarations import ParamHeader
from frontdesk.protocol.errors import HeaderMismatch

HEADER_PREFIX = b"mcp-param-"
# An integer's header compared as a number: digits, with a fraction of zeros at most
# (bounded: int() refuses a few thousand digits, and no argument has more than 20).
_DECIMAL = re.compile(r"-?[0-9]{1,20}(?:\.0{1,20})?")


def sent(raw_headers: Sequence[tuple[bytes, bytes]]) -> dict[bytes, list[bytes]]:
    """Every ``Mcp-Param-*`` header sent, by lower-case name, each copy of it (read only for
    a tool that declares some: most tools declare none)."""
    found: dict[bytes, list[bytes]] = {}
    for header, value in raw_headers:
        if header.startswith(HEADER_PREFIX):
            found.setdefault(header, []).append(value)
    return found


def check(
    declared_headers: tuple[ParamHeader, ...],
    arguments: Any,
    sent: Mapping[bytes, list[bytes]],
    read_value: Callable[[bytes, str], str],
) -> None:
    """Refuse a call whose declared headers disagree with its arguments.

    Each argument present (and not null) needs its header with the same value, decoded
    first when base64-wrapped; a header for an absent argument is refused too; every member
    of a batch is held to the same headers (``modern.admit_batch``). ``read_value`` is how
    a header's text is read (the routing headers' own reader: OWS and base64).
    """
    for declaration in declared_headers:
        values = sent.get(declaration.field)
        value = _argument(arguments, declaration.path)
        if values is not None and len(values) > 1:
            raise HeaderMismatch(f"The {declaration.header} header appears more than once")
        where = ".".join(declaration.path)
        if values is None:
            # A value with no header form (null, absent, an object...) is sent without one.
            if _has_header_form(value):
                raise HeaderMismatch(
                    f"The {declaration.header} header is missing (arguments.{where} is set)"
                )
            continue
        if value is None:
            raise HeaderMismatch(
                f"The {declaration.header} header is sent but arguments.{where} is not"
            )
        if not _matches(declaration, value, read_value(values[0], declaration.header)):
            raise HeaderMismatch(
                f"The {declaration.header} header does not match arguments.{where}"
            )


def _argument(arguments: Any, path: tuple[str, ...]) -> Any:
    value = arguments
    for key in path:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value


def _has_header_form(value: Any) -> bool:
    kind = type(value)
    return kind is str or kind is bool or kind is int or (kind is float and value.is_integer())


def _matches(declaration: ParamHeader, value: Any, text: str) -> bool:
    if not _has_header_form(value):
        # An object, an array or a fraction: a client sends no header, so none can match.
        return False
    if type(value) is bool:
        return text == ("true" if value else "false")
    if type(value) is str:
        return text == value
    if declaration.is_integer and _DECIMAL.fullmatch(text) is not None:
        # Numerically, as the revision advises: 42.0 and 42 are one integer.
        return int(text.split(".", 1)[0]) == int(value)
    return text == str(value)
