"""The protocol tests' JSON-RPC helpers: tests/support/jsonrpc.py, under the name modules
outside tests/protocol still import."""

from tests.support.jsonrpc import (
    ACME,
    JSON_HEADERS,
    Json,
    assert_envelope,
    call,
    error_of,
    notification,
    reply_to,
    request,
    tool_call,
    tool_text,
)

__all__ = [
    "ACME",
    "JSON_HEADERS",
    "Json",
    "assert_envelope",
    "call",
    "error_of",
    "notification",
    "reply_to",
    "request",
    "tool_call",
    "tool_text",
]
