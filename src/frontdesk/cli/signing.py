"""``frontdesk keys rotate-signing KEY``: a new key signs the company's identity tokens from
now on (frontdesk.tools.identity_tokens); the one signing until now stays published at its
jwks_uri for the overlap, so every token it signed still verifies."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from frontdesk.administration.command_database import opened
from frontdesk.administration.company_state import require_company
from frontdesk.cli.common import run, settings
from frontdesk.config import Settings
from frontdesk.errors import FrontdeskError
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.signing_keys import KeyAlreadyActive, SigningKeyRepository
from frontdesk.tools.identity_tokens import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    OVERLAP,
    IdentityTokens,
    RotatedKey,
)


class RotationCollided(FrontdeskError):
    """Another rotation of the same company committed first."""


async def rotate_signing_key(settings: Settings, tenant_key: str, algorithm: str) -> RotatedKey:
    """The company's new signing key; UnknownCompany when there is no such company."""
    async with opened(settings) as database:
        await require_company(database, tenant_key)
        tokens = IdentityTokens(
            SigningKeyRepository(database.engine), SecretBox(settings.data_keys), settings
        )
        try:
            return await tokens.rotate(tenant_key, algorithm, datetime.now(UTC))
        except KeyAlreadyActive:
            raise RotationCollided(
                f"company {tenant_key!r}: another rotation made a new key at the same moment;"
                " it signs now (run `keys rotate-signing` again for yet another)"
            ) from None


@click.command("rotate-signing")
@click.argument("tenant_key")
@click.option(
    "--algorithm",
    type=click.Choice(ALGORITHMS),
    default=DEFAULT_ALGORITHM,
    show_default=True,
    help="ES256 (P-256), or EdDSA (Ed25519) for APIs whose verifiers take it.",
)
def rotate_signing(tenant_key: str, algorithm: str) -> None:
    """Make a new key that signs the company's identity tokens from now on. The previous
    key stays published at the company's jwks_uri for 24 hours, so tokens it signed still
    verify; every instance signs with the new key within FRONTDESK_COMPANY_CACHE_SECONDS."""
    config = settings()
    rotated = run(lambda: rotate_signing_key(config, tenant_key, algorithm))
    click.echo(
        f"company {tenant_key} signs with key {rotated.kid} ({rotated.algorithm}) from now on"
    )
    if rotated.retired_previous:
        hours = int(OVERLAP.total_seconds() // 3600)
        click.echo(f"the previous key stays published for {hours} hours")
