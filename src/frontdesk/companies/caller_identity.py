"""How an ``http`` tool's backend learns who is calling, as the companies file chooses it.

``signed_body`` (the default): the customer is in the signed body (tools.signature), which
the backend checks with the company's shared secret. ``jwt``: every call of a signed-in
customer also carries ``Authorization: Bearer <JWT>`` (frontdesk.tools.identity_tokens), which any
API gateway verifies against the company's published keys with a standard JWT library; the
body stays as it was, signed as before.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, Field

SIGNED_BODY: Final = "signed_body"
JWT: Final = "jwt"


class CallerIdentity(BaseModel):
    """The fields HttpProvider takes from here (definition.py is full)."""

    identity: Literal["signed_body", "jwt"] = SIGNED_BODY
    # The token's ``aud``: the backend's URL unless the API names itself otherwise (the
    # audience its gateway checks).
    audience: str | None = Field(default=None, min_length=1, max_length=2048)
