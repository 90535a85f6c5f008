"""Issuing and redeeming grants: codes at the end of a sign-in, tokens at the token
endpoint, and the bearer check on the MCP endpoint.

Lifetimes come from the company's sign-in setup, capped by the contract: access tokens
60 minutes, refresh tokens 30 days (each refresh issues a new one), codes 5 minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, NoReturn

from frontdesk.companies.definition import SigninSetup
from frontdesk.domain import Customer
from frontdesk.oauth import pkce, scopes
from frontdesk.oauth.credentials import Kind, digest, looks_like, mint
from frontdesk.oauth.errors import InvalidGrant, InvalidRequest, InvalidScope
from frontdesk.oauth.flow import Flow
from frontdesk.store.grants import CodeRecord, GrantRepository, NewTokens

CODE_TTL = timedelta(minutes=5)


class Bearer(NamedTuple):
    """Who a valid access token speaks for (a tuple: one is built per signed-in call)."""

    customer: Customer
    client_id: str


def _required(form: Mapping[str, str], name: str) -> str:
    value = form.get(name)
    if not value:
        raise InvalidRequest(f"{name} is required")
    return value


class Grants:
    SCOPE_TEXTS_KEPT = 256

    def __init__(self, repository: GrantRepository) -> None:
        self._repository = repository
        self._granted_scopes: dict[str, frozenset[str]] = {}

    async def issue_code(self, flow: Flow, customer_id: int) -> str:
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
        )
        await self._repository.save_code(flow.tenant_key, digest(code), record, now)
        return code

    async def redeem_code(
        self, tenant_key: str, client_id: str, setup: SigninSetup, form: Mapping[str, str]
    ) -> dict[str, Any]:
        code = _required(form, "code")
        redirect_uri = _required(form, "redirect_uri")
        verifier = _required(form, "code_verifier")
        now = datetime.now(UTC)
        code_hash = digest(code)
        record = await self._repository.find_code(tenant_key, code_hash)
        # A code of another client is treated as unknown: nothing about it is revealed.
        if record is None or record.client_id != client_id:
            raise InvalidGrant("the code is unknown, spent or expired")
        if record.used_at is not None:
            # RFC 6749 4.1.2: a code used twice revokes what it issued.
            await self._repository.revoke_code_grants(tenant_key, code_hash, now)
            raise InvalidGrant("the code is unknown, spent or expired")
        if record.expires_at <= now:
            raise InvalidGrant("the code is unknown, spent or expired")
        if redirect_uri != record.redirect_uri:
            raise InvalidGrant("redirect_uri differs from the one sent to authorize")
        if not pkce.verify(verifier, record.code_challenge):
            raise InvalidGrant("code_verifier does not match the code_challenge")
        tokens, response = _new_pair(setup, now)
        if not await self._repository.exchange_code(tenant_key, code_hash, record, tokens, now):
            await self._repository.revoke_code_grants(tenant_key, code_hash, now)
            raise InvalidGrant("the code is unknown, spent or expired")
        response["scope"] = record.scope or scopes.ALL
        return response

    async def refresh(
        self, tenant_key: str, client_id: str, setup: SigninSetup, form: Mapping[str, str]
    ) -> dict[str, Any]:
        token = _required(form, "refresh_token")
        # openid and offline_access are dropped here too, as at authorize (DESIGN: scopes).
        requested = frozenset((form.get("scope") or "").split()) - scopes.IGNORED
        now = datetime.now(UTC)
        token_hash = digest(token)
        tokens, response = _new_pair(setup, now)
        # The checks are the spend's own conditions (store.grants); a scope no grant can
        # hold is refused without trying.
        granted = None
        if requested <= scopes.SUPPORTED_SET:
            granted = await self._repository.spend_refresh(
                tenant_key, client_id, token_hash, requested, tokens, now
            )
        if granted is None:
            await self._refuse_refresh(tenant_key, client_id, token_hash, requested, now)
        response["scope"] = granted or scopes.ALL
        return response

    async def _refuse_refresh(
        self,
        tenant_key: str,
        client_id: str,
        token_hash: str,
        requested: frozenset[str],
        now: datetime,
    ) -> NoReturn:
        """Why a refresh token could not be spent, as the error to answer; a spent one
        presented again ends its family first."""
        refused = InvalidGrant("the refresh token is unknown, spent, revoked or expired")
        record = await self._repository.find_refresh(tenant_key, token_hash)
        if record is None or record.client_id != client_id or record.family_revoked:
            raise refused
        if record.used_at is not None:
            # RFC 9700 4.14.2: a spent refresh token came back (or two spends raced), so one
            # copy is in the wrong hands; end the whole family.
            await self._repository.revoke_family(record.family_id, now, "refresh_token_reuse")
            raise refused
        if record.expires_at <= now:
            raise refused
        if not requested <= frozenset(record.scope.split()):
            raise InvalidScope("a refresh cannot widen the granted scope")
        # Spendable when looked up again: its family was revoked and restored in between,
        # which nothing does; refused all the same.
        raise refused

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
        )
        return Bearer(customer=customer, client_id=record.client_id)

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
        await self._repository.revoke_token(tenant_key, client_id, digest(token), datetime.now(UTC))


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
