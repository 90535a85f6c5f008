"""Tool schemas checked by frontdesk.tools.schemas: the messages a caller reads, the meaning the
service relies on, the drafts it serves, references that never leave the schema, patterns
matched in linear time, and what is refused when a companies file is applied. Every
keyword's decisions are tested against the official suite (tests/test_json_schema_suite.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from frontdesk.tools.schemas import InvalidSchema, SchemaCheck

Json = Any

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DRAFT_2019_09 = "https://json-schema.org/draft/2019-09/schema"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"

ECHO = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def valid(schema: Json, instance: Json) -> bool:
    return SchemaCheck(schema).problem(instance) is None


# --- what a caller reads


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
        ({"text": "hello"}, None),
    ],
)
def test_a_problem_names_where_and_what(instance: Json, problem: str | None) -> None:
    """The message a caller gets: the path to the value at fault, then what is wrong."""
    assert SchemaCheck(ECHO).problem(instance) == problem


def test_the_path_runs_through_nested_members_and_items() -> None:
    """The path names each member and item down to the value at fault."""
    schema = {"properties": {"items": {"items": {"properties": {"n": {"type": "integer"}}}}}}
    problem = SchemaCheck(schema).problem({"items": [{"n": 1}, {"n": "two"}]})
    assert problem == 'items/1/n: "two" is not of type "integer"'


def test_a_long_value_is_quoted_shortened() -> None:
    """A caller's value can be megabytes: the message keeps its start and its end."""
    problem = SchemaCheck({"type": "integer"}).problem("x" * 10_000)
    assert problem is not None
    assert len(problem) < 200
    assert problem.endswith('is not of type "integer"')


def test_arguments_are_at_most_as_deep_as_orjson_parses() -> None:
    """Every body is parsed by orjson, which refuses more than 1024 levels: the depth a
    check is ever given (jsonschema-rs recurses on the native stack)."""
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads("[" * 1025 + "]" * 1025)


def test_an_instance_as_deep_as_a_body_can_be_is_checked() -> None:
    """1024 levels, valid or invalid at the bottom: decided, with the whole path."""
    recursive = {"properties": {"a": {"$ref": "#"}}, "required": ["a"]}
    check = SchemaCheck(recursive)

    def nested(innermost: Json) -> Json:
        instance = innermost
        for _ in range(1023):
            instance = {"a": instance}
        return instance

    assert check.problem(nested(None)) is None
    assert check.problem(nested({})) == f'{"/".join(["a"] * 1023)}: "a" is a required property'


def test_an_invalid_value_too_deep_to_quote_is_still_refused() -> None:
    """jsonschema-rs cannot convert a value this deep back for its error: the call is
    refused all the same, with a message rather than an exception."""
    deep: Json = 1
    for _ in range(1000):
        deep = [deep]
    problem = SchemaCheck(ECHO).problem({"text": deep})
    assert problem is not None
    assert problem.startswith("arguments: cannot be checked")


def test_a_value_that_is_not_json_is_refused_with_a_message() -> None:
    """A python provider's structured output can hold any object."""
    check = SchemaCheck({"properties": {"when": {"type": "string"}}})
    problem = check.problem({"when": date(2026, 1, 1)})
    assert problem is not None
    assert "date" in problem


# --- meaning


@pytest.mark.parametrize(
    ("schema", "instance", "expected"),
    [
        # Numbers equal by value.
        ({"enum": [1]}, 1.0, True),
        ({"const": 1.0}, 1, True),
        ({"type": "integer"}, 2.0, True),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"const": {"a": [1]}}, {"a": [1.0]}, True),
        # true is not 1, false is not 0.
        ({"enum": [1]}, True, False),
        ({"const": 0}, False, False),
        ({"type": "integer"}, True, False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [0, False], True),
        # Lengths in code points, not UTF-16 units or bytes.
        ({"maxLength": 2}, "🙂🙂", True),
        ({"maxLength": 1}, "é", True),
        ({"minLength": 3}, "🙂🙂", False),
        # Integers beyond 64 bits.
        ({"maximum": 2**64}, 2**70, False),
        ({"type": "integer", "minimum": 2**64}, 2**70, True),
    ],
)
def test_values_mean_what_the_specification_says(
    schema: Json, instance: Json, expected: bool
) -> None:
    """Numbers by value, booleans apart from numbers, lengths in code points."""
    assert valid(schema, instance) is expected


@pytest.mark.parametrize("dialect", [DRAFT_2020_12, DRAFT_2019_09, DRAFT_07])
def test_format_is_an_annotation_in_every_draft(dialect: str) -> None:
    """Never asserted, draft-07 included (where jsonschema-rs would assert it)."""
    for name in ("email", "date-time", "uri", "ipv4", "regex"):
        assert valid({"$schema": dialect, "format": name}, "not that at all")


# --- drafts


def test_draft_07_keywords_are_checked_under_draft_07() -> None:
    """$schema draft-07: dependencies and the array form of items are checked."""
    dependencies = {"$schema": DRAFT_07, "dependencies": {"a": ["b"]}}
    assert not valid(dependencies, {"a": 1})
    assert valid(dependencies, {"a": 1, "b": 2})
    tuple_items = {"$schema": DRAFT_07, "items": [{"type": "integer"}], "additionalItems": False}
    assert valid(tuple_items, [1])
    assert not valid(tuple_items, ["1"])
    assert not valid(tuple_items, [1, 2])


def test_draft_07_ignores_the_siblings_of_ref() -> None:
    """In draft-07 a $ref stands for its whole schema object; in 2020-12 it is one keyword."""
    schema = {"$defs": {"any": True}, "$ref": "#/$defs/any", "type": "string"}
    assert valid({"$schema": DRAFT_07, **schema}, 5)
    assert not valid(schema, 5)


def test_draft_2019_09_keywords_are_checked_under_2019_09() -> None:
    """$schema 2019-09: dependentRequired, the array form of items, additionalItems."""
    schema = {
        "$schema": DRAFT_2019_09,
        "dependentRequired": {"a": ["b"]},
        "items": [{"type": "integer"}],
        "additionalItems": False,
    }
    assert not valid(schema, {"a": 1})
    assert not valid(schema, [1, 2])
    assert valid(schema, [1])


def test_without_schema_a_schema_is_2020_12() -> None:
    """prefixItems is a 2020-12 keyword; an array items is not 2020-12 at all."""
    assert not valid({"prefixItems": [{"type": "integer"}], "items": False}, [1, 2])
    with pytest.raises(InvalidSchema):
        SchemaCheck({"items": [{"type": "integer"}]})


@pytest.mark.parametrize(
    "dialect",
    [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "https://example.com/my-metaschema",
    ],
)
def test_another_draft_is_refused_at_its_schema_keyword(dialect: str) -> None:
    """Draft-04, draft-06 and unknown metaschemas are refused, naming $schema."""
    with pytest.raises(InvalidSchema, match=r"^#/\$schema: "):
        SchemaCheck({"$schema": dialect, "type": "object"})


# --- references


def test_references_resolve_within_the_schema() -> None:
    """JSON pointers (escaped, percent-encoded), anchors, a nested $id, recursion."""
    schema = {
        "$id": "https://tools.example/order",
        "$defs": {
            "a b": {"type": "integer"},
            "c/d": {"type": "string"},
            "named": {"$anchor": "positive", "type": "integer", "minimum": 1},
            "line": {"$id": "line", "properties": {"sku": {"type": "string"}}},
        },
        "properties": {
            "count": {"$ref": "#/$defs/a%20b"},
            "note": {"$ref": "#/$defs/c~1d"},
            "quantity": {"$ref": "#positive"},
            "line": {"$ref": "line"},
            "child": {"$ref": "#"},
        },
    }
    check = SchemaCheck(schema)
    assert check.problem({"count": 1, "note": "x", "quantity": 2, "line": {"sku": "a"}}) is None
    assert check.problem({"quantity": 0}) is not None
    assert check.problem({"line": {"sku": 5}}) is not None
    assert check.problem({"child": {"child": {"count": "one"}}}) is not None


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"properties": {"a": {"$ref": "#missing-anchor"}}},
        {"anyOf": [{"type": "string"}, {"$ref": "#/nowhere"}]},
        # In a definition nothing refers to yet: refused before an edit refers to it.
        {"$defs": {"unused": {"$ref": "#/$defs/typo"}}},
        {"$schema": DRAFT_07, "definitions": {"unused": {"$ref": "#/definitions/typo"}}},
    ],
)
def test_a_reference_that_resolves_to_nothing_is_refused(schema: Json) -> None:
    """Refused when compiled (at apply), naming $ref, wherever the reference sits."""
    with pytest.raises(InvalidSchema, match=r"^\$ref: "):
        SchemaCheck(schema)


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A real server on loopback that would serve any schema asked of it, and notes what is."""
    requested: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_reference_to_a_url_is_refused_and_never_fetched(
    schema_server: tuple[str, list[str]],
) -> None:
    """Refused, and the server that would have answered is never asked."""
    url, requested = schema_server
    for reference in (f"{url}/colour.json", f"{url}/colour.json#/$defs/x"):
        with pytest.raises(InvalidSchema, match="nothing is fetched"):
            SchemaCheck({"properties": {"colour": {"$ref": reference}}})
    with pytest.raises(InvalidSchema):
        SchemaCheck({"$id": f"{url}/base.json", "properties": {"a": {"$ref": "relative.json"}}})
    assert requested == []


def test_a_reference_to_a_file_is_refused_and_never_read(tmp_path: Path) -> None:
    """A file: URI to a real schema file is refused like any URL."""
    target = tmp_path / "colour.json"
    target.write_text('{"type": "string"}')
    with pytest.raises(InvalidSchema, match="nothing is fetched"):
        SchemaCheck({"properties": {"colour": {"$ref": target.as_uri()}}})


# --- patterns


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": "^(a+)+$"},
        {"propertyNames": {"pattern": "^(a|aa)+$"}},
        {"patternProperties": {"^(a+)+$": {"type": "integer"}}},
    ],
)
def test_a_pattern_that_backtracks_badly_takes_no_time(schema: Json) -> None:
    """A pattern a backtracking engine would take forever on (27 characters: seconds for
    Python's re, each more doubling it): matched in time linear in the string."""
    check = SchemaCheck(schema)
    started = time.perf_counter()
    for instance in ("a" * 100_000 + "!", {"a" * 100_000 + "!": 1}):
        check.problem(instance)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"pattern": "^(?!admin)"}, "#/pattern"),
        ({"pattern": "(?<=a)b"}, "#/pattern"),
        ({"pattern": "(\\w)\\1"}, "#/pattern"),
        ({"patternProperties": {"^(?=x)": True}}, "#/patternProperties/^(?=x)"),
        ({"properties": {"a/b": {"pattern": "(?=x)"}}}, "#/properties/a~1b/pattern"),
        ({"$defs": {"unused": {"pattern": "(?=x)"}}}, "#/$defs/unused/pattern"),
    ],
)
def test_lookaround_and_backreferences_are_refused_saying_so(schema: Json, where: str) -> None:
    """Refused where they sit, with the reason: the linear-time engine has neither."""
    with pytest.raises(InvalidSchema) as refused:
        SchemaCheck(schema)
    message = str(refused.value)
    assert message.startswith(f"{where}: ")
    assert "lookaround or a backreference" in message


def test_a_pattern_that_is_no_regular_expression_is_refused_saying_so() -> None:
    """A pattern that does not parse is refused as such, not as lookaround."""
    with pytest.raises(InvalidSchema, match=r"^#/pattern: '\(' is not an ECMA-262 regular"):
        SchemaCheck({"pattern": "("})


@pytest.mark.parametrize(
    ("pattern", "string", "matches"),
    [
        ("^\\d+$", "123", True),
        ("^\\d+$", "١٢٣", False),  # ECMA-262: \d is [0-9]
        ("^\\w+$", "a_1", True),
        ("^\\w+$", "é", False),  # ECMA-262: \w is [A-Za-z0-9_]
        ("^\\s$", "\u00a0", True),  # ECMA-262: \s takes Unicode spaces
        ("^a$", "a\n", False),  # $ only at the very end
        ("^.$", "🙂", True),  # one code point
        ("^\\p{L}+$", "héllo", True),
        ("^[a-z]+$", "abc", True),
        ("\\d", "a1", True),  # unanchored: a search, not a full match
    ],
)
def test_patterns_read_as_ecma_262(pattern: str, string: str, matches: bool) -> None:
    """One dialect, ECMA-262 as the specification names it, for every pattern."""
    assert valid({"pattern": pattern}, string) is matches


# --- refused when applied


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "no-such-type"}, "#/type"),
        ({"type": []}, "#/type"),
        ({"properties": []}, "#/properties"),
        ({"properties": {"a": 5}}, "#/properties/a"),
        ({"required": "a"}, "#/required"),
        ({"minLength": -1}, "#/minLength"),
        ({"maxItems": "2"}, "#/maxItems"),
        ({"minimum": "1"}, "#/minimum"),
        ({"multipleOf": 0}, "#/multipleOf"),
        ({"anyOf": []}, "#/anyOf"),
        ({"uniqueItems": "yes"}, "#/uniqueItems"),
        ({"default": date(2026, 1, 1)}, "#"),
    ],
)
def test_a_malformed_schema_is_refused_saying_where(schema: Json, where: str) -> None:
    """A schema the metaschema refuses is refused with the JSON pointer at fault."""
    with pytest.raises(InvalidSchema) as refused:
        SchemaCheck(schema)
    assert str(refused.value).startswith(f"{where}: ")
