"""Compiled JSON Schema (2020-12) checks for tool arguments and tool outputs.

The schemas themselves are checked when a companies file is applied (the ``jsonschema``
library, for its exact error messages) and, read back from the store, by compiling them
with ``jsonschema-rs`` (see companies.definition); the per-call checks here run on
``jsonschema-rs``, compiled once per tool, because they sit on the hot path: a valid call
costs well under a microsecond instead of tens.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs


class SchemaCheck:
    __slots__ = ("_validator",)

    def __init__(self, schema: dict[str, Any]) -> None:
        self._validator = jsonschema_rs.Draft202012Validator(schema)

    def problem(self, instance: object) -> str | None:
        """None when ``instance`` is valid, else where and why it is not, in plain words."""
        try:
            if self._validator.is_valid(instance):
                return None
            error = next(iter(self._validator.iter_errors(instance)))
        except ValueError:
            # jsonschema-rs stops at its recursion limit rather than crash the process.
            return "arguments: nested too deeply"
        where = "/".join(str(part) for part in error.instance_path) or "arguments"
        return f"{where}: {error.message}"
