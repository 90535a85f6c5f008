"""Compiled JSON Schema (2020-12) checks for tool arguments and tool outputs.

A tool's schema is compiled once, when its company is loaded, into plain Python closures,
one per keyword; a call's arguments then go through them without a dictionary lookup per
keyword (a valid ``echo`` call: about half a microsecond). Tool schemas use a small part of
the vocabulary (what Pydantic and Zod write: types, properties, required, items, bounds,
patterns, enums, the combinators, ``$ref`` into ``$defs``), and that part is compiled here.

Why not a library: jsonschema-rs checked as fast, but its 15 MB of code, mapped as it
runs, cost every worker about 10 MB of RSS; the jsonschema library costs as much memory
and tens of microseconds a call. It still checks what this module does not compile (the
dynamic and unevaluated keywords, anchors, a nested ``$id``), loaded only then, and every
schema as a companies file is applied, against the metaschema, for its precise messages
(companies.definition).

What the keywords mean follows the 2020-12 specification: ``format`` and the ``content*``
keywords are annotations, not checks; numbers equal by value (``1`` and ``1.0``) and
``true`` is not ``1``; lengths count code points. ``pattern`` must be a Python regular
expression, as the jsonschema library has it (the specification names ECMA-262's dialect;
the two agree on what schemas commonly use), and is searched by RE2 where RE2 takes it,
in time linear in the string (see ``_pattern``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sized
from typing import Any, cast
from urllib.parse import unquote

import orjson

# Keywords whose meaning this module does not compile; a schema using any of them is
# checked by the jsonschema library instead.
NOT_COMPILED = frozenset(
    {
        "$dynamicRef",
        "$dynamicAnchor",
        "$anchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentSchemas",
    }
)
_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
# The longest rendering of a value quoted in a message: arguments can be long.
_QUOTED_CHARACTERS = 80


class InvalidSchema(ValueError):
    """A schema that is not a valid JSON Schema: a keyword's value of the wrong kind."""


class _NotCompiled(Exception):
    """The schema uses what this module does not compile."""


class Problem:
    """Why an instance is invalid, and where: the path is collected from the failing
    value outwards, so a valid instance never builds one."""

    __slots__ = ("message", "reversed_path")

    def __init__(self, message: str) -> None:
        self.message = message
        self.reversed_path: list[str | int] = []

    def at(self, part: str | int) -> Problem:
        self.reversed_path.append(part)
        return self

    @property
    def path(self) -> list[str | int]:
        return self.reversed_path[::-1]


Check = Callable[[Any], Problem | None]


class SchemaCheck:
    """One schema, compiled: ``problem`` says whether and why an instance breaks it."""

    __slots__ = ("_check",)

    def __init__(self, schema: dict[str, Any] | bool) -> None:
        try:
            self._check = _Compiler(schema).compile(schema, "#")
        except _NotCompiled:
            self._check = _library_check(schema)

    def problem(self, instance: object) -> str | None:
        """None when ``instance`` is valid, else where and why it is not, in plain words."""
        try:
            found = self._check(instance)
        except RecursionError:
            return "arguments: nested too deeply"
        if found is None:
            return None
        where = "/".join(str(part) for part in found.path) or "arguments"
        return f"{where}: {found.message}"


def _library_check(schema: dict[str, Any] | bool) -> Check:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)

    def check(instance: Any) -> Problem | None:
        error = next(iter(validator.iter_errors(instance)), None)
        if error is None:
            return None
        problem = Problem(error.message)
        problem.reversed_path = list(reversed(error.absolute_path))
        return problem

    return check


def _quoted(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    if len(text) > _QUOTED_CHARACTERS:
        return text[: _QUOTED_CHARACTERS - 3] + "..."
    return text


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_type_is(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return _is_number(value)
    if name == "boolean":
        return isinstance(value, bool)
    return value is None  # "null"


def _canonical(value: Any) -> Any:
    """A hashable stand-in for a JSON value, equal to another's exactly when JSON Schema
    has the two values equal: 1 and 1.0 are (as in Python), true and 1 are not (unlike
    Python), and so on inside arrays and objects. enum, const and uniqueItems compare these,
    by hashing: a set, not a comparison of every pair."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, list):
        return ("array", tuple(map(_canonical, value)))
    if isinstance(value, dict):
        return ("object", frozenset((name, _canonical(item)) for name, item in value.items()))
    return value


def _valid(_instance: Any) -> Problem | None:
    return None


def _in_sequence(checks: list[Check]) -> Check:
    """The checks one after the other; the first problem found is the answer. Up to three
    (nearly every schema) are chained by ``or`` rather than looped over, which takes a
    third off a valid call: a Problem is always true."""
    if not checks:
        return _valid
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda instance: first(instance) or second(instance)
    if len(checks) == 3:
        first, second, third = checks
        return lambda instance: first(instance) or second(instance) or third(instance)

    def check(instance: Any) -> Problem | None:
        for one in checks:
            problem = one(instance)
            if problem is not None:
                return problem
        return None

    return check


class _Compiler:
    """Compiles one schema document; a ``$ref`` compiles its target once, even when it
    refers (directly or not) to itself."""

    def __init__(self, root: dict[str, Any] | bool) -> None:
        self._root = root
        # By JSON pointer: the compiled check, or a cell filled once it is compiled.
        self._compiled: dict[str, list[Check]] = {}

    def compile(self, schema: Any, pointer: str) -> Check:
        cell = self._compiled.get(pointer)
        if cell is not None:
            if cell:
                return cell[0]
            # Its own target, being compiled: look it up when called, by then it is done.
            pending = cell
            return lambda instance: pending[0](instance)
        cell = self._compiled[pointer] = []
        check = self._compile_schema(schema, pointer)
        cell.append(check)
        return check

    def _compile_schema(self, schema: Any, pointer: str) -> Check:
        if schema is True:
            return _valid
        if schema is False:
            return lambda instance: Problem(f"False schema does not allow {_quoted(instance)}")
        if not isinstance(schema, dict):
            raise InvalidSchema(f"{pointer}: a schema is an object or a boolean")
        if NOT_COMPILED.intersection(schema) or ("$id" in schema and pointer != "#"):
            raise _NotCompiled
        checks: list[Check] = []
        for keyword, value in schema.items():
            compile_keyword = _KEYWORDS.get(keyword)
            if compile_keyword is not None:
                found = compile_keyword(self, schema, value, f"{pointer}/{keyword}")
                if found is not None:
                    checks.append(found)
        return _in_sequence(checks)

    def reference(self, reference: Any, pointer: str) -> Check:
        if not isinstance(reference, str):
            raise InvalidSchema(f"{pointer}: a $ref is a string")
        if not reference.startswith("#"):
            # Resolving it would mean fetching it, at a URL the company chose, while a
            # worker serves: a tool's schema refers only within itself.
            raise InvalidSchema(f"{pointer}: {reference} is outside this schema")
        target: Any = self._root
        fragment = reference[1:]
        if fragment and not fragment.startswith("/"):
            raise _NotCompiled  # an anchor's name
        for raw in fragment.split("/")[1:]:
            # A URI fragment: percent-decoded first, then the pointer's own escapes.
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise InvalidSchema(f"{pointer}: {reference} points at nothing")
        return self.compile(target, "#" + fragment)


KeywordCompiler = Callable[[_Compiler, dict[str, Any], Any, str], Check | None]


def _escaped(part: str) -> str:
    """A name as a part of a JSON pointer."""
    return part.replace("~", "~0").replace("/", "~1")


def _count(value: Any, pointer: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidSchema(f"{pointer}: must be a non-negative integer")
    return value


def _number(value: Any, pointer: str) -> int | float:
    if not _is_number(value):
        raise InvalidSchema(f"{pointer}: must be a number")
    return cast(int | float, value)


def _each(compiler: _Compiler, value: Any, pointer: str) -> list[Check]:
    """allOf, anyOf, oneOf and prefixItems: a non-empty array of schemas, each compiled."""
    if not isinstance(value, list) or not value:
        raise InvalidSchema(f"{pointer}: must be a non-empty array of schemas")
    return [compiler.compile(schema, f"{pointer}/{index}") for index, schema in enumerate(value)]


def _strings(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidSchema(f"{pointer}: must be an array of strings")
    return value


Search = Callable[[str], object]


def _pattern(value: Any, pointer: str) -> Search:
    """The pattern's search: by RE2 where RE2 takes the pattern, else by Python's re.

    A company writes the pattern and any caller the string it is searched in. Python's re
    backtracks, so a pattern like ``^(a+)+$`` and a string of a few dozen characters could
    hold the worker, and every company it serves, for minutes; RE2 takes time linear in
    the string. RE2 refuses lookaround and backreferences, rare in tool schemas: those
    are left to re. The pattern must be one re takes, as the jsonschema library has it.
    """
    if not isinstance(value, str):
        raise InvalidSchema(f"{pointer}: must be a string")
    try:
        backtracking = re.compile(value)
    except re.error as error:
        raise InvalidSchema(f"{pointer}: not a regular expression ({error})") from None
    return _linear_time_search(value) or backtracking.search


def _linear_time_search(pattern: str) -> Search | None:
    # Loaded with the first pattern: most tool schemas have none.
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False  # a refused pattern is an answer here, not an error
    try:
        return cast(Search, re2.compile(pattern, options).search)
    except re2.error:
        return None


# --- any instance


def _type(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(name not in _TYPES for name in names):
        raise InvalidSchema(f"{pointer}: must name JSON types")
    expected = " or ".join(f'"{name}"' for name in names)
    if len(names) == 1:
        # The common case, spelled out: one isinstance call for a valid instance.
        exact: type | tuple[type, ...] | None = {
            "string": str,
            "object": dict,
            "array": list,
            "boolean": bool,
        }.get(names[0])
        if exact is not None:

            def check_exactly(instance: Any) -> Problem | None:
                if isinstance(instance, exact):
                    return None
                return Problem(f"{_quoted(instance)} is not of type {expected}")

            return check_exactly

    def check(instance: Any) -> Problem | None:
        for name in names:
            if _json_type_is(instance, name):
                return None
        return Problem(f"{_quoted(instance)} is not of type {expected}")

    return check


def _enum(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    if not isinstance(value, list):
        raise InvalidSchema(f"{pointer}: must be an array")
    allowed = {_canonical(one) for one in value}

    def check(instance: Any) -> Problem | None:
        if _canonical(instance) in allowed:
            return None
        return Problem(f"{_quoted(instance)} is not one of {_quoted(value)}")

    return check


def _const(_c: _Compiler, _s: dict[str, Any], value: Any, _pointer: str) -> Check:
    expected = _canonical(value)

    def check(instance: Any) -> Problem | None:
        if _canonical(instance) == expected:
            return None
        return Problem(f"{_quoted(value)} was expected")

    return check


def _ref(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    return compiler.reference(value, pointer)


def _all_of(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    return _in_sequence(_each(compiler, value, pointer))


def _any_of(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    checks = _each(compiler, value, pointer)

    def check(instance: Any) -> Problem | None:
        for one in checks:
            if one(instance) is None:
                return None
        return Problem(f"{_quoted(instance)} is not valid under any of the given schemas")

    return check


def _one_of(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    checks = _each(compiler, value, pointer)

    def check(instance: Any) -> Problem | None:
        valid = sum(1 for one in checks if one(instance) is None)
        if valid == 1:
            return None
        if valid == 0:
            return Problem(f"{_quoted(instance)} is not valid under any of the given schemas")
        return Problem(f"{_quoted(instance)} is valid under more than one of the given schemas")

    return check


def _not(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    inner = compiler.compile(value, pointer)

    def check(instance: Any) -> Problem | None:
        if inner(instance) is None:
            return Problem(f"{_quoted(instance)} should not be valid under {_quoted(value)}")
        return None

    return check


def _if(compiler: _Compiler, schema: dict[str, Any], value: Any, pointer: str) -> Check | None:
    if "then" not in schema and "else" not in schema:
        return None
    condition = compiler.compile(value, pointer)
    base = pointer.rsplit("/", 1)[0]
    then = compiler.compile(schema.get("then", True), f"{base}/then")
    otherwise = compiler.compile(schema.get("else", True), f"{base}/else")

    def check(instance: Any) -> Problem | None:
        return then(instance) if condition(instance) is None else otherwise(instance)

    return check


# --- objects


def _object_members(
    compiler: _Compiler, schema: dict[str, Any], _value: Any, pointer: str
) -> Check | None:
    """properties, patternProperties and additionalProperties together: one pass over the
    object's members. Compiled once, at whichever of the three comes first."""
    base = pointer.rsplit("/", 1)[0]
    keyword = pointer.rsplit("/", 1)[1]
    first = next(k for k in schema if k in _MEMBER_KEYWORDS)
    if keyword != first:
        return None
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    if not isinstance(properties, dict) or not isinstance(patterns, dict):
        raise InvalidSchema(f"{base}: properties and patternProperties are objects")
    named = {
        name: compiler.compile(sub, f"{base}/properties/{_escaped(name)}")
        for name, sub in properties.items()
    }
    matched = [
        (
            _pattern(pattern, f"{base}/patternProperties"),
            compiler.compile(sub, f"{base}/patternProperties/{_escaped(pattern)}"),
        )
        for pattern, sub in patterns.items()
    ]
    additional_schema = schema.get("additionalProperties", True)
    additional = (
        None
        if additional_schema is True
        else compiler.compile(additional_schema, f"{base}/additionalProperties")
    )
    refuses_others = additional_schema is False

    def check(instance: Any) -> Problem | None:
        if not isinstance(instance, dict):
            return None
        for name, member in instance.items():
            known = named.get(name)
            if known is not None:
                problem = known(member)
                if problem is not None:
                    return problem.at(name)
            matches = False
            for search, sub in matched:
                if search(name):
                    matches = True
                    problem = sub(member)
                    if problem is not None:
                        return problem.at(name)
            if known is None and not matches and additional is not None:
                if refuses_others:
                    return Problem(
                        f"Additional properties are not allowed ({name!r} was unexpected)"
                    )
                problem = additional(member)
                if problem is not None:
                    return problem.at(name)
        return None

    return check


_MEMBER_KEYWORDS = ("properties", "patternProperties", "additionalProperties")


def _required(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check | None:
    names = _strings(value, pointer)
    if not names:
        return None

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, dict):
            for name in names:
                if name not in instance:
                    return Problem(f"{_quoted(name)} is a required property")
        return None

    return check


def _dependent_required(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    if not isinstance(value, dict):
        raise InvalidSchema(f"{pointer}: must be an object")
    needs = {name: _strings(names, f"{pointer}/{name}") for name, names in value.items()}

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, dict):
            for name, others in needs.items():
                if name in instance:
                    for other in others:
                        if other not in instance:
                            return Problem(f"{_quoted(other)} is a dependency of {_quoted(name)}")
        return None

    return check


def _property_names(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    inner = compiler.compile(value, pointer)

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, dict):
            for name in instance:
                problem = inner(name)
                if problem is not None:
                    return problem.at(name)
        return None

    return check


def _size_bound(kind: type[Sized], noun: str, at_most: bool) -> KeywordCompiler:
    """minLength and the like: a bound on a string's, array's or object's size."""

    def compile_bound(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
        bound = _count(value, pointer)
        words = "longer than" if at_most else "shorter than"
        limit = f"{bound} {noun}{'' if bound == 1 else 's'}"

        def check(instance: Any) -> Problem | None:
            if isinstance(instance, kind) and (
                len(instance) > bound if at_most else len(instance) < bound
            ):
                return Problem(f"{_quoted(instance)} is {words} {limit}")
            return None

        return check

    return compile_bound


# --- arrays


def _items(compiler: _Compiler, schema: dict[str, Any], value: Any, pointer: str) -> Check:
    inner = compiler.compile(value, pointer)
    prefix = schema.get("prefixItems")
    skip = len(prefix) if isinstance(prefix, list) else 0
    refuses = value is False

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, list):
            if refuses and len(instance) > skip:
                return Problem(f"{_quoted(instance)} has more items than allowed")
            for index in range(skip, len(instance)):
                problem = inner(instance[index])
                if problem is not None:
                    return problem.at(index)
        return None

    return check


def _prefix_items(compiler: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    checks = _each(compiler, value, pointer)

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, list):
            for index, (item, one) in enumerate(zip(instance, checks, strict=False)):
                problem = one(item)
                if problem is not None:
                    return problem.at(index)
        return None

    return check


def _unique_items(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check | None:
    if not isinstance(value, bool):
        raise InvalidSchema(f"{pointer}: must be a boolean")
    if not value:
        return None

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, list) and len(set(map(_canonical, instance))) < len(instance):
            return Problem(f"{_quoted(instance)} has non-unique elements")
        return None

    return check


def _contains(compiler: _Compiler, schema: dict[str, Any], value: Any, pointer: str) -> Check:
    inner = compiler.compile(value, pointer)
    base = pointer.rsplit("/", 1)[0]
    least = _count(schema.get("minContains", 1), f"{base}/minContains")
    most = schema.get("maxContains")
    most = None if most is None else _count(most, f"{base}/maxContains")

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, list):
            found = sum(1 for item in instance if inner(item) is None)
            if found < least:
                return Problem(f"{_quoted(instance)} does not contain enough matching items")
            if most is not None and found > most:
                return Problem(f"{_quoted(instance)} contains too many matching items")
        return None

    return check


# --- strings


def _string_pattern(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    search = _pattern(value, pointer)

    def check(instance: Any) -> Problem | None:
        if isinstance(instance, str) and not search(instance):
            return Problem(f"{_quoted(instance)} does not match {_quoted(value)}")
        return None

    return check


# --- numbers


def _numeric_bound(relation: str) -> KeywordCompiler:
    """minimum, maximum and their exclusive forms: the instance must stand in
    ``relation`` to the bound."""
    holds: Callable[[Any, int | float], bool] = {
        "minimum": lambda n, b: n >= b,
        "maximum": lambda n, b: n <= b,
        "exclusiveMinimum": lambda n, b: n > b,
        "exclusiveMaximum": lambda n, b: n < b,
    }[relation]
    words = {
        "minimum": "less than the minimum of",
        "maximum": "greater than the maximum of",
        "exclusiveMinimum": "less than or equal to the minimum of",
        "exclusiveMaximum": "greater than or equal to the maximum of",
    }[relation]

    def compile_bound(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
        bound = _number(value, pointer)

        def check(instance: Any) -> Problem | None:
            if _is_number(instance) and not holds(instance, bound):
                return Problem(f"{_quoted(instance)} is {words} {_quoted(bound)}")
            return None

        return check

    return compile_bound


def _multiple_of(_c: _Compiler, _s: dict[str, Any], value: Any, pointer: str) -> Check:
    divisor = _number(value, pointer)
    if divisor <= 0:
        raise InvalidSchema(f"{pointer}: must be greater than 0")

    def check(instance: Any) -> Problem | None:
        if not _is_number(instance):
            return None
        if isinstance(divisor, float) or isinstance(instance, float):
            # As the jsonschema library decides it: an exact quotient, where it fits a float.
            try:
                quotient = instance / divisor
                failed = quotient != math.floor(quotient)
            except OverflowError:
                failed = True
        else:
            failed = instance % divisor != 0
        if failed:
            return Problem(f"{_quoted(instance)} is not a multiple of {_quoted(divisor)}")
        return None

    return check


_KEYWORDS: Mapping[str, KeywordCompiler] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "$ref": _ref,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
    "properties": _object_members,
    "patternProperties": _object_members,
    "additionalProperties": _object_members,
    "required": _required,
    "dependentRequired": _dependent_required,
    "propertyNames": _property_names,
    "minProperties": _size_bound(dict, "property", at_most=False),
    "maxProperties": _size_bound(dict, "property", at_most=True),
    "items": _items,
    "prefixItems": _prefix_items,
    "uniqueItems": _unique_items,
    "contains": _contains,
    "minItems": _size_bound(list, "item", at_most=False),
    "maxItems": _size_bound(list, "item", at_most=True),
    "minLength": _size_bound(str, "character", at_most=False),
    "maxLength": _size_bound(str, "character", at_most=True),
    "pattern": _string_pattern,
    "minimum": _numeric_bound("minimum"),
    "maximum": _numeric_bound("maximum"),
    "exclusiveMinimum": _numeric_bound("exclusiveMinimum"),
    "exclusiveMaximum": _numeric_bound("exclusiveMaximum"),
    "multipleOf": _multiple_of,
}
