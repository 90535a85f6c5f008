"""The schema, in SQLAlchemy Core. Alembic migrations under ``migrations/`` create it."""

from __future__ import annotations

from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, String, Table
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData()

JsonDocument = JSON().with_variant(JSONB(), "postgresql")

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
