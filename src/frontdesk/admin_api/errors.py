"""The admin API's errors: one shape, rendered in one place (``render``).

Every refusal is a JSON object ``{"error": CODE, "error_description": TEXT}`` (the shape of
the authorization server's own errors, RFC 6749 section 5.2, so one parser reads both); a
document that fails validation adds ``"errors": [{"field": ..., "message": ...}]``, each
field named from the document (``tools[0].name``). Errors are raised where they are found
(administration.company_state, administration.company_documents, here) and turned into a response
only by ``render``.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from frontdesk.administration.company_documents import InvalidCompany
from frontdesk.administration.company_state import UnknownCompany, UnknownTarget
from frontdesk.sealing.company_secrets import SecretsUnreadable
from frontdesk.store.companies import CompanyChanged

# RFC 6750 section 3: a missing or refused bearer credential is answered with this challenge.
REALM = 'Bearer realm="frontdesk-admin"'


class AdminError(Exception):
    def __init__(
        self,
        status: int,
        error: str,
        description: str,
        *,
        headers: dict[str, str] | None = None,
        problems: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.headers = headers or {}
        self.problems = problems


def unauthorized(description: str, *, key_given: bool) -> AdminError:
    challenge = REALM + (', error="invalid_token"' if key_given else "")
    return AdminError(401, "unauthorized", description, headers={"WWW-Authenticate": challenge})


def operators_only(what: str) -> AdminError:
    return AdminError(403, "forbidden", f"only an operator key may {what}")


def invalid_request(description: str) -> AdminError:
    return AdminError(400, "invalid_request", description)


def as_admin_error(error: Exception) -> AdminError | None:
    """The admin API's answer to an error raised deeper down; None for one it does not
    answer itself (an outage: the application's handlers answer 503)."""
    if isinstance(error, AdminError):
        return error
    if isinstance(error, (UnknownCompany, UnknownTarget)):
        # The same for another company's as for one that never was: a company key cannot
        # learn which tenant keys exist.
        return AdminError(404, "not_found", str(error))
    if isinstance(error, InvalidCompany):
        return AdminError(
            422, "invalid_company", "the company is not valid", problems=error.problems
        )
    if isinstance(error, CompanyChanged):
        return AdminError(409, "conflict", str(error))
    if isinstance(error, SecretsUnreadable):
        return AdminError(409, "secrets_unreadable", str(error))
    return None


def render(error: AdminError) -> Response:
    body: dict[str, Any] = {"error": error.error, "error_description": error.description}
    if error.problems is not None:
        body["errors"] = [{"field": field, "message": text} for field, text in error.problems]
    headers = {"Cache-Control": "no-store", **error.headers}
    return Response(orjson.dumps(body), error.status, headers, media_type="application/json")
