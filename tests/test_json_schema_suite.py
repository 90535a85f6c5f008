"""The official JSON-Schema-Test-Suite, run through frontdesk.tools.schemas: drafts 2020-12 and
draft-07, every required keyword file (``tests/<draft>/*.json``, not ``optional/``).

The suite is read from the ``jsonschema`` sdist on PyPI, which ships it under ``json/``:
pinned by version and sha256, downloaded once into pytest's cache directory, never copied
into this repository. CI reaches PyPI, so a failed download fails these tests.

What is not run, and why: ``refRemote.json`` and each case whose schema needs a document
from the suite's remote server (``http://localhost:1234/``), since tool schemas never
fetch anything (frontdesk.tools.schemas); such a case is recognised by being refused for that
reason, so one refused for any other fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontdesk.tools.schemas import InvalidSchema, SchemaCheck

SDIST_VERSION = "4.26.0"
SDIST_URL = (
    "https://files.pythonhosted.org/packages/b3/fc/"
    "e067678238fa451312d4c62bf6e6cf5ec56375422aee02f9cb5f909b3047/jsonschema-4.26.0.tar.gz"
)
SDIST_SHA256 = "0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326"
SUITE = f"jsonschema-{SDIST_VERSION}/json/tests"
REMOTE = "http://localhost:1234/"
# The $schema a draft's directory implies for a schema that names none (the suite's rule).
DIALECTS = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
}
NEEDS_A_REMOTE = {"refRemote"}

# The keyword files of the pinned suite, listed so that the tests are collected without
# the download; test_every_keyword_file_of_the_suite_is_run keeps the list whole.
COMMON = [
    "additionalProperties",
    "allOf",
    "anyOf",
    "boolean_schema",
    "const",
    "contains",
    "default",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "if-then-else",
    "infinite-loop-detection",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "properties",
    "propertyNames",
    "ref",
    "refRemote",
    "required",
    "type",
    "uniqueItems",
]
KEYWORD_FILES = {
    "draft2020-12": sorted(
        [
            *COMMON,
            *["anchor", "content", "defs", "dependentRequired", "dependentSchemas", "dynamicRef"],
            *["maxContains", "minContains", "prefixItems", "unevaluatedItems"],
            *["unevaluatedProperties", "vocabulary"],
        ]
    ),
    "draft7": sorted([*COMMON, "additionalItems", "definitions", "dependencies"]),
}

Json = Any


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> dict[str, bytes]:
    """The required keyword files of the pinned sdist, by path under ``tests/``: the
    archive downloaded the first time, verified every time."""
    cache: Path = request.config.cache.mkdir("json-schema-test-suite")
    archive = cache / f"jsonschema-{SDIST_VERSION}.tar.gz"
    if not archive.exists() or _sha256(archive) != SDIST_SHA256:
        _download(archive)
    files: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as opened:
        for member in opened.getmembers():
            path = member.name.removeprefix(f"{SUITE}/")
            draft, _, name = path.partition("/")
            if draft in DIALECTS and "/" not in name and name.endswith(".json"):
                extracted = opened.extractfile(member)
                assert extracted is not None
                files[path] = extracted.read()
    return files


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download(archive: Path) -> None:
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    response = httpx.get(SDIST_URL, timeout=60, follow_redirects=True)
    response.raise_for_status()
    partial.write_bytes(response.content)
    found = _sha256(partial)
    if found != SDIST_SHA256:
        partial.unlink()
        pytest.fail(f"{SDIST_URL} has sha256 {found}, not the pinned {SDIST_SHA256}")
    partial.replace(archive)  # atomic: a concurrent run reads a whole file or none


def _keyword_file(suite: dict[str, bytes], draft: str, keyword: str) -> list[Json]:
    cases: list[Json] = json.loads(suite[f"{draft}/{keyword}.json"])
    return cases


def _in_dialect(schema: Json, draft: str) -> Json:
    if isinstance(schema, dict) and "$schema" not in schema:
        return {"$schema": DIALECTS[draft], **schema}
    return schema


def test_every_keyword_file_of_the_suite_is_run(suite: dict[str, bytes]) -> None:
    """The listed files are exactly the pinned suite's required ones, for each draft."""
    for draft, listed in KEYWORD_FILES.items():
        shipped = sorted(
            path.removeprefix(f"{draft}/").removesuffix(".json")
            for path in suite
            if path.startswith(f"{draft}/")
        )
        assert shipped == listed, draft


@pytest.mark.parametrize(
    ("draft", "keyword"),
    [(draft, keyword) for draft, keywords in KEYWORD_FILES.items() for keyword in keywords],
    ids=[f"{draft}/{keyword}" for draft, keywords in KEYWORD_FILES.items() for keyword in keywords],
)
def test_keyword_file(
    suite: dict[str, bytes], draft: str, keyword: str, record_property: Any
) -> None:
    """Every test of the file decided as the suite says, but those that need a remote."""
    if keyword in NEEDS_A_REMOTE:
        pytest.skip(f"every case refers to {REMOTE}: tool schemas never fetch")
    failures: list[str] = []
    remote_cases = 0
    for case in _keyword_file(suite, draft, keyword):
        try:
            check = SchemaCheck(_in_dialect(case["schema"], draft))
        except InvalidSchema as refusal:
            if REMOTE in str(refusal):
                remote_cases += 1
            else:
                failures.append(f"{case['description']}: schema refused: {refusal}")
            continue
        for test in case["tests"]:
            problem = check.problem(test["data"])
            if (problem is None) != test["valid"]:
                expected = "valid" if test["valid"] else "invalid"
                failures.append(
                    f"{case['description']} / {test['description']}: should be {expected}"
                    f" ({problem})"
                )
    record_property("cases_needing_a_remote", remote_cases)
    assert not failures, "\n".join(failures)
