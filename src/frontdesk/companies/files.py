"""The companies file operators manage companies with: read, validate, apply.

Applying is idempotent: the same file twice changes nothing the second time. Every
problem is reported with the path of the field at fault, e.g.
``companies[0].tools[2].provider.target``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from frontdesk.companies.definition import CompaniesFile, PythonProvider
from frontdesk.errors import ConfigurationError
from frontdesk.store.companies import ApplyOutcome, CompanyRepository
from frontdesk.tools.provider import ToolUnavailableError
from frontdesk.tools.python import resolve_coroutine_function


def _location(parts: tuple[int | str, ...]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def describe(error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        message = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{_location(problem['loc'])}: {message}")
    return "\n".join(lines)


def parse_companies(document: Any) -> CompaniesFile:
    """Validate a parsed document, including that every python provider can be imported."""
    try:
        parsed = CompaniesFile.model_validate(document)
    except ValidationError as error:
        raise ConfigurationError(describe(error)) from None
    problems = []
    for where, provider in _python_providers(parsed):
        try:
            resolve_coroutine_function(provider.target)
        except ToolUnavailableError as error:
            problems.append(f"{where}.provider.target: {error}")
    if problems:
        raise ConfigurationError("\n".join(problems))
    return parsed


def _python_providers(parsed: CompaniesFile) -> Iterator[tuple[str, PythonProvider]]:
    """Every python provider in the file, with the path of the item that names it."""
    for index, company in enumerate(parsed.companies):
        groups: list[tuple[str, Sequence[Any]]] = [
            ("tools", company.tools),
            ("resources", company.resources),
            ("resource_templates", company.resource_templates),
            ("prompts", company.prompts),
        ]
        for group, items in groups:
            for position, item in enumerate(items):
                if isinstance(item.provider, PythonProvider):
                    yield f"companies[{index}].{group}[{position}]", item.provider


def read_companies_file(path: Path) -> CompaniesFile:
    # Imported here: only reading a file needs YAML, not a worker serving stored companies.
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read {path}: {error.strerror}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigurationError(f"{path} is not valid YAML or JSON: {error}") from None
    return parse_companies(document)


async def apply_companies(
    repository: CompanyRepository, companies: CompaniesFile
) -> dict[str, ApplyOutcome]:
    documents = [company.model_dump(mode="json", by_alias=True) for company in companies.companies]
    return await repository.apply(documents)
