"""The ``urn:ietf:params:oauth:grant-type:jwt-bearer`` grant with an Identity Assertion JWT
Authorization Grant (ID-JAG): enterprise-managed sign-in, at the token endpoint of a
company that trusts an enterprise identity provider (companies.enterprise_providers).

The MCP client trades, in one back-channel request and with no browser, the ID-JAG its
customer's identity provider issued for an access token (the MCP ``ext-auth`` extension
"Enterprise-Managed Authorization", section 5; draft-ietf-oauth-identity-assertion-authz-grant
section 4.4; RFC 7523 2.1). The assertion is checked as the extension (5.1, 7.4, 7.6), the
draft (4.4.1) and RFC 7523 (section 3) ask:

- the JWS header's ``typ`` is ``oauth-id-jag+jwt`` (RFC 8725 3.11), its ``alg`` on the
  trusted issuer's allow-list (never ``none``), and the signature verifies with the key
  its ``kid`` names in the issuer's JWKS (login.issuer_keys: cached, refetched once for an
  unknown ``kid``);
- ``iss`` is a provider the company trusts, ``aud`` the company's issuer, ``resource`` its
  MCP endpoint, ``client_id`` the client authenticated in the request, ``sub`` present;
- ``exp`` and ``iat`` hold within SKEW_SECONDS, and ``exp`` is at most MAX_LIFETIME away;
- ``jti`` is spent once, on every instance, until the assertion expires
  (store.assertion_grants);
- the scopes granted are those asked for, asserted and allowed (extension 7.2.1).

Every refusal is ``invalid_grant`` with a reason that names no secret; the assertion itself
never reaches a log line or an error. Only a provider whose keys cannot be fetched now
answers 503 ``temporarily_unavailable``: the assertion may well be good, and a client told
``invalid_grant`` would throw it away.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeGuard

import orjson
from joserfc import jws, jwt
from joserfc.errors import JoseError

from frontdesk import scopes
from frontdesk.companies.enterprise_providers import EnterpriseProvider
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.login.connector import LoginFailed
from frontdesk.login.issuer_keys import KeysUnavailable
from frontdesk.login.oidc import MAX_SUBJECT, identity_from
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import InvalidGrant, TemporarilyUnavailable
from frontdesk.oauth.grants import check_resource
from frontdesk.store.assertion_grants import AssertionRecord

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# The profile a company that trusts an enterprise provider advertises (extension section
# 6; draft section 7.2), in ``authorization_grant_profiles_supported``.
PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
# RFC 8725 3.11 and the draft's media type registration; RFC 7515 4.1.9 lets the
# ``application/`` prefix be left out, and media types compare without regard to case.
TYP = "oauth-id-jag+jwt"
# Clock skew allowed between the provider and this instance (extension 7.4.2: "minimal").
SKEW_SECONDS = 60
# An ID-JAG is short-lived (extension 7.4.2); one valid for longer than this is refused, and
# the replay record of a spent one is bounded by it.
MAX_LIFETIME_SECONDS = 3600
MAX_JTI = 255
RETRY_AFTER_SECONDS = 30


async def redeem(
    services: OAuthServices, signin: SigninCompany, client_id: str, form: dict[str, str]
) -> dict[str, Any]:
    """The token response for the ID-JAG in ``form`` (already read, its client
    authenticated), or the OAuthError that refuses it."""
    tenant = signin.tenant_key
    settings = services.settings
    check_resource(form.get("resource") or None, settings.mcp_url(tenant))
    assertion = form.get("assertion")
    if not assertion:
        raise InvalidGrant("assertion is required")
    header, unverified = _unverified(assertion)
    if not _is_id_jag(header.get("typ")):
        raise InvalidGrant(f"the assertion's typ must be {TYP}")
    provider = _provider(signin, unverified.get("iss"))
    algorithm = header.get("alg")
    if algorithm not in provider.algorithms:
        raise InvalidGrant("the assertion's algorithm is not allowed for its issuer")
    claims = await _verified(services, provider, assertion, header, str(algorithm))
    now = time.time()
    _check_claims(claims, settings.issuer(tenant), settings.mcp_url(tenant), client_id, now)
    offers = company_scopes(signin.company).offered
    granted = _scopes(form.get("scope"), claims.get("scope"), provider, offers)
    try:
        identity = identity_from(claims)
    except LoginFailed:
        raise InvalidGrant("the assertion's subject cannot be used") from None
    subject = provider.customer_subject(identity.subject)
    if len(subject) > MAX_SUBJECT:
        raise InvalidGrant("the assertion's subject is too long")
    customer_id = await services.customers.record(
        tenant, subject, identity.email, identity.name, email_verified=identity.email_verified
    )
    record = AssertionRecord(
        client_id=client_id,
        customer_id=customer_id,
        scope=granted,
        resource=settings.mcp_url(tenant),
        assertion_hash=_assertion_hash(provider.issuer, str(claims["jti"])),
        expires_at=datetime.fromtimestamp(int(claims["exp"]), UTC),
    )
    return await services.grants.redeem_assertion(
        tenant, signin.setup, record, provider.refresh_tokens
    )


def _unverified(assertion: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims, read before any check only to choose the issuer's keys."""
    try:
        compact = jws.extract_compact(assertion.encode("ascii"))
        claims = orjson.loads(compact.payload)
    except (JoseError, ValueError, UnicodeEncodeError):
        raise InvalidGrant("the assertion is not a signed JWT") from None
    if not isinstance(claims, dict):
        raise InvalidGrant("the assertion is not a signed JWT")
    return dict(compact.headers()), claims


def _is_id_jag(typ: Any) -> bool:
    if not isinstance(typ, str):
        return False
    return typ.lower() in (TYP, f"application/{TYP}")


def _provider(signin: SigninCompany, issuer: Any) -> EnterpriseProvider:
    for provider in signin.setup.enterprise_providers:
        if provider.issuer == issuer:
            return provider
    raise InvalidGrant("the assertion's issuer is not trusted by this company")


async def _verified(
    services: OAuthServices,
    provider: EnterpriseProvider,
    assertion: str,
    header: dict[str, Any],
    algorithm: str,
) -> dict[str, Any]:
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise InvalidGrant("the assertion's kid is malformed")
    try:
        key = await services.logins.issuer_keys().key(provider.jwks_uri, kid)
    except KeysUnavailable as unavailable:
        raise TemporarilyUnavailable(str(unavailable), RETRY_AFTER_SECONDS) from None
    if key is None:
        raise InvalidGrant("the assertion's key is not among its issuer's keys")
    try:
        token = jwt.decode(assertion, key, algorithms=[algorithm])
    except (JoseError, ValueError):
        raise InvalidGrant("the assertion's signature does not verify") from None
    return dict(token.claims)


def _check_claims(
    claims: dict[str, Any], issuer: str, resource: str, client_id: str, now: float
) -> None:
    """RFC 7523 3, draft 4.4.1, extension 7.4 and 7.6: each claim, in this order."""
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if issuer not in audiences:
        raise InvalidGrant("the assertion's aud is not this company's issuer")
    asserted_resource = claims.get("resource")
    if not isinstance(asserted_resource, str) or asserted_resource.rstrip("/") != resource:
        raise InvalidGrant("the assertion's resource is not this company's MCP endpoint")
    if claims.get("client_id") != client_id:
        raise InvalidGrant("the assertion's client_id is not the client making the request")
    expires, issued = claims.get("exp"), claims.get("iat")
    if not _number(expires) or not _number(issued):
        raise InvalidGrant("the assertion must carry exp and iat")
    if expires <= now - SKEW_SECONDS:
        raise InvalidGrant("the assertion has expired")
    if issued > now + SKEW_SECONDS:
        raise InvalidGrant("the assertion is issued in the future")
    if expires > now + MAX_LIFETIME_SECONDS:
        raise InvalidGrant("the assertion is valid for too long")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not 0 < len(jti) <= MAX_JTI:
        raise InvalidGrant("the assertion must carry a jti")


def _number(value: Any) -> TypeGuard[int | float]:
    # A JSON decoder may give NaN or infinity, which no comparison below would refuse.
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _scopes(
    asked: str | None, asserted: Any, provider: EnterpriseProvider, offers: Sequence[str]
) -> str:
    """Asked ∩ asserted ∩ allowed, of the scopes the company offers (the service's and its
    tools' own, companies.tool_scopes; extension 7.2.1; RFC 6749 3.3: what is not offered
    is dropped), in the order of ``offers``. Nothing asked means what is asserted; an
    assertion without ``scope`` (RFC 7523 does not require one) is bounded by what the
    company allows its issuer alone. A grant of no scope at all is refused."""
    if asserted is not None and not isinstance(asserted, str):
        raise InvalidGrant("the assertion's scope is malformed")
    granted = scopes.offered(asserted if asserted is not None else " ".join(offers), offers)
    if asked:
        granted &= set(asked.split())
    if provider.scopes:
        granted &= set(provider.scopes)
    if not granted:
        raise InvalidGrant("no scope asked for is both asserted and allowed")
    return " ".join(item for item in offers if item in granted)


def _assertion_hash(issuer: str, jti: str) -> str:
    """What the replay record keeps: the ``jti`` is unique per issuer (RFC 7519 4.1.7)."""
    return hashlib.sha256(f"{issuer}\x00{jti}".encode()).hexdigest()
