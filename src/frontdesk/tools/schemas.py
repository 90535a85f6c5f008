"""Tool schemas (input and output) checked by jsonschema-rs.

A schema is compiled once, when its company is applied and again when it is loaded; each
call's arguments, and each result's structured content, are then checked against it
(its cost per call: docs/decisions/hot-path-records.md). What compiling settles, so that
a schema that passed ``companies apply`` can check every call:

- Drafts. ``$schema`` picks the draft: 2020-12 (also what a schema without one follows,
  as MCP has it), 2019-09 or draft-07. Any other is refused: those three are the ones the
  official test suite is run for (tests/test_json_schema_suite.py).
- References. Every ``$ref`` resolves within the schema itself (a JSON pointer, an
  ``$anchor``, a nested ``$id``), and nothing is ever fetched: a worker would otherwise
  read a URL, or a file, that a company chose. jsonschema-rs resolves, when compiling,
  every reference that a call could follow; references in ``$defs`` entries that nothing
  refers to are resolved too (``_every_definition``), so a typo in one is refused at apply
  rather than found when a later edit refers to it.
- Patterns. ``pattern`` and ``patternProperties`` are ECMA-262 regular expressions, as
  the specification has them, which jsonschema-rs translates for Rust's ``regex`` engine:
  ``\\d`` and ``\\w`` are ASCII, ``\\s`` takes Unicode spaces, ``$`` matches only at the
  very end, ``.`` any code point but a line terminator. That engine matches in time linear
  in the string: a company writes the pattern but any caller the string, and a
  backtracking engine would let one pattern (``^(a+)+$``) hold the worker, and every
  company it serves. It has no lookaround and no backreferences, so a pattern using them
  is refused, with a message saying so (``_refusal``).
- Meaning, as the specification has it: ``format`` is an annotation, never asserted (in
  draft-07 too, where jsonschema-rs would otherwise assert it); numbers equal by value
  (``1`` and ``1.0``), and ``true`` is not ``1``; lengths count code points.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import jsonschema_rs

# The drafts served, and where each keeps definitions that a $ref may point into.
_DEFINITIONS: Final[dict[type[jsonschema_rs.Validator], str]] = {
    jsonschema_rs.Draft202012Validator: "$defs",
    jsonschema_rs.Draft201909Validator: "$defs",
    jsonschema_rs.Draft7Validator: "definitions",
}
_LINEAR_TIME: Final = jsonschema_rs.RegexOptions()
# The longest message kept whole: a value quoted in it can be as long as the caller made it.
_MESSAGE_CHARACTERS: Final = 160


class InvalidSchema(ValueError):
    """A schema that cannot check calls: not a valid JSON Schema, a draft not served, a
    ``$ref`` that does not resolve within it, or a pattern the linear-time engine refuses.
    The message starts with where (a JSON pointer into the schema, or the keyword)."""


class SchemaCheck:
    """One schema, compiled: ``problem`` says whether and why an instance breaks it."""

    __slots__ = ("_validator",)

    def __init__(self, schema: dict[str, Any] | bool) -> None:
        self._validator = _compiled(schema)
        if isinstance(schema, dict):
            reaching = _every_definition(schema, _DEFINITIONS[type(self._validator)])
            if reaching is not None:
                _compiled(reaching)

    def problem(self, instance: object) -> str | None:
        """None when ``instance`` is valid, else where and why it is not, in plain words."""
        validator = self._validator
        try:
            if validator.is_valid(instance):
                return None
            error = next(iter(validator.iter_errors(instance)))
        except ValueError as failure:
            # Not JSON (a Python provider's output may hold any object), or an invalid
            # value nested beyond the depth jsonschema-rs converts back for its error.
            return f"arguments: cannot be checked ({failure})"
        where = "/".join(str(part) for part in error.instance_path) or "arguments"
        return f"{where}: {_shortened(error.message)}"


def _compiled(schema: dict[str, Any] | bool) -> jsonschema_rs.Validator:
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if jsonschema_rs.validator_cls_for(schema) not in _DEFINITIONS:
        raise InvalidSchema(
            f"#/$schema: {_shortened(repr(declared))} is not a draft served here;"
            " use 2020-12 (the default), 2019-09 or draft-07"
        )
    try:
        return jsonschema_rs.validator_for(
            schema,
            # JSON Schema 2020-12 core 9.1.2: a URI identifies a schema, it is not
            # necessarily downloaded. Nothing is, here, not even a file: URI.
            offline=True,
            pattern_options=_LINEAR_TIME,
            validate_formats=False,
        )
    except jsonschema_rs.ValidationError as error:
        raise InvalidSchema(_refusal(error, declared)) from None
    except ValueError as error:  # a value that is not JSON, e.g. a date read from YAML
        raise InvalidSchema(f"#: {error}") from None


def _every_definition(schema: dict[str, Any], container: str) -> dict[str, Any] | None:
    """The schema with a reference to each of its root definitions added, or None when
    it has none: compiled, it resolves their references and compiles their patterns,
    which jsonschema-rs leaves alone in a definition nothing refers to. Never used to
    check a call."""
    definitions = schema.get(container)
    if not isinstance(definitions, dict) or not definitions:
        return None
    # A JSON pointer (RFC 6901 3) in a URI fragment (RFC 6901 6: percent-encoded).
    references = [
        {"$ref": f"#/{container}/{quote(_escaped(name), safe='~')}"} for name in definitions
    ]
    # Every draft served has allOf; an allOf of the schema's own comes first, unchanged.
    already = schema.get("allOf")
    return {**schema, "allOf": [*(already if isinstance(already, list) else []), *references]}


def _escaped(name: str) -> str:
    """A name as one reference token of a JSON pointer (RFC 6901 3)."""
    return name.replace("~", "~0").replace("/", "~1")


def _refusal(error: jsonschema_rs.ValidationError, declared: object) -> str:
    """Why jsonschema-rs refused a schema (whose ``$schema`` is ``declared``), starting
    with where in it."""
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Referencing):
        if isinstance(declared, str) and f"'{declared}'" in error.message:
            # A metaschema is looked up as a reference is, and no other is known.
            return f"#/$schema: {_shortened(error.message)}"
        # jsonschema-rs does not say where the reference is; its message quotes it.
        return (
            f"$ref: {_shortened(error.message)} (a tool's schema refers only within itself;"
            " nothing is fetched)"
        )
    where = "#" + "".join(f"/{_escaped(str(part))}" for part in error.instance_path)
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Format) and kind.format == "regex":
        pattern = error.instance
        return f"{where}: {_shortened(repr(pattern))} {_why_not_a_pattern(pattern)}"
    return f"{where}: {_shortened(error.message)}"


def _why_not_a_pattern(pattern: object) -> str:
    # The backtracking engine takes what the linear-time one lacks: if it compiles the
    # pattern, lookaround or a backreference is what was refused.
    try:
        jsonschema_rs.validator_for(
            {"pattern": pattern}, pattern_options=jsonschema_rs.FancyRegexOptions()
        )
    except jsonschema_rs.ValidationError:
        return "is not an ECMA-262 regular expression"
    return (
        "uses lookaround or a backreference: patterns are matched in time linear in the"
        " string, by an engine that has neither"
    )


def _shortened(message: str) -> str:
    """The message, its middle cut out if it is long: it can quote a whole value."""
    if len(message) <= _MESSAGE_CHARACTERS:
        return message
    half = (_MESSAGE_CHARACTERS - 3) // 2
    return f"{message[:half]}...{message[-half:]}"
