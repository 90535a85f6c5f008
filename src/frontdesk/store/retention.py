"""Retention: what the service stores only while it can still matter, and its purge.

Each kind of row goes once nothing can read it any more (docs/design.md, "Retention"):

- An authorization code, an access token, a refresh token (spent or not), a spent sign-in
  flow or a spent identity assertion (ID-JAG), ``GRACE`` after its own expiry. Past it,
  presenting one is refused exactly as when it had merely expired (``invalid_grant``,
  401); the grace covers clocks that disagree between instances and a decision read just
  before the purge. A spent refresh token is kept its whole lifetime, so reuse detection
  (RFC 9700 4.14.2) reads it for as long as it could ever have been spent.
- The successor pair a rotation kept sealed for a company's refresh retry window
  (oauth.kept_pairs) is cleared from its row once the longest window has passed: the row
  stays, the pair in it goes. Not a deletion, so not counted in a report.
- Every token of a family revoked more than ``GRACE`` ago: a revoked family's tokens are
  refused whatever they are, and an unknown token is refused the same way.
- A family, once its tokens are gone and it is revoked or every token it had has expired.
- A dynamically registered client (RFC 7591) that never obtained a token within
  ``unused_client_days`` of registering. Before a client's ended families go, the purge
  records on the client that it was granted (``oauth_clients.granted_at``), so a client
  used long ago is never taken for one never used. Clients named by a Client ID Metadata
  Document are not stored (oauth.client_documents), so none are purged here.
- An audit event, ``audit_retention_days`` after it occurred (0 keeps them all).
- An hour of tool usage (store.tool_usage), with the customers counted in it,
  ``usage_retention_days`` after the hour began (0 keeps them all).

Deletes go in batches of at most ``batch_size`` rows, each its own short transaction, so
no lock is held long and no transaction grows with the backlog. The batches take turns
between kinds, so one large backlog does not starve the others when a run's time is up. On
PostgreSQL a batch skips rows another transaction has locked (``SKIP LOCKED``): concurrent
purges never wait on each other or deadlock, and every delete is idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import (
    ColumnElement,
    Delete,
    Select,
    Table,
    Update,
    and_,
    delete,
    exists,
    func,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.grant_records import REFRESH_RETRY_MAX_SECONDS
from frontdesk.store.tables import (
    KEPT_SUCCESSOR,
    access_tokens,
    audit_events,
    authorization_codes,
    identity_assertions,
    oauth_clients,
    refresh_tokens,
    spent_flows,
    token_families,
    tool_usage,
    tool_usage_customers,
)

# How long past its expiry (or its family's revocation) a row is kept: well above any clock
# skew between instances.
GRACE = timedelta(hours=1)
# Past this since its rotation, no company's retry reads a kept pair (oauth.refresh).
RETRY_WINDOW_MAX = timedelta(seconds=REFRESH_RETRY_MAX_SECONDS)
BATCH_SIZE = 1000

# The kinds a purge reports, in this order.
KINDS = (
    "authorization_codes",
    "access_tokens",
    "refresh_tokens",
    "token_families",
    "oauth_clients",
    "spent_flows",
    "audit_events",
    "tool_usage",
    "tool_usage_customers",
    "identity_assertions",
)


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    # A client registered this long ago that never obtained a token goes; 0 keeps them all.
    unused_client_days: int = 30
    # An audit event this old goes; 0 keeps them all.
    audit_retention_days: int = 400
    # An hour of tool usage this old goes; 0 keeps them all.
    usage_retention_days: int = 400
    batch_size: int = BATCH_SIZE


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """Rows deleted per kind (or, for a dry run, that would be); ``complete`` is false when
    the run's time was up before every kind was done."""

    counts: dict[str, int]
    complete: bool = True


async def purge(
    engine: AsyncEngine,
    policy: RetentionPolicy,
    now: datetime,
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PurgeReport:
    """Delete what ``policy`` no longer keeps at ``now``, until done or ``deadline`` (a
    ``clock`` reading)."""
    steps = _steps(policy, now, engine.dialect.name == "postgresql")
    counts = dict.fromkeys(KINDS, 0)
    while True:
        progress = 0
        for kind, statement in steps:
            if deadline is not None and clock() >= deadline:
                return PurgeReport(counts, complete=False)
            async with engine.begin() as connection:
                changed = (await connection.execute(statement)).rowcount
            progress += changed
            if kind is not None:
                counts[kind] += changed
        # A round that changed nothing: every kind is done. One that did may have made
        # more deletable (a family whose tokens just went), so another round follows.
        if progress == 0:
            return PurgeReport(counts)


async def count(engine: AsyncEngine, policy: RetentionPolicy, now: datetime) -> PurgeReport:
    """What ``purge`` would delete at ``now``, deleting nothing (a dry run)."""
    counts = dict.fromkeys(KINDS, 0)
    async with engine.connect() as connection:
        for kind, (table, condition) in _rules(policy, now).items():
            query = select(func.count()).select_from(table).where(condition)
            counts[kind] = int((await connection.execute(query)).scalar_one())
    return PurgeReport(counts)


def _cutoffs(policy: RetentionPolicy, now: datetime) -> tuple[datetime, datetime, datetime]:
    return (
        now - GRACE,
        now - timedelta(days=policy.unused_client_days),
        now - timedelta(days=policy.audit_retention_days),
    )


def _revoked_families(cutoff: datetime) -> Select[tuple[int]]:
    return select(token_families.c.id).where(token_families.c.revoked_at < cutoff)


def _token_rules(table: Table, cutoff: datetime) -> list[ColumnElement[bool]]:
    """The two reasons a token goes: separate statements, as each has its own index."""
    return [
        table.c.expires_at < cutoff,
        table.c.family_id.in_(_revoked_families(cutoff)),
    ]


def _family_ended(cutoff: datetime) -> ColumnElement[bool]:
    family = token_families.c
    live_token = [
        exists().where(table.c.family_id == family.id, table.c.expires_at >= cutoff)
        for table in (access_tokens, refresh_tokens)
    ]
    return or_(
        family.revoked_at < cutoff,
        and_(family.created_at < cutoff, ~live_token[0], ~live_token[1]),
    )


def _granted(client_id: ColumnElement[str], tenant_key: ColumnElement[str]) -> Select[tuple[int]]:
    family = token_families.c
    return select(family.id).where(family.client_id == client_id, family.tenant_key == tenant_key)


def _client_unused(policy: RetentionPolicy, now: datetime) -> ColumnElement[bool]:
    cutoff, unused_cutoff, _ = _cutoffs(policy, now)
    client, code = oauth_clients.c, authorization_codes.c
    # A code past its grace goes in the same purge, so it does not keep its client.
    pending_code = exists().where(
        code.client_id == client.client_id,
        code.tenant_key == client.tenant_key,
        code.expires_at >= cutoff,
    )
    return and_(
        client.created_at < unused_cutoff,
        client.granted_at.is_(None),
        ~_granted(client.client_id, client.tenant_key).exists(),
        ~pending_code,
    )


def _rules(policy: RetentionPolicy, now: datetime) -> dict[str, tuple[Table, ColumnElement[bool]]]:
    """Each kind's table and the condition on a row that the purge deletes, as the state
    will be once the purge is done: the count of a dry run."""
    cutoff, _, audit_cutoff = _cutoffs(policy, now)
    rules: dict[str, tuple[Table, ColumnElement[bool]]] = {
        "authorization_codes": (authorization_codes, authorization_codes.c.expires_at < cutoff),
        "access_tokens": (access_tokens, or_(*_token_rules(access_tokens, cutoff))),
        "refresh_tokens": (refresh_tokens, or_(*_token_rules(refresh_tokens, cutoff))),
        "token_families": (token_families, _family_ended(cutoff)),
        "spent_flows": (spent_flows, spent_flows.c.expires_at < cutoff),
        # A spent ID-JAG is refused by its own exp past this (oauth.assertion_grant).
        "identity_assertions": (identity_assertions, identity_assertions.c.expires_at < cutoff),
    }
    if policy.unused_client_days > 0:
        rules["oauth_clients"] = (oauth_clients, _client_unused(policy, now))
    if policy.audit_retention_days > 0:
        rules["audit_events"] = (audit_events, audit_events.c.occurred_at < audit_cutoff)
    if policy.usage_retention_days > 0:
        usage_cutoff = now - timedelta(days=policy.usage_retention_days)
        for table in (tool_usage, tool_usage_customers):
            rules[table.name] = (table, table.c.hour < usage_cutoff)
    return rules


def _steps(
    policy: RetentionPolicy, now: datetime, postgres: bool
) -> list[tuple[str | None, Delete | Update]]:
    """One round of batches: each a statement and the kind its rows count for."""
    cutoff, _, _ = _cutoffs(policy, now)
    limit = policy.batch_size
    rules = _rules(policy, now)

    def batch(table: Table, condition: ColumnElement[bool]) -> Delete:
        keys = list(table.primary_key.columns)
        # Not correlated to the DELETE's own table: the batch is chosen from it.
        chosen = select(*keys).where(condition).limit(limit).correlate(None)
        if postgres:
            chosen = chosen.with_for_update(skip_locked=True)
        if len(keys) == 1:
            return delete(table).where(keys[0].in_(chosen))
        # A key of several columns (the usage rollup's): compared as a row value.
        return delete(table).where(tuple_(*keys).in_(chosen))

    steps: list[tuple[str | None, Delete | Update]] = [
        ("authorization_codes", batch(*rules["authorization_codes"]))
    ]
    for kind, table in (("access_tokens", access_tokens), ("refresh_tokens", refresh_tokens)):
        steps += [(kind, batch(table, rule)) for rule in _token_rules(table, cutoff)]
    steps += [(None, _mark_granted(limit, postgres))]
    steps += [(None, _forget_kept_successors(now - RETRY_WINDOW_MAX, limit, postgres))]
    family = token_families.c
    client = oauth_clients.c
    unmarked_client = exists().where(
        client.client_id == family.client_id,
        client.tenant_key == family.tenant_key,
        client.granted_at.is_(None),
    )
    no_token = [
        ~exists().where(table.c.family_id == family.id) for table in (access_tokens, refresh_tokens)
    ]
    steps += [
        (
            "token_families",
            batch(token_families, and_(_family_ended(cutoff), *no_token, ~unmarked_client)),
        )
    ]
    steps += [(kind, batch(*rules[kind])) for kind in KINDS[4:] if kind in rules]
    return steps


def _mark_granted(limit: int, postgres: bool) -> Update:
    """Record on each client that has a token family that it was granted, with the time of
    its first family still stored, before any of its families can go."""
    client, family = oauth_clients.c, token_families.c
    chosen = (
        select(client.client_id)
        .where(client.granted_at.is_(None), _granted(client.client_id, client.tenant_key).exists())
        .limit(limit)
        .correlate(None)
    )
    if postgres:
        chosen = chosen.with_for_update(skip_locked=True)
    first = (
        select(func.min(family.created_at))
        .where(family.client_id == client.client_id, family.tenant_key == client.tenant_key)
        .scalar_subquery()
    )
    return update(oauth_clients).where(client.client_id.in_(chosen)).values(granted_at=first)


def _forget_kept_successors(cutoff: datetime, limit: int, postgres: bool) -> Update:
    """Clear the pairs kept sealed on refresh tokens spent before ``cutoff``: a range of the
    partial index that holds only rows keeping one."""
    token = refresh_tokens.c
    chosen = (
        select(token.token_hash)
        .where(KEPT_SUCCESSOR, token.used_at < cutoff)
        .limit(limit)
        .correlate(None)
    )
    if postgres:
        chosen = chosen.with_for_update(skip_locked=True)
    return update(refresh_tokens).where(token.token_hash.in_(chosen)).values(successor_sealed=None)
