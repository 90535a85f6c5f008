"""``POST /admin/v1/companies/{tenant}/openapi-imports``: the company's tools from an OpenAPI
document, given inline (``document``) or by URL (``url``, fetched as client metadata
documents are: frontdesk.openapi_import.document), with the API's ``base_url``, the
operations to ``include`` (operationIds or tags), an import ``source`` name, per-operation
``annotations`` and ``dry_run``. Answers the diff (frontdesk.openapi_import.plan); a document
that cannot be imported is a 422 naming the problem, and nothing is written."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from frontdesk.admin_api.errors import AdminError, invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.companies.provider_definitions import checked_base_url
from frontdesk.openapi_import import ImportRefused

FIELDS = frozenset({"document", "url", "base_url", "include", "source", "annotations", "dry_run"})


async def import_openapi(call: AdminCall) -> Response:
    # Imported here: the validator and its schemas load with the first import, not with
    # every worker.
    from frontdesk.openapi_import.document import fetch
    from frontdesk.openapi_import.plan import ImportRequest
    from frontdesk.openapi_import.plan import import_openapi as run_import

    body = await call.json_body()
    choices = _checked(body)
    try:
        document = body.get("document")
        if document is None:
            document = await fetch(
                call.context.outbound.for_documents(),
                body["url"],
                on_loopback=call.context.settings.client_documents_on_loopback,
            )
        request = ImportRequest(document, **choices)
        plan = await run_import(
            call.context.companies,
            call.company,
            request,
            production=call.context.settings.is_production,
        )
    except ImportRefused as refused:
        raise AdminError(422, "invalid_document", str(refused)) from None
    return json_response(plan.as_json())


def _checked(body: Any) -> dict[str, Any]:
    """The request's choices, each of the type it must be: 400 naming the first that is not."""
    if not isinstance(body, dict):
        raise invalid_request("the body is a JSON object")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise invalid_request(f"unknown fields {unknown}")
    if ("document" in body) == ("url" in body):
        raise invalid_request('give exactly one of "document" (an object) or "url"')
    if "document" in body and not isinstance(body["document"], dict):
        raise invalid_request('"document" is the OpenAPI document, a JSON object')
    if "url" in body and not isinstance(body["url"], str):
        raise invalid_request('"url" is a string')
    base_url = body.get("base_url")
    if not isinstance(base_url, str):
        raise invalid_request('"base_url" (where the API is served) is required')
    try:
        base_url = checked_base_url(base_url)
    except ValueError as error:
        # A well-formed request naming an API Frontdesk does not call: the document's
        # fault as much as a bad document's.
        raise AdminError(422, "invalid_import", f'"base_url" {error}') from None
    include = body.get("include", [])
    if not isinstance(include, list) or not all(isinstance(item, str) for item in include):
        raise invalid_request('"include" is a list of operationIds or tags')
    source = body.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise invalid_request('"source" is a non-empty string')
    annotations = body.get("annotations", {})
    if not isinstance(annotations, dict) or not all(
        isinstance(value, dict) for value in annotations.values()
    ):
        raise invalid_request('"annotations" maps operationIds to annotation objects')
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise invalid_request('"dry_run" is true or false')
    return {
        "base_url": base_url,
        "include": tuple(include),
        "source": source,
        "annotations": annotations,
        "dry_run": dry_run,
    }
