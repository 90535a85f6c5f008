"""One company's definition as a JSON document, changed whole or in part (the admin API:
frontdesk.admin_api), with the checks and the write `companies apply` uses.

A document is the shape of one entry of the companies file. It is validated by the same
function as a file (companies.files.parse_companies, with the production checks of
``operations``), and written by the same repository method, in one transaction: a change
that fails a check writes nothing. A part (a tool, sign-in, branding) or a merge patch is
applied to the stored definition with its secrets opened, and the result is checked as a
whole, so a change to one part can never leave the company invalid.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from enum import Enum
from typing import Any

from frontdesk.administration.company_state import UnknownCompany
from frontdesk.config import Settings
from frontdesk.errors import ConfigurationError
from frontdesk.sealing.company_secrets import redact_secrets
from frontdesk.store.companies import ApplyOutcome, CompanyRepository

# How a problem's field is named in a file (companies[0].tools[2].name); in one company's
# document it is named from the document (tools[2].name).
_FILE_PREFIX = "companies[0]"


class Unchecked(Enum):
    """A write made from no reading of the company: whatever it is now, it is replaced."""

    UNCHECKED = "unchecked"


UNCHECKED = Unchecked.UNCHECKED


class InvalidCompany(ConfigurationError):
    """The document is not a valid company: each problem with the field at fault."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Written:
    outcome: ApplyOutcome
    document: dict[str, Any]  # as stored, its secrets redacted
    revision: int


async def read_redacted(repository: CompanyRepository, tenant_key: str) -> dict[str, Any]:
    """The company's definition, every secret redacted (as `companies show` prints it)."""
    stored = await repository.get(tenant_key)
    if stored is None:
        raise UnknownCompany(tenant_key)
    return redact_secrets(stored.definition)


@dataclass(frozen=True, slots=True)
class Reading:
    """A company's definition with its secrets in clear, only ever changed and written back
    (never answered), and the revision it was read at."""

    document: dict[str, Any]
    revision: int


async def read_opened(repository: CompanyRepository, tenant_key: str) -> Reading:
    stored = await repository.get(tenant_key)
    if stored is None:
        raise UnknownCompany(tenant_key)
    return Reading(repository.opened(stored), stored.revision)


def validated(settings: Settings, document: Any) -> dict[str, Any]:
    """The document as `companies apply` would store it (defaults filled in), or
    InvalidCompany naming each field at fault."""
    from frontdesk.companies.files import parse_companies
    from frontdesk.companies.production import production_problems

    try:
        [company] = parse_companies({"companies": [document]}).companies
    except ConfigurationError as error:
        raise InvalidCompany([_problem(line) for line in str(error).splitlines()]) from None
    if settings.is_production:
        problems = production_problems(company)
        if problems:
            raise InvalidCompany([("(company)", f"not for production: {p}") for p in problems])
    return company.model_dump(mode="json", by_alias=True)


def _problem(line: str) -> tuple[str, str]:
    field, _, message = line.partition(": ")
    if field == _FILE_PREFIX:
        field = "(company)"
    elif field.startswith(_FILE_PREFIX):
        field = field.removeprefix(_FILE_PREFIX).removeprefix(".")
    return field, message


async def write(
    settings: Settings,
    repository: CompanyRepository,
    tenant_key: str,
    document: Any,
    read_at: int | Unchecked | None = UNCHECKED,
) -> Written:
    """Create or replace the company ``tenant_key`` with ``document`` (whose own
    ``tenant_key``, when given, must be the same). With ``read_at``, the revision the
    document was made from (None: the company did not exist), CompanyChanged when the
    company is no longer at it: a change made meanwhile is never overwritten unseen."""
    if isinstance(document, dict):
        named = document.setdefault("tenant_key", tenant_key)
        if named != tenant_key:
            raise InvalidCompany([("tenant_key", f"must be {tenant_key!r}, as in the path")])
    checked = validated(settings, document)
    expected = None if isinstance(read_at, Unchecked) else {tenant_key: read_at}
    outcome = (await repository.apply([checked], read_at=expected))[tenant_key]
    stored = await repository.get(tenant_key)
    # Another change may have landed since this one committed: the revision then is newer,
    # and an If-Match made from it fails, as it should.
    revision = 0 if stored is None else stored.revision
    return Written(outcome, redact_secrets(checked), revision)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 section 2: an object's members merged in (null removes one), anything else
    replacing the target whole."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = merge_patch(merged.get(name), value)
    return merged


# The parts of a definition whose items may name a provider.
_PROVIDED = ("tools", "resources", "resource_templates", "prompts")


def python_targets(document: Any) -> set[str]:
    """The functions a definition's ``python`` providers name: code of the deployment run
    in-process, which only the operator chooses (the admin API refuses a company key that
    names a new one)."""
    targets: set[str] = set()
    if not isinstance(document, dict):
        return targets
    for part in _PROVIDED:
        items = document.get(part)
        for item in items if isinstance(items, list) else ():
            provider = item.get("provider") if isinstance(item, dict) else None
            if isinstance(provider, dict) and provider.get("type") == "python":
                targets.add(str(provider.get("target")))
    return targets
