"""A tool's version: a stable hash of what a client sees of it and what it may do, and
whether a change from one version to another widens what it does.

OWASP's MCP Top 10 (2026) names "rug pulls": a tool whose description, schema or effect
changes after a customer allowed the client. A consent records the version of each
personal tool it covered (store.tool_versions); a tool whose version has since changed in
a way that widens what it does asks the grant again (oauth.tool_consent), and a change that
only narrows it (``readOnlyHint`` added, ``destructiveHint`` taken back) does not.

The version is the SHA-256 of the canonical JSON (keys sorted, no spaces, UTF-8) of the
tool's name, title, description, input and output schemas, annotations, access and scope.
Fields left unsaid are left out, so a field added to the definitions later with no value
changes no version. The ``definition hash`` is the same over the whole definition (its
provider and time limit too): a change the customer cannot see changes it, not the version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from frontdesk.companies.definition import ToolDefinition
from frontdesk.store.tool_versions import ToolVersion

# What a client sees of a tool and what it may do (the definition's own field names).
VERSIONED_FIELDS = frozenset(
    {
        "name",
        "title",
        "description",
        "input_schema",
        "output_schema",
        "annotations",
        "access",
        "scope",
    }
)

# In a provider's secret's place, in what the definition hash covers.
WITHHELD = "<withheld>"

# Annotation changes that only take something back (MCP ToolAnnotations): the tool now
# says it only reads, destroys nothing, or reaches no open world. Any other change widens.
_NARROWING_HINTS = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def canonical_json(document: Any) -> bytes:
    """The one byte form of a JSON document: keys sorted, no whitespace, UTF-8."""
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


def _digest(document: Any) -> str:
    return hashlib.sha256(canonical_json(document)).hexdigest()


def versioned_document(tool: ToolDefinition) -> dict[str, Any]:
    """The fields a version covers (annotations under MCP's names), each left out when
    unsaid."""
    dumped = tool.model_dump(mode="json", by_alias=True, include=set(VERSIONED_FIELDS))
    document = {key: value for key, value in dumped.items() if value is not None}
    annotations = document.get("annotations")
    if annotations is not None:
        said = {key: value for key, value in annotations.items() if value is not None}
        if said:
            document["annotations"] = said
        else:
            del document["annotations"]
    return document


def tool_version(tool: ToolDefinition) -> str:
    """The tool's version: SHA-256 (hex) of its versioned document's canonical JSON."""
    return _digest(versioned_document(tool))


def definition_hash(tool: ToolDefinition) -> str:
    """SHA-256 (hex) of the whole definition's canonical JSON, but for the provider's
    secret (sealing.company_secrets): an unsalted hash of a short secret would give it
    away to whoever reads the history, and rotating it changes nothing a customer sees."""
    document = tool.model_dump(mode="json", by_alias=True)
    provider = document.get("provider")
    if isinstance(provider, dict) and provider.get("secret") is not None:
        provider["secret"] = WITHHELD
    return _digest(document)


def seen_versions(tools: Iterable[ToolDefinition]) -> list[ToolVersion]:
    """What the version history records of these tools as they are now."""
    return [
        ToolVersion(tool.name, tool_version(tool), definition_hash(tool), versioned_document(tool))
        for tool in tools
    ]


def snapshot_id(versions: Mapping[str, str]) -> str:
    """The name of a set of versions a consent covered (tool name -> version)."""
    return _digest(dict(versions))


def _annotations_widen(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    for name in before.keys() | after.keys():
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if name not in _NARROWING_HINTS or new is not _NARROWING_HINTS[name]:
            return True
    return False


def widens(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether ``after`` (a versioned document) may do more than ``before`` did: any change
    but those of ``_NARROWING_HINTS`` and a scope newly required counts, a changed
    description or schema included, since the model acts on what they say."""
    for field in before.keys() | after.keys():
        if before.get(field) == after.get(field):
            continue
        if field == "scope" and before.get(field) is None:
            # Now behind a scope of its own: fewer grants reach it (oauth.tool_scopes).
            continue
        if field != "annotations":
            return True
        if _annotations_widen(before.get(field) or {}, after.get(field) or {}):
            return True
    return False
