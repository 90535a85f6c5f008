"""What a tool declares about itself beyond its schemas: MCP's ``ToolAnnotations``, all five
of them required.

**Annotations.** MCP (2025-06-18 onwards, ``ToolAnnotations``) leaves every hint optional
and defaults them to the cautious answer; the assistant directories (OpenAI's and
Anthropic's submission rules) refuse a tool that leaves any unsaid. So a companies file
names ``title``, ``readOnlyHint``, ``destructiveHint``, ``idempotentHint`` and
``openWorldHint`` for every tool, and one left out is refused at apply, naming the tool
and the field. A company stored before the rule keeps loading (``FROM_STORE``): what it
left unsaid is served unsaid, as before.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

# What the annotations must say, by the names a companies file uses (MCP's).
REQUIRED_ANNOTATIONS = (
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
)


class ToolAnnotations(BaseModel):
    """MCP's ``ToolAnnotations``. Optional here so that a company stored before they were
    required keeps loading; ``complete_annotations`` requires them of every company applied."""

    title: str | None = None
    read_only_hint: bool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: bool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: bool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: bool | None = Field(default=None, alias="openWorldHint")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# Each field's name in a companies file (MCP's), by the model's name for it.
_MCP_NAMES: dict[str, str] = {
    name: field.alias or name for name, field in ToolAnnotations.model_fields.items()
}


def _given(annotations: Any) -> set[str]:
    """The annotations a value names, under MCP's names (or the model's own)."""
    if isinstance(annotations, ToolAnnotations):
        return {mcp for name, mcp in _MCP_NAMES.items() if getattr(annotations, name) is not None}
    if isinstance(annotations, dict):
        return {
            _MCP_NAMES.get(str(key), str(key))
            for key, value in annotations.items()
            if value is not None
        }
    return set()


def missing_annotations(annotations: Any) -> list[str]:
    """The required annotations a tool's ``annotations`` value leaves out, in MCP's order."""
    given = _given(annotations)
    return [name for name in REQUIRED_ANNOTATIONS if name not in given]


def _missing(tool: str, name: str, annotations: Any) -> InitErrorDetails:
    error = PydanticCustomError(
        "missing_annotation",
        "tool {tool} must give annotations.{field} (MCP ToolAnnotations, required here as"
        " the assistant directories require)",
        {"tool": repr(tool), "field": name},
    )
    return InitErrorDetails(type=error, loc=(name,), input=annotations)


def complete_annotations(annotations: Any, info: ValidationInfo) -> Any:
    """The tool's annotations, when they say all five things; otherwise an error naming the
    tool, one for each field left out (read before the model, so that the error says which
    tool rather than only where). Checked when a company is applied, validated
    without a context; a definition read back (``context=FROM_STORE``) is not."""
    if info.context is not None:
        return annotations
    # The name is validated before the annotations (field order) and is absent if wrong.
    tool = info.data.get("name", "?")
    if annotations is None:
        raise ValueError(
            f"tool {tool!r} has no annotations: give {', '.join(REQUIRED_ANNOTATIONS)}"
            " (MCP ToolAnnotations, required here as the assistant directories require)"
        )
    missing = missing_annotations(annotations)
    if missing:
        # One line a field, each at its own path (tools[0].annotations.destructiveHint):
        # pydantic places them under the annotations' location.
        raise ValidationError.from_exception_data(
            "annotations", [_missing(tool, name, annotations) for name in missing]
        )
    return annotations
