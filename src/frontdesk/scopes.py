"""The scopes customers grant: ``profile`` and ``email``, and those a company's tools name
(companies.tool_scopes), which each company offers beside these.

A scope the service does not offer is dropped, not refused: RFC 6749 3.3 lets the server
ignore what it does not offer and say in the token response what it granted. Real clients
ask for what they ask every server (``openid``, ``offline_access``; Claude sends
``claudeai``, others ``read write``), and refusing them would turn those clients away.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SUPPORTED = ("profile", "email")
SUPPORTED_SET = frozenset(SUPPORTED)
# What a grant of no particular scope holds (none requested at authorize means all).
ALL = " ".join(SUPPORTED)


def offered(requested: str | None, offers: Iterable[str] = SUPPORTED_SET) -> frozenset[str]:
    """The scopes asked for that are offered (the service's, or a company's ``offers``);
    the rest are dropped."""
    if not requested:
        return frozenset()
    return frozenset(offers).intersection(requested.split())


def resolve(requested: str | None, offers: Sequence[str] = SUPPORTED) -> str:
    """The scope to grant at authorize, in the stable order of ``offers``: what was asked
    for and is offered, or every offered scope when nothing offered was asked for (none
    requested means all)."""
    asked = offered(requested, offers)
    return " ".join(item for item in offers if item in asked) or " ".join(offers)
