"""The live preview of the consent page: the consent template itself (oauth.consent_page),
rendered with branding a staff member typed but has not saved, a sample assistant, and the
company's own personal tools, so what they see is what customers will see. Its headers are
the consent page's, the logo's origin allowed for images only (oauth.pages)."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.companies.branding import Branding
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.files import describe
from frontdesk.oauth.client_display import client_display
from frontdesk.oauth.consent_page import personal_tools
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.pages import page

# A client named by a metadata document (shown verified, by its host): the usual case.
SAMPLE_CLIENT = "https://assistant.example/client.json"


def consent_preview(
    request: Request, issuer: str, company: ServedCompany, edited: dict[str, str | None]
) -> Response:
    """The consent page in ``edited``'s branding; 400 for a branding that would not apply."""
    try:
        branding = Branding.model_validate(
            {field: value for field, value in edited.items() if value is not None}
        )
    except ValidationError as error:
        raise AuthorizePage(400, "This branding cannot be shown", describe(error)) from None
    return page(
        request,
        "consent.html",
        branding=branding,
        company_name=company.name,
        client=client_display(SAMPLE_CLIENT, "Example Assistant"),
        tools=personal_tools(company),
        redirect_host="assistant.example",
        scopes=["profile", "email"],
        # Not a sign-in: the form's flow is empty, and the consent endpoint refuses it.
        flow="",
        consent_url=f"{issuer}/consent",
        account_url=f"{issuer.removesuffix('/oauth')}/account",
    )
