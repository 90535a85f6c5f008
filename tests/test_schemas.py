"""Tool schemas compiled by frontdesk.schemas decide exactly as the jsonschema library does
(2020-12): every schema below against the same many instances, valid and invalid alike."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from frontdesk.schemas import InvalidSchema, SchemaCheck

Json = Any

# Values chosen to sit on every keyword's edges: 1 and 1.0 and true, empty and one-element
# containers, equal items of different types, code points beyond ASCII, huge integers.
EDGES: list[Json] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    2.0,
    0.1,
    -0.0,
    10,
    3,
    2**70,
    1e308,
    "",
    "a",
    "ab",
    "abc",
    "é",
    "héllo",
    "🙂🙂",
    "12",
    "a1",
    "A-1",
    [],
    [1],
    [1, 1],
    [1, 1.0],
    [1, True],
    [0, False],
    ["a", 1],
    [1, "a", None],
    [[1], [1.0]],
    [{"a": 1}, {"a": 1.0}],
    [1, 2, 3, 4],
    {},
    {"a": 1},
    {"a": "x"},
    {"a": 1, "b": 2},
    {"b": 2},
    {"text": "hi"},
    {"text": 5},
    {"text": "hi", "extra": 1},
    {"x-1": 1, "x-2": "a"},
    {"a": {"a": {"a": None}}},
    {"a": {"a": {"a": 1}}},
    {"kind": "cat", "lives": 9},
    {"kind": "dog", "lives": 9},
    {"kind": "dog", "bark": "loud"},
    {"a/b": 1, "~": 2},
]

SCHEMAS: list[Json] = [
    True,
    False,
    {},
    {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    *(
        {"type": name}
        for name in ("null", "boolean", "integer", "number", "string", "array", "object")
    ),
    {"type": ["string", "null"]},
    {"type": ["integer", "boolean"]},
    {"enum": [1, "a", None, [1], {"a": 1}]},
    {"enum": [True]},
    {"enum": [0]},
    {"const": 1},
    {"const": False},
    {"const": [1, {"a": 1}]},
    {"const": {"a": 1}},
    {"minLength": 2},
    {"maxLength": 2},
    {"minLength": 1, "maxLength": 1},
    {"pattern": "^[a-z]+$"},
    {"pattern": "\\d"},
    {"minimum": 1},
    {"maximum": 1.5},
    {"exclusiveMinimum": 1},
    {"exclusiveMaximum": 2},
    {"multipleOf": 2},
    {"multipleOf": 0.1},
    {"multipleOf": 1.5},
    {"type": "integer", "minimum": 0, "maximum": 10},
    {"items": {"type": "integer"}},
    {"items": False},
    {"prefixItems": [{"type": "integer"}, {"type": "string"}]},
    {"prefixItems": [{"type": "integer"}], "items": False},
    {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
    {"minItems": 2},
    {"maxItems": 1},
    {"uniqueItems": True},
    {"uniqueItems": False},
    {"contains": {"type": "string"}},
    {"contains": {"type": "integer"}, "minContains": 2},
    {"contains": {"type": "integer"}, "maxContains": 1},
    {"contains": {"type": "integer"}, "minContains": 0},
    {"properties": {"a": {"type": "integer"}}},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"properties": {"a": True}, "additionalProperties": {"type": "integer"}},
    {"patternProperties": {"^x-": {"type": "integer"}}},
    {"patternProperties": {"^x-": True}, "additionalProperties": False},
    {"properties": {"a/b": {"type": "string"}, "~": {"type": "string"}}},
    {"required": ["a", "b"]},
    {"minProperties": 1},
    {"maxProperties": 1},
    {"propertyNames": {"maxLength": 1}},
    {"propertyNames": {"pattern": "^[a-z]+$"}},
    {"dependentRequired": {"a": ["b"]}},
    {"allOf": [{"type": "integer"}, {"minimum": 2}]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"oneOf": [{"minimum": 2}, {"type": "string"}]},
    {"not": {"type": "string"}},
    {
        "if": {"properties": {"kind": {"const": "cat"}}},
        "then": {"required": ["lives"]},
        "else": {"required": ["bark"]},
    },
    {"if": {"type": "integer"}, "then": {"minimum": 2}},
    {"if": {"type": "integer"}, "else": {"type": "string"}},
    {"if": {"type": "integer"}},
    # References: into $defs, to the root (recursion), along a JSON pointer.
    {
        "$defs": {"positive": {"type": "integer", "minimum": 1}},
        "properties": {"a": {"$ref": "#/$defs/positive"}},
    },
    {"properties": {"a": {"$ref": "#"}}, "type": "object"},
    {"properties": {"a": {"anyOf": [{"type": "null"}, {"$ref": "#"}]}}, "type": "object"},
    {
        "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}},
        "$ref": "#/$defs/list",
    },
    {"properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}},
    {
        "$defs": {"a b": {"type": "integer"}, "c/d": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/a%20b"}, "b": {"$ref": "#/$defs/c~1d"}},
    },
    {"$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x", "minLength": 2},
    # Annotations and keywords of other vocabularies change nothing.
    {
        "type": "string",
        "format": "email",
        "title": "t",
        "description": "d",
        "default": 1,
        "examples": [],
        "deprecated": True,
        "readOnly": True,
        "x-vendor": {"type": "integer"},
        "contentMediaType": "application/json",
    },
    # Not compiled here, so checked by the jsonschema library: decided the same all the same.
    {"properties": {"a": True}, "unevaluatedProperties": False},
    {"dependentSchemas": {"a": {"required": ["b"]}}},
    {"$defs": {"s": {"$anchor": "str", "type": "string"}}, "$ref": "#str"},
]


def library_says_valid(schema: Json, instance: Json) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_every_schema_decides_every_edge_as_the_library_does(schema: Json) -> None:
    """Compiled, a schema accepts and refuses exactly the instances the library does."""
    check = SchemaCheck(schema)
    for instance in EDGES:
        assert (check.problem(instance) is None) == library_says_valid(schema, instance), instance


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from([1.0, 0.5, 2.5, 1e20])
    | st.text(alphabet="abx-1é", max_size=4),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "text", "x-1", "kind"]), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(instance=JSON_VALUES, schema=st.sampled_from(SCHEMAS))
def test_any_json_value_is_decided_as_the_library_does(schema: Json, instance: Json) -> None:
    """Beyond the chosen edges: generated values, nested and mixed."""
    assert (SchemaCheck(schema).problem(instance) is None) == library_says_valid(schema, instance)


ECHO = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("instance", "problem"),
    [
        ({}, 'arguments: "text" is a required property'),
        ({"text": 5}, 'text: 5 is not of type "string"'),
        (
            {"text": "x", "extra": 1},
            "arguments: Additional properties are not allowed ('extra' was unexpected)",
        ),
        ([1], 'arguments: [1] is not of type "object"'),
    ],
)
def test_a_problem_names_where_and_what(instance: Json, problem: str) -> None:
    """The message a caller gets: the path to the value at fault, then what is wrong."""
    assert SchemaCheck(ECHO).problem(instance) == problem


def test_the_path_runs_through_nested_members_and_items() -> None:
    schema = {"properties": {"items": {"items": {"properties": {"n": {"type": "integer"}}}}}}
    problem = SchemaCheck(schema).problem({"items": [{"n": 1}, {"n": "two"}]})
    assert problem == 'items/1/n: "two" is not of type "integer"'


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": "^(a+)+$"},
        {"propertyNames": {"pattern": "^(a|aa)+$"}},
        {"patternProperties": {"^(a+)+$": {"type": "integer"}}},
    ],
)
def test_a_pattern_that_backtracks_badly_takes_no_time(schema: Json) -> None:
    """A pattern Python's re would take minutes on: a caller's string cannot hold a worker."""
    check = SchemaCheck(schema)
    started = time.perf_counter()
    # 27 characters: about 4 s for re on the first pattern, each more doubling it.
    for instance in ("a" * 27 + "!", {"a" * 27 + "!": 1}):
        check.problem(instance)
    assert time.perf_counter() - started < 0.5


def test_a_pattern_only_python_takes_is_still_searched() -> None:
    """Lookaround and backreferences are beyond RE2: Python's re searches those."""
    check = SchemaCheck({"pattern": "^(?!admin)(\\w)\\1"})
    assert check.problem("aab") is None
    assert check.problem("ab") is not None
    assert check.problem("admin") is not None


def test_a_long_value_is_quoted_shortened() -> None:
    problem = SchemaCheck({"type": "integer"}).problem("x" * 10_000)
    assert problem is not None
    assert len(problem) < 150


def test_an_instance_nested_beyond_the_stack_is_refused_not_crashed() -> None:
    instance: Json = None
    for _ in range(5_000):
        instance = {"a": instance}
    assert SchemaCheck({"properties": {"a": {"$ref": "#"}}}).problem(instance) == (
        "arguments: nested too deeply"
    )


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "no-such-type"},
        {"type": []},
        {"properties": []},
        {"properties": {"a": 5}},
        {"required": "a"},
        {"minLength": -1},
        {"maxItems": "2"},
        {"minimum": "1"},
        {"multipleOf": 0},
        {"pattern": "("},
        {"anyOf": []},
        {"$ref": "#/$defs/missing"},
        {"properties": {"a": {"$ref": "https://example.com/a.json"}}},
        {"uniqueItems": "yes"},
    ],
)
def test_a_malformed_schema_is_refused(schema: Json) -> None:
    """Checked when a stored company is read back, without the jsonschema library."""
    with pytest.raises(InvalidSchema):
        SchemaCheck(schema)
