"""Issuing and redeeming grants: codes at the end of a sign-in, tokens at the token
endpoint, and the bearer check on the MCP endpoint.

Lifetimes come from the company's sign-in setup, capped by the contract: access tokens
60 minutes, refresh tokens 30 days (each refresh issues a new one), codes 5 minutes.
What presenting a refresh token means is decided in oauth.refresh; storage (behind
oauth.storage's Protocol) only executes what is decided here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from frontdesk import scopes
from frontdesk.companies.definition import SigninSetup
from frontdesk.domain import Customer
from frontdesk.oauth import kept_pairs, pkce
from frontdesk.oauth.credentials import Kind, digest, looks_like, mint
from frontdesk.oauth.errors import InvalidGrant, InvalidTarget
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.forms import AuthorizationCodeRequest, RefreshTokenRequest
from frontdesk.oauth.kept_pairs import KeptPair
from frontdesk.oauth.refresh import REFUSED, Refuse, Retry, Reuse, Rotate, decide
from frontdesk.oauth.storage import GrantStorage
from frontdesk.observability import metrics
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.assertion_grants import AssertionRecord
from frontdesk.store.grant_records import CodeRecord, Ending, NewTokens, RefreshState

CODE_TTL = timedelta(minutes=5)
# Decisions one refresh may make: each after the last lost a compare-and-set to a
# concurrent presentation of the same token, so each loss means another request progressed.
REFRESH_DECISIONS = 3


def _leaked(reason: str) -> Ending:
    """A code or refresh token that reached someone else (RFC 6749 4.1.2, RFC 9700 section
    4.14.2) ends the families it started or belongs to, and the customer's remembered
    consent to that client with them: the next sign-in shows the consent page instead of
    handing a code to whoever asks (oauth.remembered)."""
    return Ending(reason, forgets_consent=True)


CODE_REPLAYED = _leaked("code_replayed")
REFRESH_TOKEN_REUSED = _leaked("refresh_token_reuse")
# A client that revokes a refresh token gives up the customer's grant (RFC 7009 2.1): its
# family ends, and so does the remembered consent, so the next sign-in asks again.
REVOKED = Ending("revocation", forgets_consent=True)


def check_resource(asked: str | None, endpoint: str) -> None:
    """A company's grants are for its MCP endpoint and nothing else (RFC 8707 2.2), at
    authorize and at the token endpoint alike: a ``resource`` naming anything else is
    ``invalid_target``. A trailing slash names the same endpoint."""
    if asked is not None and asked.rstrip("/") != endpoint:
        raise InvalidTarget("resource must be this company's MCP endpoint")


class Bearer(NamedTuple):
    """Who a valid access token speaks for (a tuple: one is built per signed-in call)."""

    customer: Customer
    client_id: str
    # The tool versions the grant's consent covered (oauth.tool_consent); None: unchecked.
    tool_snapshot: str | None = None


class Grants:
    SCOPE_TEXTS_KEPT = 256

    def __init__(self, repository: GrantStorage, box: SecretBox) -> None:
        self._repository = repository
        # Seals the pair a rotation keeps for a company's retry window (oauth.kept_pairs).
        self._box = box
        self._granted_scopes: dict[str, frozenset[str]] = {}

    async def issue_code(
        self, flow: Flow, customer_id: int, tool_snapshot: str | None = None
    ) -> str:
        now = datetime.now(UTC)
        code = mint(Kind.CODE)
        record = CodeRecord(
            client_id=flow.client_id,
            customer_id=customer_id,
            redirect_uri=flow.redirect_uri,
            code_challenge=flow.code_challenge,
            scope=flow.scope,
            resource=flow.resource,
            expires_at=now + CODE_TTL,
            used_at=None,
            tool_snapshot=tool_snapshot,
        )
        await self._repository.save_code(flow.tenant_key, digest(code), record, now)
        return code

    async def redeem_code(
        self,
        tenant_key: str,
        client_id: str,
        setup: SigninSetup,
        request: AuthorizationCodeRequest,
    ) -> dict[str, Any]:
        code, redirect_uri, verifier = request.code, request.redirect_uri, request.code_verifier
        now = datetime.now(UTC)
        code_hash = digest(code)
        record = await self._repository.find_code(tenant_key, code_hash)
        # A code of another client is treated as unknown: nothing about it is revealed.
        if record is None or record.client_id != client_id:
            raise InvalidGrant("the code is unknown, spent or expired")
        if record.used_at is not None:
            # RFC 6749 4.1.2: a code used twice revokes what it issued.
            await self._repository.revoke_code_grants(tenant_key, code_hash, now, CODE_REPLAYED)
            raise InvalidGrant("the code is unknown, spent or expired")
        if record.expires_at <= now:
            raise InvalidGrant("the code is unknown, spent or expired")
        if redirect_uri != record.redirect_uri:
            raise InvalidGrant("redirect_uri differs from the one sent to authorize")
        if not pkce.verify(verifier, record.code_challenge):
            raise InvalidGrant("code_verifier does not match the code_challenge")
        tokens, response = _new_pair(setup, now)
        if not await self._repository.exchange_code(tenant_key, code_hash, record, tokens, now):
            await self._repository.revoke_code_grants(tenant_key, code_hash, now, CODE_REPLAYED)
            raise InvalidGrant("the code is unknown, spent or expired")
        response["scope"] = record.scope or scopes.ALL
        return response

    async def refresh(
        self,
        tenant_key: str,
        client_id: str,
        setup: SigninSetup,
        request: RefreshTokenRequest,
        offers: Iterable[str] = scopes.SUPPORTED_SET,
    ) -> dict[str, Any]:
        token = request.refresh_token
        # RFC 6749 3.3: scopes the company does not offer (``offers``: the service's and its
        # tools', companies.tool_scopes) are dropped, as at authorize; one it offers and the
        # grant no longer holds, as after the customer narrowed it, is invalid_scope.
        requested = scopes.offered(request.scope, offers)
        now = datetime.now(UTC)
        token_hash = digest(token)
        retry_window = timedelta(seconds=setup.refresh_retry_seconds)
        tokens, response = _new_pair(setup, now)
        repository = self._repository
        for _ in range(REFRESH_DECISIONS):
            state = await repository.find_refresh(tenant_key, token_hash)
            kept = None
            # Opened only where the company has a window: elsewhere it cannot matter.
            if retry_window and state is not None and state.kept_successor is not None:
                kept = kept_pairs.open_kept(self._box, tenant_key, token_hash, state.kept_successor)
            decision = decide(state, client_id, requested, now, retry_window, kept)
            match decision:
                case Refuse(error):
                    raise error
                case Reuse(family_id):
                    await repository.revoke_family(family_id, now, REFRESH_TOKEN_REUSED)
                    metrics.refresh_token_reused(tenant_key)
                    raise InvalidGrant(REFUSED)
                case Rotate(state=spendable):
                    sealed = None
                    if retry_window > timedelta(0):
                        sealed = kept_pairs.seal(
                            self._box, tenant_key, token_hash, _kept(tokens, response)
                        )
                    if await repository.rotate_refresh(
                        tenant_key, token_hash, spendable, tokens, sealed, now
                    ):
                        return _granted_in(response, spendable)
                case Retry(state=spent, pair=pair):
                    if await repository.retry_refresh(tenant_key, token_hash, spent, now):
                        return _granted_in(_answered_again(pair, now), spent)
        # Presented again and again while this request decided: others got their pairs.
        raise InvalidGrant(REFUSED)

    async def redeem_assertion(
        self, tenant_key: str, setup: SigninSetup, record: AssertionRecord, with_refresh: bool
    ) -> dict[str, Any]:
        """Tokens for a checked identity assertion (oauth.assertion_grant), once: a spent
        one is ``invalid_grant`` on every instance."""
        now = datetime.now(UTC)
        tokens, response = _new_pair(setup, now)
        if not await self._repository.redeem_assertion(
            tenant_key, record, tokens, with_refresh, now
        ):
            raise InvalidGrant("the assertion was used before")
        if not with_refresh:
            del response["refresh_token"]
        response["scope"] = record.scope
        return response

    async def bearer(self, tenant_key: str, token: str) -> Bearer | None:
        """The customer behind a live access token of this company, or None."""
        if not looks_like(Kind.ACCESS, token):
            return None
        record = await self._repository.find_access(tenant_key, digest(token))
        if record is None:
            return None
        granted = self._granted(record.scope)
        customer = Customer(
            subject=record.subject,
            # A tool sees only what the customer agreed to share.
            email=record.email if "email" in granted else None,
            name=record.name if "profile" in granted else None,
            scopes=granted,
            # Verified goes with the address: without the email scope there is neither.
            email_verified=record.email_verified and "email" in granted,
        )
        return Bearer(customer, record.client_id, record.tool_snapshot)

    def _granted(self, scope: str) -> frozenset[str]:
        """The scopes of a grant as a set, kept per scope text: grants share a handful of
        scope texts, and every signed-in call needs the set."""
        granted = self._granted_scopes.get(scope)
        if granted is None:
            if len(self._granted_scopes) >= self.SCOPE_TEXTS_KEPT:
                self._granted_scopes.clear()
            granted = self._granted_scopes[scope] = frozenset(scope.split())
        return granted

    async def revoke(self, tenant_key: str, client_id: str, token: str) -> None:
        await self._repository.revoke_token(
            tenant_key, client_id, digest(token), datetime.now(UTC), REVOKED
        )


def _granted_in(response: dict[str, Any], state: RefreshState) -> dict[str, Any]:
    # A refresh keeps the family's scope; a narrower one asked for is ignored.
    response["scope"] = state.scope or scopes.ALL
    return response


def _kept(tokens: NewTokens, response: dict[str, Any]) -> KeptPair:
    return KeptPair(response["access_token"], response["refresh_token"], tokens.access_expires_at)


def _answered_again(pair: KeptPair, now: datetime) -> dict[str, Any]:
    """The token response a rotation gave, again; ``expires_in`` counts what is left of the
    access token's lifetime (RFC 6749 5.1), at least 1."""
    remaining = math.ceil((pair.access_expires_at - now).total_seconds())
    return {
        "access_token": pair.access_token,
        "token_type": "Bearer",
        "expires_in": max(1, remaining),
        "refresh_token": pair.refresh_token,
    }


def _new_pair(setup: SigninSetup, now: datetime) -> tuple[NewTokens, dict[str, Any]]:
    """A new access and refresh token: their hashes and expiry times to store, and the
    token response without its scope."""
    access_ttl = timedelta(minutes=setup.access_token_minutes)
    access, refresh = mint(Kind.ACCESS), mint(Kind.REFRESH)
    tokens = NewTokens(
        access_hash=digest(access),
        access_expires_at=now + access_ttl,
        refresh_hash=digest(refresh),
        refresh_expires_at=now + timedelta(days=setup.refresh_token_days),
    )
    response = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(access_ttl.total_seconds()),
        "refresh_token": refresh,
    }
    return tokens, response
