"""The schema, in SQLAlchemy Core. Alembic migrations under ``migrations/`` create it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

metadata = MetaData()


class _Jsonb(TypeDecorator[Any]):
    """PostgreSQL's JSONB, looked up when a PostgreSQL engine first uses it: importing
    SQLAlchemy's PostgreSQL dialect costs a SQLite worker memory it never uses
    (docs/decisions/memory.md)."""

    impl = JSON
    cache_ok = True
    # As JSONB itself does: parameters are sent as $1::JSONB.
    render_bind_cast = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        from sqlalchemy.dialects.postgresql import JSONB

        return dialect.type_descriptor(JSONB())


JsonDocument = JSON().with_variant(_Jsonb(), "postgresql")

companies = Table(
    "companies",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_key", String(63), nullable=False, unique=True),
    # The validated company definition; see frontdesk.companies.definition.
    Column("definition", JsonDocument, nullable=False),
    Column("revision", Integer, nullable=False, default=1),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Customer sign-in. Every row carries its tenant key, and every lookup filters on it:
# a client, code or token of one company is unknown at every other.

# A client id may be the URL of its Client ID Metadata Document, so it holds a URL's length.
CLIENT_ID_LENGTH = 2048

oauth_clients = Table(
    "oauth_clients",
    metadata,
    Column("client_id", String(CLIENT_ID_LENGTH), primary_key=True),
    Column("tenant_key", String(63), nullable=False, index=True),
    Column("client_name", String(200), nullable=True),
    Column("redirect_uris", JsonDocument, nullable=False),
    Column("metadata", JsonDocument, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # When the client's first token family was created, recorded by the retention purge
    # (store.retention) before that family may go: a client granted long ago is never taken
    # for one registered and never used.
    Column("granted_at", DateTime(timezone=True), nullable=True),
)

customers = Table(
    "customers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_key", String(63), nullable=False),
    Column("subject", String(255), nullable=False),
    Column("email", String(320), nullable=True),
    # True only when the company's identity provider said so (login.oidc.identity_from).
    Column("email_verified", Boolean, nullable=False, server_default=false()),
    Column("name", String(200), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("tenant_key", "subject"),
)

# What each customer allowed each client (store.consents): the union of the scopes allowed,
# so that a sign-in asking for no more is not asked again. Forgotten when the client's
# grants are revoked.
consents = Table(
    "consents",
    metadata,
    Column("tenant_key", String(63), primary_key=True),
    Column(
        "customer_id", Integer, ForeignKey("customers.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("client_id", String(CLIENT_ID_LENGTH), primary_key=True),
    Column("scope", String(200), nullable=False),
    Column("granted_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # The tool versions the latest consent covered (tool_snapshots; migration 0014).
    Column("tool_snapshot", String(64), nullable=True),
)

# Sign-in flows spent by their callback (oauth.flow): a SHA-256 hash of the flow's random
# id, never the flow. The primary key makes the first callback the only one; a row is
# useless once the flow itself has expired (``expires_at``), and may be purged then.
spent_flows = Table(
    "spent_flows",
    metadata,
    Column("flow_hash", String(64), primary_key=True),
    Column("tenant_key", String(63), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
)

# Only SHA-256 hashes of codes and tokens are stored: a copy of the database lets nobody
# act as a customer.
authorization_codes = Table(
    "authorization_codes",
    metadata,
    Column("code_hash", String(64), primary_key=True),
    Column("tenant_key", String(63), nullable=False),
    Column("client_id", String(CLIENT_ID_LENGTH), nullable=False),
    Column("customer_id", Integer, ForeignKey("customers.id"), nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("code_challenge", String(128), nullable=False),
    Column("scope", String(200), nullable=False),
    Column("resource", Text, nullable=True),
    # Indexed, as each expiry below, for the retention purge's range scans.
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
    Column("used_at", DateTime(timezone=True), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The tool versions the consent behind this code covered (migration 0014).
    Column("tool_snapshot", String(64), nullable=True),
)

# A family is every token descended from one authorization code; reuse of a spent refresh
# token, or replay of the code, revokes the whole family (RFC 9700 4.14).
token_families = Table(
    "token_families",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_key", String(63), nullable=False),
    Column("client_id", String(CLIENT_ID_LENGTH), nullable=False),
    Column("customer_id", Integer, ForeignKey("customers.id"), nullable=False),
    Column("scope", String(200), nullable=False),
    Column("resource", Text, nullable=True),
    Column("code_hash", String(64), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    # The tool versions its consent covered; NULL: a grant not held to versions (0014).
    Column("tool_snapshot", String(64), nullable=True),
    # A client's families: whether it was ever granted (store.retention).
    Index("ix_token_families_tenant_client", "tenant_key", "client_id"),
)

access_tokens = Table(
    "access_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("family_id", Integer, ForeignKey("token_families.id"), nullable=False, index=True),
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # When the token was first presented at the MCP endpoint (a client's "last used").
    Column("used_at", DateTime(timezone=True), nullable=True),
)

refresh_tokens = Table(
    "refresh_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("family_id", Integer, ForeignKey("token_families.id"), nullable=False, index=True),
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
    # When the token was spent: the retry window is counted from it.
    Column("used_at", DateTime(timezone=True), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The refresh token of the pair its rotation produced.
    Column("successor_hash", String(64), nullable=True),
    # The access token issued beside this one.
    Column("access_hash", String(64), nullable=True),
    # That pair in clear, sealed under the data keys, for the company's refresh retry window
    # only (oauth.kept_pairs); cleared when the family ends and by the purge after the window.
    Column("successor_sealed", Text, nullable=True),
)

# The few rows that keep a sealed pair: what the purge clears, through the partial index
# on their spending time that migration 0009 creates (declared there only: an index's
# dialect options here would load SQLAlchemy's PostgreSQL dialect into every worker).
KEPT_SUCCESSOR = refresh_tokens.c.successor_sealed.is_not(None)

# Security events, per company, for the operator (`frontdesk audit list KEY`). Written in
# the same transaction as the change they record, so the log and the state never disagree.
audit_events = Table(
    "audit_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_key", String(63), nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("event", String(40), nullable=False),
    Column("client_id", String(CLIENT_ID_LENGTH), nullable=True),
    Column("family_id", Integer, nullable=True),
    Column("detail", JsonDocument, nullable=False),
    Index("ix_audit_events_tenant_time", "tenant_key", "occurred_at"),
    # Across companies, for the retention purge (store.retention).
    Index("ix_audit_events_occurred_at", "occurred_at"),
)

# Keys for the admin API (migration 0010): only their SHA-256; ``tenant_key`` NULL for an
# operator key, which manages every company.
admin_keys = Table(
    "admin_keys",
    metadata,
    Column("key_id", String(32), primary_key=True),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("tenant_key", String(63), nullable=True, index=True),
    Column("name", String(100), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True), nullable=True),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
)

# How each company's tools are used, rolled up by the hour (migration 0011). A row per
# company, tool, hour, outcome (``ok`` or an error kind) and caller kind; latencies counted
# in fixed buckets, one integer column each (``LATENCY_BUCKETS``: at most each bound, then
# over the last), so that concurrent flushes add them in the upsert itself and percentiles
# over any range are read from the sums of the buckets (frontdesk.usage).
LATENCY_BOUNDS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
LATENCY_BUCKETS = (
    *(f"latency_le_{bound}ms" for bound in LATENCY_BOUNDS_MS),
    f"latency_over_{LATENCY_BOUNDS_MS[-1]}ms",
)
tool_usage = Table(
    "tool_usage",
    metadata,
    Column("tenant_key", String(63), primary_key=True),
    Column("tool", String(128), primary_key=True),
    Column("hour", DateTime(timezone=True), primary_key=True),
    Column("outcome", String(32), primary_key=True),
    Column("signed_in", Boolean, primary_key=True),
    Column("calls", Integer, nullable=False),
    Column("latency_ms_sum", Float, nullable=False),
    *(Column(name, Integer, nullable=False, server_default="0") for name in LATENCY_BUCKETS),
    Index("ix_tool_usage_tenant_hour", "tenant_key", "hour"),
    # Across companies, for the retention purge (store.retention).
    Index("ix_tool_usage_hour", "hour"),
)

# Which customers called which tool in which hour: distinct customers over any range.
tool_usage_customers = Table(
    "tool_usage_customers",
    metadata,
    Column("tenant_key", String(63), primary_key=True),
    Column("tool", String(128), primary_key=True),
    Column("hour", DateTime(timezone=True), primary_key=True),
    Column(
        "customer_id", Integer, ForeignKey("customers.id", ondelete="CASCADE"), primary_key=True
    ),
    Index("ix_tool_usage_customers_hour", "hour"),
    # A customer's deletion cascades here: without it, each would scan the table.
    Index("ix_tool_usage_customers_customer", "customer_id"),
)

# Each company's keys for the JWTs its APIs receive (migration 0012): the public JWK served
# at its jwks_uri, the private one sealed under the data keys. The newest unretired key
# signs; a retired one is still published for the overlap after ``retired_at``.
signing_keys = Table(
    "signing_keys",
    metadata,
    Column("kid", String(64), primary_key=True),
    Column("tenant_key", String(63), nullable=False, index=True),
    Column("algorithm", String(16), nullable=False),
    Column("public_jwk", JsonDocument, nullable=False),
    Column("private_sealed", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("retired_at", DateTime(timezone=True), nullable=True),
    # One active key per company: migration 0012's partial unique index
    # uq_signing_keys_one_active, on which instances that make a company's first key at once
    # race (store.signing_keys). Not declared here: its PostgreSQL form would load that
    # dialect into every worker, SQLite ones too.
)

# Identity Assertion JWT Authorization Grants spent at the token endpoint (migration 0013,
# store.assertion_grants): a SHA-256 of the issuer and ``jti`` only, never the assertion.
# The primary key refuses a replay on every instance; a row goes once the assertion has
# expired (store.retention).
identity_assertions = Table(
    "identity_assertions",
    metadata,
    Column("tenant_key", String(63), primary_key=True),
    Column("assertion_hash", String(64), primary_key=True),
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
)

# Tool change control (migration 0014, companies.tool_versions): each version of each tool
# as first seen, with the document its version hashes (to judge a later change), and the
# sets of versions consents covered, named by their hash (``tool_snapshot`` above).
tool_versions = Table(
    "tool_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_key", String(63), nullable=False),
    Column("tool", String(128), nullable=False),
    Column("version", String(64), nullable=False),
    Column("definition_hash", String(64), nullable=False),
    Column("document", JsonDocument, nullable=False),
    Column("first_seen_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("tenant_key", "tool", "version", "definition_hash"),
)

tool_snapshots = Table(
    "tool_snapshots",
    metadata,
    Column("tenant_key", String(63), primary_key=True),
    Column("snapshot", String(64), primary_key=True),
    Column("versions", JsonDocument, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
