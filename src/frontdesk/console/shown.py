"""What the console's pages show of what is stored: a tool of the definition, a client, a
grant, an audit event, the customer sign-in's settings; times in UTC, to the minute."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from frontdesk.store.admin import ClientRow, GrantRow
from frontdesk.store.audit import AuditEvent

# MCP ToolAnnotations hints, as the tools page names them, and their values when a
# company says nothing (MCP 2025-06-18, ``ToolAnnotations``).
HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open world",
}
HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


def when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%d %b %Y, %H:%M UTC")


def tool_row(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool of the stored definition (its JSON, annotations by their MCP names)."""
    annotations = tool.get("annotations") or {}
    given = {hint: annotations.get(hint) for hint in HINTS}
    effective = {
        hint: HINT_DEFAULTS[hint] if value is None else value for hint, value in given.items()
    }
    return {
        "name": tool["name"],
        "title": tool.get("title"),
        "description": tool["description"],
        "access": tool.get("access", "public"),
        # The scope of its own a grant must hold to reach it (companies.tool_scopes).
        "scope": tool.get("scope"),
        "enabled": tool.get("enabled", True),
        # The hints the company set to true, as the table lists them.
        "hints": [label for hint, label in HINTS.items() if given[hint] is True],
        # Every hint's effective value, as the edit form starts from.
        "effective": effective,
    }


def client_row(client: ClientRow) -> dict[str, Any]:
    return {
        "client_id": client.client_id,
        "client_name": client.client_name,
        "created_at": when(client.created_at),
        "live_grants": client.live_grants,
    }


def grant_row(grant: GrantRow) -> dict[str, Any]:
    return {
        "family_id": grant.family_id,
        "client_id": grant.client_id,
        "subject": grant.subject,
        "email": grant.email,
        "scope": grant.scope,
        "created_at": when(grant.created_at),
        "revoked_at": when(grant.revoked_at),
        "last_used_at": when(grant.last_used_at),
    }


def audit_row(event: AuditEvent) -> dict[str, Any]:
    return {
        "occurred_at": when(event.occurred_at),
        "event": event.event,
        "client_id": event.client_id,
        "family_id": event.family_id,
        # A list (the tools an import added) as the words it holds.
        "detail": {
            key: ", ".join(map(str, value)) if isinstance(value, list) else value
            for key, value in event.detail.items()
        },
    }


def signin_summary(signin: dict[str, Any] | None) -> dict[str, Any] | None:
    """The customer sign-in's login and token lifetimes (never its secrets)."""
    if signin is None:
        return None
    login = signin["login"]
    return {
        "login": {"type": login["type"], "issuer": login.get("issuer")},
        "access_token_minutes": signin.get("access_token_minutes", 60),
        "refresh_token_days": signin.get("refresh_token_days", 30),
        # The issuers whose ID-JAGs the token endpoint accepts (companies.enterprise_providers).
        "enterprise_issuers": [item["issuer"] for item in signin.get("enterprise_providers", [])],
    }
