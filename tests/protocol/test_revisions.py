"""The revisions over one method core: each version served by exactly one revision object,
every revision serving the core's methods, and the endpoint asking the revision rather than
testing which it has (so that a next revision is one module and its name in REVISIONS)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from frontdesk.protocol import core, endpoint
from frontdesk.protocol.errors import UnsupportedVersion
from frontdesk.protocol.revisions import REVISIONS, handshake, r2026_07_28, revision_of
from frontdesk.protocol.versions import ALL_VERSIONS, SUPPORTED_VERSIONS

VERSION_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")


def test_every_version_is_served_by_exactly_one_revision() -> None:
    for version in ALL_VERSIONS:
        serving = [revision for revision in REVISIONS if version in revision.versions]
        assert len(serving) == 1, version
        assert revision_of(version.encode()) is serving[0]
    # No header: a client of the handshake revisions (2024-11-05, and initialize).
    assert revision_of(None) is handshake.REVISION
    assert {version for revision in REVISIONS for version in revision.versions} == set(ALL_VERSIONS)


def test_a_version_no_revision_serves_is_refused_naming_those_served() -> None:
    with pytest.raises(UnsupportedVersion) as refused:
        revision_of(b"2099-01-01")
    assert refused.value.data == {"supported": list(ALL_VERSIONS), "requested": "2099-01-01"}


def test_every_revision_serves_the_core_methods() -> None:
    for revision in REVISIONS:
        assert set(core.METHODS) <= set(revision.methods), revision.versions
    # Each revision's own methods, and none of the other's.
    assert {"initialize", "ping", "logging/setLevel"} <= set(handshake.REVISION.methods)
    assert "server/discover" not in handshake.REVISION.methods
    assert "server/discover" in r2026_07_28.REVISION.methods
    assert not {"initialize", "ping", "logging/setLevel"} & set(r2026_07_28.REVISION.methods)
    assert handshake.REVISION.versions == SUPPORTED_VERSIONS


def test_the_endpoint_names_no_revision() -> None:
    """It imports no revision's module and spells no version: it asks the revision."""
    tree = ast.parse(Path(endpoint.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            assert not node.module.startswith("frontdesk.protocol.revisions."), node.module
            if node.module == "frontdesk.protocol.revisions":
                assert [alias.name for alias in node.names] == ["revision_of"]
            assert node.module != "frontdesk.protocol.versions", "the endpoint names versions"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not VERSION_TEXT.search(node.value), node.value
