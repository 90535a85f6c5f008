"""The MCP revisions the endpoint serves, one module each, chosen by a request's
MCP-Protocol-Version header (``revision_of``). Adding a revision is adding its module and
naming it in ``REVISIONS``.

May import the rest of ``protocol`` (the core, envelope, errors); nothing in ``protocol``
but the endpoint imports it.
"""

from __future__ import annotations

from frontdesk.protocol.context import Revision
from frontdesk.protocol.errors import UnsupportedVersion
from frontdesk.protocol.revisions import handshake, r2026_07_28
from frontdesk.protocol.versions import ALL_VERSIONS

REVISIONS: tuple[Revision, ...] = (handshake.REVISION, r2026_07_28.REVISION)

# By the header's value as sent; no header is a handshake revision (2024-11-05 clients,
# and initialize).
_BY_HEADER: dict[bytes | None, Revision] = {
    None: handshake.REVISION,
    **{version.encode(): revision for revision in REVISIONS for version in revision.versions},
}


def revision_of(header: bytes | None) -> Revision:
    """The revision a request's MCP-Protocol-Version header names; -32022 for any other
    value, naming the versions served (MCP 2026-07-28)."""
    revision = _BY_HEADER.get(header)
    if revision is None:
        raise UnsupportedVersion(
            "Unsupported protocol version",
            data={"supported": list(ALL_VERSIONS), "requested": (header or b"").decode("latin-1")},
        )
    return revision
