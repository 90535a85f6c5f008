"""Timestamps as stored: always UTC."""

from __future__ import annotations

from datetime import UTC, datetime


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything here is stored in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
