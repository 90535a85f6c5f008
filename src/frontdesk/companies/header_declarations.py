"""Which arguments of a tool its input schema marks with ``x-mcp-header`` (MCP 2026-07-28,
Streamable HTTP, "Custom Headers from Tool Parameters"): read when a company is defined
and loaded, so the MCP endpoint only compares headers with arguments
(protocol.param_headers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

ANNOTATION = "x-mcp-header"
# RFC 9110 5.6.2: a field name is a token (1*tchar).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# The revision allows the annotation on these types only; a number's text form is not
# portable between languages.
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
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
