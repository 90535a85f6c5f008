"""The ``dev`` login: a plain form that signs in whoever types an email address.

For local trials and the demo company only: the service refuses it in production.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlencode

from frontdesk.login.connector import Identity, LoginAttempt, LoginFailed

# No control characters: the address becomes the customer's subject (PostgreSQL refuses NUL).
EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]{1,255}$")
# "dev:" and the address must fit a customer's subject (255 characters).
MAX_EMAIL = 251


class DevLogin:
    def __init__(self, form_url: str) -> None:
        self._form_url = form_url

    async def begin(self, attempt: LoginAttempt) -> str:
        return f"{self._form_url}?{urlencode({'flow': attempt.state})}"

    async def complete(self, attempt: LoginAttempt, params: Mapping[str, str]) -> Identity:
        email = params.get("email", "").strip()
        if not EMAIL.match(email) or len(email) > MAX_EMAIL:
            raise LoginFailed("Enter an email address to sign in.")
        name = params.get("name", "").strip()[:200] or None
        return Identity(subject=f"dev:{email.lower()}", email=email, name=name)
