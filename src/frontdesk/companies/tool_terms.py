"""What a tool declares about itself beyond its schemas: MCP's ``ToolAnnotations``, all five
of them required, and the scope of its own a company may give it.

**Annotations.** MCP (2025-06-18 onwards, ``ToolAnnotations``) leaves every hint optional
and defaults them to the cautious answer; the assistant directories (OpenAI's and
Anthropic's submission rules) refuse a tool that leaves any unsaid. So a companies file
names ``title``, ``readOnlyHint``, ``destructiveHint``, ``idempotentHint`` and
``openWorldHint`` for every tool, and one left out is refused at apply, naming the tool
and the field. A company stored before the rule keeps loading (``FROM_STORE``): what it
left unsaid is served unsaid, as before.

**Scopes.** A tool with a ``scope`` (``orders:cancel``) answers only a grant holding it
(oauth.tool_scopes); one without stays open to any grant. A scope is an RFC 6749 3.3
scope-token, kept to letters, digits and ``_ . : -`` so that it reads well on the consent
page and needs no quoting in a ``WWW-Authenticate`` challenge (RFC 6750 3).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from frontdesk.scopes import SUPPORTED

# What the annotations must say, by the names a companies file uses (MCP's).
REQUIRED_ANNOTATIONS = (
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
)
TOOL_SCOPE_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
# The service's own scopes keep their meaning (what a tool sees of the customer,
# frontdesk.scopes); a tool may not claim one. ``openid`` and ``offline_access`` are what
# clients ask every server and are dropped unasked: a tool behind one would be unreachable.
RESERVED_SCOPES = frozenset({*SUPPORTED, "openid", "offline_access"})
# Every grant's scope is kept in a 200-character column (store.tables): the scopes a
# company offers, joined by spaces, must fit in it.
MAX_SCOPE_TEXT = 200


class ToolAnnotations(BaseModel):
    """MCP's ``ToolAnnotations``. Optional here so that a company stored before they were
    required keeps loading; ``complete_annotations`` requires them of every company applied."""

    title: str | None = None
    read_only_hint: bool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: bool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: bool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: bool | None = Field(default=None, alias="openWorldHint")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


ToolScope = Annotated[str, Field(pattern=TOOL_SCOPE_PATTERN)]


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


def check_tool_scope(scope: str | None, info: ValidationInfo) -> str | None:
    if scope is None:
        return scope
    tool = info.data.get("name", "?")
    # A guest calls a public tool with no grant at all: a scope could not narrow it.
    # (``access`` is validated before ``scope``, field order; a StrEnum equals its value.)
    if info.data.get("access") != "personal":
        raise ValueError(f"tool {tool!r} is public: only a personal tool can have a scope")
    if scope in RESERVED_SCOPES:
        raise ValueError(
            f"tool {tool!r} cannot take the scope {scope!r}: it is the service's own"
            f" (choose another, e.g. '{tool}:use')"
        )
    return scope


def tool_scopes(scopes: list[str | None]) -> tuple[str, ...]:
    """The distinct scopes tools name, in the order they first appear."""
    return tuple(dict.fromkeys(scope for scope in scopes if scope is not None))


def check_scope_text(scopes: list[str | None]) -> None:
    """The company's offered scopes must fit a grant's scope column (store.tables)."""
    text = " ".join((*SUPPORTED, *tool_scopes(scopes)))
    if len(text) > MAX_SCOPE_TEXT:
        raise ValueError(
            f"the tools' scopes with {' and '.join(SUPPORTED)} come to {len(text)} characters;"
            f" a grant holds at most {MAX_SCOPE_TEXT}: use fewer or shorter scopes"
        )
