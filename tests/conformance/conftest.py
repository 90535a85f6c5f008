"""Fixtures shared by the conformance suite's runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.suite import installed_node


@pytest.fixture(scope="module")
def conformance_node() -> Path:
    """Node 22 from tests/conformance, with the pinned suite, installed on first use."""
    return installed_node()
