"""The successor pair a rotation keeps for a company's retry window, sealed.

A company may let a client that lost a refresh's answer present the spent refresh token
again within a short window (``signin.refresh_retry_seconds``, oauth.refresh) and receive
the same pair the rotation issued. That pair's tokens are otherwise stored only as hashes,
so for the window the rotation keeps them on the spent token's row sealed under the
operator's data keys (secret_box.py, the same keys and the same development default as
company secrets): a copy of the database without the keys yields nothing. The associated
data names the company and the spent token, so a sealed pair copied to another row does
not open there. The store clears it when the family ends and once the window has passed
(store.retention); it never reaches a log.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
import structlog

from frontdesk.sealing.secret_box import CannotOpen, KeyNotConfigured, SecretBox

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class KeptPair:
    """A pair as it was answered, in clear: only ever held in memory."""

    access_token: str
    refresh_token: str
    access_expires_at: datetime

    def __repr__(self) -> str:
        # A traceback or a debug print shows the object, never its tokens.
        return f"KeptPair(access_expires_at={self.access_expires_at.isoformat()})"


def _associated(tenant_key: str, spent_hash: str) -> str:
    return f"frontdesk/refresh-successor\x00{tenant_key}\x00{spent_hash}"


def seal(box: SecretBox, tenant_key: str, spent_hash: str, pair: KeptPair) -> str:
    document = {
        "access_token": pair.access_token,
        "refresh_token": pair.refresh_token,
        "access_expires_at": pair.access_expires_at.timestamp(),
    }
    return box.seal(orjson.dumps(document).decode(), _associated(tenant_key, spent_hash))


def open_kept(box: SecretBox, tenant_key: str, spent_hash: str, sealed: str) -> KeptPair | None:
    """The pair, or None when it cannot be opened (a retired data key, an altered row): the
    retry is then not offered, and a second presentation is what the contract says."""
    try:
        document = orjson.loads(box.open(sealed, _associated(tenant_key, spent_hash)))
        return KeptPair(
            access_token=str(document["access_token"]),
            refresh_token=str(document["refresh_token"]),
            access_expires_at=datetime.fromtimestamp(float(document["access_expires_at"]), UTC),
        )
    except (KeyNotConfigured, CannotOpen, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        # Which company only: the sealed value and the token's hash stay out of the log.
        log.warning("refresh_kept_pair_unreadable", tenant=tenant_key)
        return None
