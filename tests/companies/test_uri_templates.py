"""Resource templates (RFC 6570 levels 1 and 2) matched in linear time (uri_templates.py)."""

from __future__ import annotations

import time

import pytest

from frontdesk.companies.uri_templates import MAX_MATCHED_URI_LENGTH, UriTemplate

MATCHES = [
    pytest.param("acme://anvils/{model}", "acme://anvils/A-100", {"model": "A-100"}, id="simple"),
    pytest.param("acme://anvils/{model}", "acme://anvils/A/100", None, id="simple-stops-at-slash"),
    pytest.param("acme://anvils/{model}", "acme://anvils/A?x", None, id="simple-stops-at-query"),
    pytest.param("acme://anvils/{model}", "acme://anvils/", None, id="empty-value"),
    pytest.param("acme://anvils/{model}", "acme://anvil/A", None, id="wrong-literal"),
    pytest.param("acme://anvils/{model}", "acme://anvils/A-100/", None, id="trailing-text"),
    pytest.param("acme://files/{+path}", "acme://files/a/b?c", {"path": "a/b?c"}, id="reserved"),
    pytest.param(
        "acme://docs/{+section}/{+page}",
        "acme://docs/guide/setup/install",
        {"section": "guide/setup", "page": "install"},
        id="greedy-like-a-regex",
    ),
    pytest.param(
        "acme://{a}/{b}.md", "acme://x/y.z.md", {"a": "x", "b": "y.z"}, id="simple-with-suffix"
    ),
    pytest.param(
        "acme://{a}{b}", "acme://xyz", {"a": "xy", "b": "z"}, id="adjacent-variables-first-greedy"
    ),
    pytest.param("acme://page{#part}", "acme://page#intro/2", {"part": "intro/2"}, id="fragment"),
    pytest.param("acme://page{#part}", "acme://pageintro", None, id="fragment-needs-its-hash"),
    pytest.param("acme://x{?q}", "acme://x{?q}", {}, id="level-3-stays-literal"),
    pytest.param("acme://fixed", "acme://fixed", {}, id="no-variables"),
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCHES)
def test_a_uri_matches_its_template_with_the_values_a_greedy_regex_gives(
    template: str, uri: str, expected: dict[str, str] | None
) -> None:
    """{var} takes no / ? #, {+var} and {#var} take anything; each value is non-empty and,
    where the URI could be split several ways, the earlier variable takes the longer value."""
    assert UriTemplate.parse(template).match(uri) == expected


ADVERSARIAL = [
    # Each fails to match only after a backtracking regex has tried every split of the slashes.
    pytest.param("acme://docs/{+section}/{+page}.md", "acme://docs/" + "/" * 8000, id="two"),
    pytest.param("acme://{+a}/{+b}/{+c}x", "acme://" + "/" * 8100, id="three-reserved"),
    pytest.param("acme://{+a}{+b}{+c}{+d}!", "acme://" + "a" * 8100, id="four-adjacent"),
]


@pytest.mark.parametrize(("template", "uri"), ADVERSARIAL)
def test_an_adversarial_uri_is_answered_in_linear_time(template: str, uri: str) -> None:
    """A URI at the length cap built to make a backtracking matcher retry every split is
    refused in milliseconds (Python's re took 0.3 s, about 20 minutes and far longer)."""
    assert len(uri) <= MAX_MATCHED_URI_LENGTH
    matcher = UriTemplate.parse(template)
    started = time.perf_counter()
    assert matcher.match(uri) is None
    assert time.perf_counter() - started < 0.05


def test_a_uri_over_the_cap_matches_nothing() -> None:
    """Past MAX_MATCHED_URI_LENGTH characters a URI is not matched at all."""
    matcher = UriTemplate.parse("acme://files/{+path}")
    fitting = "acme://files/" + "a" * (MAX_MATCHED_URI_LENGTH - len("acme://files/"))
    assert matcher.match(fitting) == {"path": fitting.removeprefix("acme://files/")}
    assert matcher.match(fitting + "a") is None
