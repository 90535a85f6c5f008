"""Issue many refresh tokens for the refresh-grant load, through Frontdesk's own grant code.

Runs with Frontdesk's Python (bench/.venv-frontdesk) beside the served instance, never in
it. A refresh token works once, so every request of the load needs its own; running the
whole sign-in over HTTP for each of tens of thousands would take longer than the load.
Instead this takes the grant a real sign-in made (found by its access token, read from
stdin so that it shows in no process listing) and ends that sign-in again COUNT times, as
the service does: ``Grants.issue_code`` for the same company, client, customer, scope and
resource, then ``Grants.redeem_code``, the token endpoint's authorization_code grant with
its PKCE check (RFC 7636 4.6). Each token heads a token family of its own, as if COUNT
customers' clients were refreshing, and is to the token endpoint a token the flow issued.

Prints the tokens, one a line, to OUT and a JSON summary to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import time
from pathlib import Path

from frontdesk.companies.definition import FROM_STORE, CompanyDefinition, SigninSetup
from frontdesk.config import DEV_DATA_KEY
from frontdesk.oauth import pkce
from frontdesk.oauth.credentials import digest
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.forms import AuthorizationCodeRequest
from frontdesk.oauth.grants import Grants
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.customers import CustomerRepository
from frontdesk.store.database import create_engine
from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.grants import GrantRepository

# Sign-ins ended at once: enough to keep PostgreSQL's side of both cores busy while this
# process builds statements, and within the engine's pool (create_engine's pool_size).
CONCURRENT = 16
# Grants.refresh alone seals with it (a company's retry window); this script never refreshes.
UNUSED_BOX = SecretBox([DEV_DATA_KEY])


class MintError(Exception):
    """The sign-in to copy cannot be found, or its company signs no one in."""


async def _setup(companies: CompanyRepository, tenant: str) -> SigninSetup:
    """The company's sign-in setup as the service reads it: token lifetimes come from it."""
    stored = await companies.get(tenant)
    if stored is None:
        raise MintError(f"no company {tenant!r} in this database")
    signin = CompanyDefinition.model_validate(stored.definition, context=FROM_STORE).signin
    if signin is None:
        raise MintError(f"company {tenant!r} has no customer sign-in")
    return signin


async def _end_sign_in(
    grants: Grants,
    setup: SigninSetup,
    like: AccessRecord,
    tenant: str,
    customer_id: int,
    redirect_uri: str,
) -> str:
    """What the end of a sign-in does: a code for the flow, redeemed for a pair."""
    verifier = secrets.token_urlsafe(48)
    flow = Flow(
        tenant_key=tenant,
        client_id=like.client_id,
        redirect_uri=redirect_uri,
        state=None,
        code_challenge=pkce.s256(verifier),
        scope=like.scope,
        resource=like.resource,
        # Never opened: the flow only carries the grant to its code.
        binding=secrets.token_hex(32),
    )
    code = await grants.issue_code(flow, customer_id)
    request = AuthorizationCodeRequest(
        grant_type="authorization_code",
        code=code,
        redirect_uri=redirect_uri,
        code_verifier=verifier,
    )
    pair = await grants.redeem_code(tenant, like.client_id, setup, request)
    return str(pair["refresh_token"])


async def issue(
    database_url: str, tenant: str, access_token: str, redirect_uri: str, count: int
) -> list[str]:
    engine = create_engine(database_url, pool_size=CONCURRENT)
    try:
        repository = GrantRepository(engine)
        like = await repository.find_access(tenant, digest(access_token))
        if like is None:
            raise MintError("the access token to copy is not a live token of this company")
        setup = await _setup(CompanyRepository(engine), tenant)
        # The customer signs in again, as at the login step: the same row, by its subject.
        customer_id = await CustomerRepository(engine).record(
            tenant, like.subject, like.email, like.name
        )
        grants = Grants(repository, UNUSED_BOX)
        tokens: list[str] = []

        async def end_sign_ins(share: int) -> None:
            for _ in range(share):
                token = await _end_sign_in(grants, setup, like, tenant, customer_id, redirect_uri)
                tokens.append(token)

        async with asyncio.TaskGroup() as group:
            for lane in range(CONCURRENT):
                group.create_task(end_sign_ins(count // CONCURRENT + (lane < count % CONCURRENT)))
    finally:
        await engine.dispose()
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--tenant", required=True, help="the company the sign-in was for")
    parser.add_argument("--redirect-uri", required=True, help="the client's, as at authorize")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    if arguments.count < 1:
        parser.error("--count must be at least 1")
    access_token = sys.stdin.readline().strip()
    if not access_token:
        parser.error("the access token of a real sign-in goes to stdin")
    started = time.perf_counter()
    try:
        tokens = asyncio.run(
            issue(
                arguments.database_url,
                arguments.tenant,
                access_token,
                arguments.redirect_uri,
                arguments.count,
            )
        )
    except MintError as error:
        print(f"mint_refresh_tokens: {error}", file=sys.stderr)
        return 1
    arguments.out.write_text("".join(token + "\n" for token in tokens), encoding="ascii")
    print(json.dumps({"issued": len(tokens), "seconds": round(time.perf_counter() - started, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
