"""Every error the MCP endpoint answers with, raised deep and rendered in ``endpoint``.

    RpcError                     one reply's error object; the HTTP status stays 200
    ├── ParseError               -32700  400  the body is not JSON
    ├── InvalidRequest           -32600  400  JSON, but not JSON-RPC the contract admits
    ├── MethodNotFound           -32601       no such method
    ├── InvalidParams            -32602       params of the wrong shape
    ├── ResourceNotFound         -32002       resources/read of an unknown URI
    ├── SignInRequired           -32003       a personal resource or prompt, as a guest
    ├── ProviderFailed           -32603       a resource or prompt provider failed
    ├── HeaderMismatch           -32020  400  2026-07-28: a routing header disagrees with the body
    ├── MissingClientCapability  -32021  400  the request needs a client capability not declared
    └── EndpointError                         refuses the whole HTTP request
        ├── UnsupportedVersion   -32022  400  MCP-Protocol-Version we do not speak
        ├── BodyTooLarge         -32600  413  over 256 KB
        ├── Unauthorized         -32003  401  a token that cannot be accepted
        ├── NoActiveCompany      -32004  404  nobody serves this tenant key here
        ├── SessionUnknown       -32001  404  call initialize again
        ├── RateLimited          -32005  429  too many requests from this caller
        └── ServiceUnavailable   -32000  503  the database cannot be reached; retry

Each class carries its JSON-RPC code (and HTTP status), so errors can be checked
without HTTP. A 2026-07-28 request answered with one error takes its status from the code
instead (``revisions/r2026_07_28.STATUS_BY_CODE``).
"""

from __future__ import annotations

from typing import Any, ClassVar

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVICE_UNAVAILABLE = -32000
SESSION_UNKNOWN = -32001
RESOURCE_NOT_FOUND = -32002
UNAUTHORIZED = -32003
NO_ACTIVE_COMPANY = -32004
RATE_LIMITED = -32005
# Defined by MCP 2026-07-28 (schema: HeaderMismatchError, MissingRequiredClientCapabilityError,
# UnsupportedProtocolVersionError).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


class RpcError(Exception):
    """An error reply to one JSON-RPC request."""

    code: ClassVar[int] = INTERNAL_ERROR
    status: ClassVar[int] = 200

    def __init__(
        self, message: str, *, data: Any = None, request_id: str | int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.request_id = request_id

    def to_error_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(RpcError):
    """The body is not JSON."""

    code = PARSE_ERROR
    status = 400


class InvalidRequest(RpcError):
    """The body is JSON, but not a JSON-RPC request or batch the contract admits."""

    code = INVALID_REQUEST
    status = 400


class MethodNotFound(RpcError):
    """The method is not one this server offers."""

    code = METHOD_NOT_FOUND


class InvalidParams(RpcError):
    """The method's params are missing or of the wrong shape."""

    code = INVALID_PARAMS


class ResourceNotFound(RpcError):
    """No resource has the URI asked for."""

    code = RESOURCE_NOT_FOUND


class SignInRequired(RpcError):
    """A personal resource or prompt asked for by a guest."""

    code = UNAUTHORIZED


class ProviderFailed(RpcError):
    """A resource or prompt provider failed or timed out; the detail is in our log."""

    code = INTERNAL_ERROR


class HeaderMismatch(RpcError):
    """MCP 2026-07-28: a routing header (``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name``) is missing, repeated, or says something other than the body."""

    code = HEADER_MISMATCH
    status = 400


class MissingClientCapability(RpcError):
    """Serving the request needs a client capability the client did not declare (MCP
    2026-07-28: ``data.requiredCapabilities`` names them, as a ``ClientCapabilities``
    object); to a 2025 client, which can never be asked, the message alone."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    status = 400


class EndpointError(RpcError):
    """Refuses the whole HTTP request, with its own status and headers."""

    def headers(self) -> dict[str, str]:
        return {}


class UnsupportedVersion(EndpointError):
    """The MCP-Protocol-Version header names a version this server does not speak; the
    data names the versions it does and echoes the one asked for (MCP 2026-07-28)."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    status = 400


class BodyTooLarge(EndpointError):
    """The body is over the contract's 256 KB."""

    code = INVALID_REQUEST
    status = 413


class Unauthorized(EndpointError):
    """A bearer token was sent that this company cannot accept."""

    code = UNAUTHORIZED
    status = 401

    def __init__(self, message: str, *, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge

    def headers(self) -> dict[str, str]:
        return {"www-authenticate": self.challenge}


class NoActiveCompany(EndpointError):
    """No active company of this region has the tenant key."""

    code = NO_ACTIVE_COMPANY
    status = 404


class SessionUnknown(EndpointError):
    """The Mcp-Session-Id is not one this service issued for this company, or has expired."""

    code = SESSION_UNKNOWN
    status = 404


class RateLimited(EndpointError):
    """Too many requests from this caller; try again after ``retry_after`` seconds."""

    code = RATE_LIMITED
    status = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many requests; retry after {retry_after} seconds")
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"retry-after": str(self.retry_after)}


class ServiceUnavailable(EndpointError):
    """The database cannot be reached right now; the client should retry shortly."""

    code = SERVICE_UNAVAILABLE
    status = 503

    def headers(self) -> dict[str, str]:
        return {"retry-after": "1"}
