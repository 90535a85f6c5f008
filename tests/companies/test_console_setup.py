"""A company's ``console`` section: who its staff are and through which login they sign
in, validated as ``companies apply`` validates everything else."""

from __future__ import annotations

from typing import Any

import pytest

from frontdesk.companies.console_setup import ConsoleStaff
from frontdesk.companies.files import parse_companies
from frontdesk.errors import ConfigurationError
from tests.support.tool_annotations import read_only


def company(console: dict[str, Any]) -> dict[str, Any]:
    return {"companies": [{"tenant_key": "acme", "name": "Acme", "console": console}]}


def test_a_console_with_a_dev_login_and_staff_applies() -> None:
    parsed = parse_companies(
        company({"login": {"type": "dev"}, "staff": {"emails": ["Wile@Acme.example"]}})
    )
    console = parsed.companies[0].console
    assert console is not None
    assert console.staff.emails == ["wile@acme.example"]


@pytest.mark.parametrize(
    ("console", "problem"),
    [
        ({"login": {"type": "dev"}, "staff": {}}, "console.staff: name the staff"),
        (
            {"login": {"type": "dev"}, "staff": {"domains": ["not a domain"]}},
            "is not a domain name",
        ),
        (
            {"login": {"type": "dev"}, "staff": {"emails": ["nobody"]}},
            "is not an email address",
        ),
        (
            {
                "login": {
                    "type": "oidc",
                    "issuer": "https://id.acme.example",
                    "client_id": "console",
                    "client_secret": "kept in the file",
                },
                "staff": {"domains": ["acme.example"]},
            },
            "console.login.oidc.client_secret: Extra inputs are not permitted",
        ),
        (
            {
                "login": {
                    "type": "oidc",
                    "issuer": "https://id.acme.example",
                    "client_id": "console",
                    "client_secret_env": "ACME_CONSOLE_SECRET",
                    "scopes": ["openid"],
                },
                "staff": {"domains": ["acme.example"]},
            },
            'scopes must include "openid" and "email"',
        ),
    ],
)
def test_a_console_that_cannot_work_is_refused(console: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        parse_companies(company(console))
    assert problem in str(refused.value)


def test_staff_are_the_listed_addresses_and_exactly_the_listed_domains() -> None:
    staff = ConsoleStaff(emails=["boss@partner.example"], domains=["acme.example"])
    assert staff.admits("Boss@Partner.example")
    assert staff.admits("anyone@acme.example")
    assert not staff.admits("anyone@sub.acme.example")
    assert not staff.admits("anyone@acme.example.evil.example")
    assert not staff.admits("acme.example")
    assert not staff.admits("other@partner.example")


def test_a_disabled_tool_is_kept_but_not_served() -> None:
    from frontdesk.companies.catalog import ServedCompany

    parsed = parse_companies(
        {
            "companies": [
                {
                    "tenant_key": "acme",
                    "name": "Acme",
                    "tools": [
                        {
                            "name": name,
                            "description": "Repeats text.",
                            "enabled": name == "on",
                            "annotations": read_only(name),
                            "provider": {"type": "python", "target": "frontdesk.demo.tools:echo"},
                        }
                        for name in ("on", "off")
                    ],
                }
            ]
        }
    )
    served = ServedCompany(parsed.companies[0], "600/minute")
    assert list(served.tools) == ["on"]
    assert b'"off"' not in served.tools_json


@pytest.mark.parametrize(
    ("login", "problem"),
    [
        ({"type": "dev"}, "the console's dev login signs in anyone"),
        (
            {
                "type": "oidc",
                "issuer": "http://id.acme.example",
                "client_id": "console",
                "client_secret_env": "ACME_CONSOLE_SECRET",
            },
            "the console's identity provider must be https",
        ),
    ],
)
def test_production_refuses_a_console_login_it_would_refuse_to_customers(
    login: dict[str, Any], problem: str
) -> None:
    from frontdesk.companies.production import production_problems

    parsed = parse_companies(company({"login": login, "staff": {"domains": ["acme.example"]}}))
    [found] = production_problems(parsed.companies[0])
    assert found.startswith(f"acme: {problem}")
