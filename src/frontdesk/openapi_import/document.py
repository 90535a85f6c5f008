"""An OpenAPI document: read from a file, fetched from a URL, and validated.

Validation is openapi-spec-validator's, for OpenAPI 3.0 and 3.1 alike, with no reference
handlers: a ``$ref`` outside the document is refused, never fetched (a document names any
URL or file it likes, and the import runs with the operator's rights). A document fetched
from a URL is fetched as client metadata documents are (outbound_policy): https (plain http
only where the test-only FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK opens loopback), public
addresses only, no redirects, a deadline for the whole fetch and a cap on the decoded body,
larger here (``MAX_DOCUMENT_BYTES``) since an API's description is longer than a client's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frontdesk import __version__
from frontdesk.openapi_import import ImportRefused
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.policy import OutboundFailure, OutboundPolicy

if TYPE_CHECKING:
    import httpx

MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
FETCH_DEADLINE_SECONDS = 10.0
# Every node of a document is visited when it is checked and converted: a bound on them
# bounds that work, whatever the document.
MAX_DOCUMENT_NODES = 200_000
SUPPORTED_VERSIONS = ("3.0", "3.1")
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")
USER_AGENT = f"Frontdesk/{__version__} (OpenAPI import)"


def parse_text(text: str, where: str) -> dict[str, Any]:
    """A document written in JSON or YAML (JSON is YAML)."""
    # Imported here: only an import reads YAML, not a worker serving companies.
    import yaml

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ImportRefused(f"{where} is not valid JSON or YAML: {error}") from None
    if not isinstance(document, dict):
        raise ImportRefused(f"{where} is not an OpenAPI document (not an object)")
    _check_is_a_tree(document, where)
    return document


def read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ImportRefused(f"cannot read {path}: {reason}") from None
    return parse_text(text, str(path))


async def fetch(http: httpx.AsyncClient, url: str, *, on_loopback: bool = False) -> dict[str, Any]:
    """The document at ``url``, fetched under the documents' limits (see the module)."""
    policy = OutboundPolicy(
        AddressPolicy(LOOPBACK_NETWORKS if on_loopback else ()),
        allow_http=on_loopback,
        limit_bytes=MAX_DOCUMENT_BYTES,
        deadline_seconds=FETCH_DEADLINE_SECONDS,
    )
    headers = {
        "Accept": "application/json, application/yaml;q=0.9, */*;q=0.1",
        "Accept-Encoding": "gzip",
        "User-Agent": USER_AGENT,
    }
    try:
        answer = await policy.call(http, "GET", url, headers=headers)
    except OutboundFailure as failure:
        raise ImportRefused(f"cannot fetch the document: {failure}") from None
    if answer.status != 200:
        raise ImportRefused(f"cannot fetch the document: {url[:200]} answered HTTP {answer.status}")
    try:
        text = answer.body.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportRefused(f"the document at {url[:200]} is not UTF-8 text") from None
    return parse_text(text, f"the document at {url[:200]}")


def validated(document: dict[str, Any]) -> str:
    """The document's OpenAPI version ("3.0" or "3.1") once it validates; ImportRefused
    naming the first problem and where it is."""
    # Imported here: the validator and its schemas are loaded only by an import.
    from jsonschema.exceptions import ValidationError
    from jsonschema_path import SchemaPath
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
    from referencing.exceptions import Unresolvable

    _check_is_a_tree(document, "the document")
    declared = document.get("openapi")
    if not isinstance(declared, str):
        if "swagger" in document:
            raise ImportRefused(
                "the document is Swagger 2.0; convert it to OpenAPI 3 first (e.g. with"
                " swagger2openapi)"
            )
        raise ImportRefused('the document has no "openapi" version field')
    version = ".".join(declared.split(".")[:2])
    if version not in SUPPORTED_VERSIONS:
        raise ImportRefused(f"OpenAPI {declared} is not supported; give a 3.0 or 3.1 document")
    validator = OpenAPIV30SpecValidator if version == "3.0" else OpenAPIV31SpecValidator
    # No handlers: a reference outside the document is Unresolvable, not fetched.
    checked = validator(SchemaPath.from_dict(document, handlers={}))
    try:
        error = next(iter(checked.iter_errors()), None)
    except Unresolvable as unresolvable:
        raise ImportRefused(
            f"the reference {str(unresolvable.ref)[:200]!r} does not resolve within the"
            " document (references to other files or URLs are not followed)"
        ) from None
    except RecursionError:
        raise ImportRefused("the document nests too deeply to be checked") from None
    if isinstance(error, ValidationError):
        where = "/".join(str(part) for part in error.absolute_path) or "(document)"
        first_line = str(error.message).splitlines()[0][:300]
        raise ImportRefused(
            f"the document is not valid OpenAPI {version}: at {where}: {first_line}"
        )
    return version


def _check_is_a_tree(document: Any, where: str) -> None:
    """Refuse a document with a node reached twice (a YAML alias): walking one that is,
    here and when converting it, could take time exponential in its size."""
    seen: set[int] = set()
    for count, node in enumerate(_containers(document)):
        if id(node) in seen:
            raise ImportRefused(f"{where} uses YAML aliases, which are not accepted")
        seen.add(id(node))
        if count > MAX_DOCUMENT_NODES:
            raise ImportRefused(f"{where} has more than {MAX_DOCUMENT_NODES} objects and lists")


def _containers(document: Any) -> Iterator[Any]:
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(value for value in node.values() if isinstance(value, dict | list))
        elif isinstance(node, list):
            yield node
            stack.extend(value for value in node if isinstance(value, dict | list))
