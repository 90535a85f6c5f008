"""A tool's ``Mcp-Param-*`` headers (MCP 2026-07-28, Streamable HTTP, "Custom Headers from
Tool Parameters"): the arguments its input schema marks with ``x-mcp-header``, which a
client repeats in headers so that intermediaries can route on them, and the check that the
headers say what the body says.

A load balancer may route on the header while the tool acts on the body; the server is the
one place that sees both, so it refuses any disagreement (``HeaderMismatch``, -32020).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from frontdesk.protocol.errors import HeaderMismatch

ANNOTATION = "x-mcp-header"
HEADER_PREFIX = b"mcp-param-"
# RFC 9110 5.6.2: a field name is a token (1*tchar).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# The revision allows the annotation on these types only; a number's text form is not
# portable between languages.
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# An integer's header compared as a number: digits, with a fraction of zeros at most
# (bounded: int() refuses a few thousand digits, and no argument has more than 20).
_DECIMAL = re.compile(r"-?[0-9]{1,20}(?:\.0{1,20})?")
# Keywords whose values are schemas: an annotation under any of them is not statically
# reachable from the root (the revision: only a chain of ``properties`` keys is).
_SCHEMA_KEYWORDS = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAP_KEYWORDS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


class ParamHeader(NamedTuple):
    """One argument a client must repeat in a header."""

    # The chain of ``properties`` keys from the schema's root to the argument.
    path: tuple[str, ...]
    # Its header's name as it travels in ASGI (lower case) and as a person reads it.
    field: bytes
    header: str
    is_integer: bool


class InvalidDeclaration(ValueError):
    """An ``x-mcp-header`` annotation the revision does not allow."""


def declared(input_schema: Mapping[str, Any]) -> tuple[ParamHeader, ...]:
    """The headers an input schema declares; none when one of its annotations is invalid.

    A client must drop a tool whose annotations break the revision's rules, so no
    conforming client can call it with headers to check.
    """
    try:
        return declarations(input_schema)
    except InvalidDeclaration:
        return ()


def declarations(input_schema: Mapping[str, Any]) -> tuple[ParamHeader, ...]:
    """The headers an input schema declares, or InvalidDeclaration saying what is wrong and
    where (the property, or the schema's JSON Pointer when no property path reaches it)."""
    headers: list[ParamHeader] = []
    seen: dict[str, str] = {}
    for path, pointer, schema in _schema_positions(input_schema):
        if ANNOTATION not in schema:
            continue
        if not path:
            raise InvalidDeclaration(
                f"schema at {pointer or '/'!r}: {ANNOTATION} may only mark a property reached"
                " through 'properties' alone"
            )
        where = ".".join(path)
        token = schema[ANNOTATION]
        if type(token) is not str or _TOKEN.fullmatch(token) is None:
            raise InvalidDeclaration(
                f"property {where!r}: {ANNOTATION} must be an HTTP field-name token"
            )
        kind = schema.get("type")
        if kind not in _HEADER_TYPES:
            raise InvalidDeclaration(
                f"property {where!r}: {ANNOTATION} needs type string, integer or boolean"
            )
        folded = token.lower()
        if folded in seen:
            raise InvalidDeclaration(
                f"property {where!r}: {ANNOTATION} {token!r} repeats the header of property"
                f" {seen[folded]!r} (header names ignore case)"
            )
        seen[folded] = where
        name = f"Mcp-Param-{token}"
        headers.append(ParamHeader(path, name.lower().encode("ascii"), name, kind == "integer"))
    return tuple(headers)


def _schema_positions(
    root: Mapping[str, Any],
) -> Iterator[tuple[tuple[str, ...] | None, str, Mapping[str, Any]]]:
    """Every subschema with its ``properties`` path (None once another keyword was crossed)
    and its JSON Pointer (RFC 6901), to name it in an error.

    ``$ref`` is never followed: a referenced schema is not statically reachable.
    """
    pending: list[tuple[tuple[str, ...] | None, str, Any]] = [((), "", root)]
    while pending:
        path, pointer, schema = pending.pop()
        if type(schema) is not dict:
            continue
        yield path, pointer, schema
        for keyword, value in schema.items():
            at = f"{pointer}/{_escaped(keyword)}"
            if keyword == "properties" and type(value) is dict:
                pending.extend(
                    (None if path is None else (*path, name), f"{at}/{_escaped(name)}", sub)
                    for name, sub in value.items()
                )
            elif keyword in _SCHEMA_KEYWORDS:
                pending.append((None, at, value))
            elif keyword in _SCHEMA_LIST_KEYWORDS and type(value) is list:
                pending.extend((None, f"{at}/{index}", sub) for index, sub in enumerate(value))
            elif keyword in _SCHEMA_MAP_KEYWORDS and type(value) is dict:
                pending.extend((None, f"{at}/{_escaped(name)}", sub) for name, sub in value.items())


def _escaped(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901 3)."""
    return token.replace("~", "~0").replace("/", "~1")


def check(
    declared_headers: tuple[ParamHeader, ...],
    arguments: Any,
    sent: Mapping[bytes, list[bytes]],
    required: bool,
    read_value: Callable[[bytes, str], str],
) -> None:
    """Refuse a call whose declared headers disagree with its arguments.

    Each argument present (and not null) needs its header with the same value, decoded
    first when base64-wrapped; a header for an absent argument is refused too. A message of
    a batch may leave a header out (``required`` False), as it may Mcp-Name. ``read_value``
    is how a header's text is read (the routing headers' own reader: OWS and base64).
    """
    for declaration in declared_headers:
        values = sent.get(declaration.field)
        value = _argument(arguments, declaration.path)
        if values is not None and len(values) > 1:
            raise HeaderMismatch(f"The {declaration.header} header appears more than once")
        where = ".".join(declaration.path)
        if values is None:
            # A value with no header form (null, absent, an object...) is sent without one.
            if required and _has_header_form(value):
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
