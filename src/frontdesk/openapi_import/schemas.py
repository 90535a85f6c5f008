"""An OpenAPI schema as the JSON Schema (2020-12) a tool declares, whole in itself.

References are looked up with ``referencing`` (the resolver jsonschema uses), in the
document only, and inlined: a tool's schema is served alone, without the document's
components. A schema that refers to itself (a tree of categories) cannot be inlined and is
refused, naming it. What OpenAPI 3.0's dialect says differently is said the 2020-12 way:
``nullable: true`` adds ``"null"`` to the type (and ``null`` to an enum), and the boolean
``exclusiveMinimum``/``exclusiveMaximum`` become the bounds themselves. OpenAPI's own
keywords (``discriminator``, ``xml``, ``externalDocs``, ``example``) and extensions
(``x-...``) are dropped: they describe, and a tool's schema checks.
"""

from __future__ import annotations

from typing import Any

from frontdesk.openapi_import import ImportRefused

# A ``referencing`` resolver (what ``Registry.resolver`` returns; the package does not
# export its class by name).
Resolver = Any

# The keywords whose value is a schema, a list of schemas, or a map of them (2020-12).
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})
_OPENAPI_ONLY = frozenset({"discriminator", "xml", "externalDocs", "example", "nullable"})
# A tool's schema past this many subschemas, once inlined, is refused: a document can make
# one small schema refer many times to large ones.
MAX_SCHEMA_NODES = 5_000


class SchemaConverter:
    """Converts the schemas of one document (``version`` "3.0" or "3.1")."""

    def __init__(self, resolver: Resolver, version: str) -> None:
        self._resolver = resolver
        self._version = version

    def resolve(self, node: Any) -> Any:
        """``node`` itself, or what its ``$ref`` names (a parameter, a body, a response)."""
        resolver = self._resolver
        seen: list[str] = []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            reference = node["$ref"]
            if reference in seen:
                raise ImportRefused(f"the reference {reference!r} refers to itself")
            seen.append(reference)
            resolved = _lookup(resolver, reference)
            node, resolver = resolved.contents, resolved.resolver
        return node

    def convert(
        self, schema: Any, what: str, leave_out: str | None = None
    ) -> dict[str, Any] | bool:
        """The JSON Schema for ``schema``; ``what`` names it in a refusal. ``leave_out``
        ("readOnly" for what is sent, "writeOnly" for what is answered) drops the
        properties so marked, and their ``required``: OpenAPI 3.1 4.8.24.3 (and 3.0) has a
        required read-only property required only in answers, and a write-only one only
        in requests."""
        budget = [MAX_SCHEMA_NODES]
        return self._convert(schema, self._resolver, (), what, budget, leave_out)

    def _convert(
        self,
        schema: Any,
        resolver: Resolver,
        references: tuple[str, ...],
        what: str,
        budget: list[int],
        leave_out: str | None = None,
    ) -> dict[str, Any] | bool:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            raise ImportRefused(f"{what}: a schema must be an object or a boolean")
        budget[0] -= 1
        if budget[0] < 0:
            raise ImportRefused(
                f"{what}: the schema has more than {MAX_SCHEMA_NODES} parts once its"
                " references are inlined"
            )
        reference = schema.get("$ref")
        if isinstance(reference, str):
            if reference in references:
                raise ImportRefused(
                    f"{what}: the schema {reference!r} refers to itself, which a tool's"
                    " schema cannot inline"
                )
            resolved = _lookup(resolver, reference)
            target = self._convert(
                resolved.contents,
                resolved.resolver,
                (*references, reference),
                what,
                budget,
                leave_out,
            )
            siblings = {key: value for key, value in schema.items() if key != "$ref"}
            if not siblings:
                return target
            # OpenAPI 3.1 (JSON Schema 2020-12) reads keywords beside $ref as applying too.
            rest = self._convert(siblings, resolver, references, what, budget, leave_out)
            if isinstance(rest, dict) and set(rest) <= {"description", "title"}:
                return target if isinstance(target, bool) else {**target, **rest}
            return {"allOf": [target, rest]}
        converted: dict[str, Any] = {}

        def inner(item: Any) -> dict[str, Any] | bool:
            return self._convert(item, resolver, references, what, budget, leave_out)

        for key, value in schema.items():
            if key in _OPENAPI_ONLY or key.startswith("x-") or key == "$schema":
                continue
            if key in _ONE_SCHEMA and isinstance(value, dict | bool):
                converted[key] = inner(value)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                converted[key] = [inner(item) for item in value]
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                converted[key] = {name: inner(item) for name, item in value.items()}
            else:
                converted[key] = value
        if leave_out is not None:
            _leave_out(converted, leave_out)
        if self._version == "3.0":
            _from_openapi_30(schema, converted)
        return converted


def _leave_out(converted: dict[str, Any], marker: str) -> None:
    """Drop the properties marked ``marker: true`` (see SchemaConverter.convert)."""
    properties = converted.get("properties")
    if not isinstance(properties, dict):
        return
    dropped = {
        name
        for name, schema in properties.items()
        if isinstance(schema, dict) and schema.get(marker) is True
    }
    if not dropped:
        return
    converted["properties"] = {
        name: schema for name, schema in properties.items() if name not in dropped
    }
    required = converted.get("required")
    if isinstance(required, list):
        converted["required"] = [name for name in required if name not in dropped]


def _from_openapi_30(schema: dict[str, Any], converted: dict[str, Any]) -> None:
    """OpenAPI 3.0's dialect said the 2020-12 way (see the module's docstring)."""
    if schema.get("nullable") is True:
        kind = converted.get("type")
        if isinstance(kind, str):
            converted["type"] = [kind, "null"]
        enum = converted.get("enum")
        if isinstance(enum, list) and None not in enum:
            converted["enum"] = [*enum, None]
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = converted.get(exclusive)
        if isinstance(flag, bool):
            del converted[exclusive]
            if flag and bound in converted:
                converted[exclusive] = converted.pop(bound)


def _lookup(resolver: Resolver, reference: str) -> Any:
    from referencing.exceptions import Unresolvable

    try:
        return resolver.lookup(reference)
    except Unresolvable:
        # Its message would quote the whole document.
        raise ImportRefused(
            f"the reference {reference[:200]!r} does not resolve within the document"
        ) from None


def resolver_for(document: dict[str, Any]) -> Resolver:
    """A resolver of references within ``document`` only: its registry retrieves nothing."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    base = "urn:frontdesk:openapi-document"
    registry: Registry[Any] = Registry().with_resource(base, DRAFT202012.create_resource(document))
    return registry.resolver(base_uri=base)
