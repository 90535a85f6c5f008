"""A small REST API of orders, described by an OpenAPI 3.1 document (and a 3.0 one), served
by uvicorn on loopback: the company API the OpenAPI import tests import and call.

Its operations: list orders (query and header parameters), read one (a public GET), place
one (a JSON body), cancel one (a DELETE that requires a bearer JWT, verified with PyJWT
against the company's published key set: handed over by the test, or fetched from its
jwks_uri with PyJWKClient, as an API gateway would). ``GET /broken``
answers 500 with a text body. Every request is recorded.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jwt
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

START_DEADLINE = 10.0
POLL_INTERVAL = 0.02

ORDERS_31: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Orders API", "version": "1.0.0"},
    "security": [{"bearer": []}],
    "paths": {
        "/orders": {
            "get": {
                "operationId": "listOrders",
                "tags": ["orders"],
                "summary": "List orders",
                "description": "The orders, newest first, optionally by status.",
                "security": [],
                "parameters": [
                    {"$ref": "#/components/parameters/Status"},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                    {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "The orders.",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/OrderList"}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "place order!",
                "tags": ["orders"],
                "summary": "Place an order",
                "security": [],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/NewOrder"}}
                    },
                },
                "responses": {
                    "201": {
                        "description": "Placed.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Order"}}
                        },
                    },
                    "422": {"description": "Refused."},
                },
            },
        },
        "/orders/{orderId}": {
            "parameters": [
                {"name": "orderId", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {
                "operationId": "getOrder",
                "summary": "Read one order",
                "security": [],
                "responses": {
                    "200": {
                        "description": "The order.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Order"}}
                        },
                    },
                    "404": {"description": "No such order."},
                },
            },
            "delete": {
                "operationId": "cancelOrder",
                "tags": ["admin"],
                "summary": "Cancel an order",
                "responses": {"204": {"description": "Cancelled."}},
            },
        },
        "/broken": {
            "get": {
                "operationId": "broken",
                "security": [],
                "responses": {"200": {"description": "Never."}},
            }
        },
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        "parameters": {
            "Status": {
                "name": "status",
                "in": "query",
                "description": "Only orders in this state.",
                "schema": {"$ref": "#/components/schemas/Status"},
            }
        },
        "schemas": {
            "Status": {"type": "string", "enum": ["open", "shipped", "cancelled"]},
            "NewOrder": {
                "type": "object",
                "required": ["item", "quantity"],
                "properties": {
                    "item": {"type": "string", "minLength": 1},
                    "quantity": {"type": "integer", "minimum": 1},
                    "note": {"type": ["string", "null"]},
                },
            },
            "Order": {
                "type": "object",
                "required": ["id", "item", "quantity", "status"],
                "properties": {
                    "id": {"type": "string"},
                    "item": {"type": "string"},
                    "quantity": {"type": "integer"},
                    "status": {"$ref": "#/components/schemas/Status"},
                    "note": {"type": ["string", "null"]},
                },
            },
            "OrderList": {
                "type": "object",
                "required": ["orders"],
                "properties": {
                    "orders": {"type": "array", "items": {"$ref": "#/components/schemas/Order"}},
                    "request_id": {"type": ["string", "null"]},
                },
            },
        },
    },
}

# The same API's read operations as an OpenAPI 3.0 document: nullable, boolean exclusive
# bounds, and a response defined in components.
ORDERS_30: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Orders API (3.0)", "version": "1.0.0"},
    "paths": {
        "/orders/{orderId}": {
            "get": {
                "operationId": "getOrder",
                "parameters": [
                    {
                        "name": "orderId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"$ref": "#/components/responses/OneOrder"}},
            }
        },
        "/orders": {
            "get": {
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
                    }
                ],
                "responses": {"200": {"description": "The orders."}},
            }
        },
    },
    "components": {
        "responses": {
            "OneOrder": {
                "description": "The order.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}},
            }
        },
        "schemas": {
            "Order": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "note": {"type": "string", "nullable": True, "example": "gift"},
                },
            }
        },
    },
}


@dataclass
class OrdersApi:
    base_url: str = ""
    # The key set the DELETE verifies JWTs with (given, or fetched from the company's
    # jwks_uri as an API gateway would), and the audience it expects.
    jwks: dict[str, Any] | None = None
    jwks_url: str | None = None
    audience: str = ""
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    received: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    verified_claims: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/orders", self._orders, methods=["GET", "POST"]),
                # :path, so an id holding an encoded slash still reaches the handler, which
                # records the path as it was sent.
                Route("/orders/{order_id:path}", self._order, methods=["GET", "DELETE"]),
                Route("/broken", self._broken, methods=["GET"]),
                # Its own description, for an import by URL; and two that are not one.
                Route("/openapi.json", self._document, methods=["GET"]),
                Route("/moved.json", self._moved, methods=["GET"]),
                Route("/huge.json", self._huge, methods=["GET"]),
            ]
        )

    async def _record(self, request: Request) -> bytes:
        body = await request.body()
        # As sent, before the server decoded it.
        raw: bytes = request.scope.get("raw_path") or request.url.path.encode()
        target = raw.decode("ascii") + (f"?{request.url.query}" if request.url.query else "")
        self.received.append((request.method, target, dict(request.headers), body))
        return body

    async def _orders(self, request: Request) -> Response:
        body = await self._record(request)
        if request.method == "POST":
            placed = _json(body)
            if not isinstance(placed, dict) or placed.get("quantity", 0) > 10:
                return JSONResponse({"message": "at most 10 of an item per order"}, 422)
            order = {"id": f"A-{len(self.orders) + 1}", "status": "open", **placed}
            self.orders[order["id"]] = order
            return JSONResponse(order, 201)
        status = request.query_params.get("status")
        listed = [o for o in self.orders.values() if status is None or o["status"] == status]
        limit = int(request.query_params.get("limit", "100"))
        return JSONResponse(
            {"orders": listed[:limit], "request_id": request.headers.get("x-request-id")}
        )

    async def _order(self, request: Request) -> Response:
        await self._record(request)
        order_id = request.path_params["order_id"]
        if request.method == "DELETE":
            refusal = self._refusal(request)
            if refusal is not None:
                return refusal
        order = self.orders.get(order_id)
        if order is None:
            return JSONResponse(
                {"type": "about:blank", "title": "Not Found", "detail": f"no order {order_id}"},
                404,
                media_type="application/problem+json",
            )
        if request.method == "DELETE":
            order["status"] = "cancelled"
            return Response(status_code=204)
        return JSONResponse(order)

    def _refusal(self, request: Request) -> Response | None:
        """401 unless the request carries a JWT that verifies against the key set."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return JSONResponse({"error": "a bearer token is required"}, 401)
        try:
            if self.jwks_url is not None:
                key = jwt.PyJWKClient(self.jwks_url, timeout=5).get_signing_key_from_jwt(token)
            else:
                assert self.jwks is not None, "the test gives a key set or its URL"
                key = jwt.PyJWKSet.from_dict(self.jwks)[jwt.get_unverified_header(token)["kid"]]
            claims = jwt.decode(
                token, key=key, algorithms=["ES256", "EdDSA"], audience=self.audience
            )
        except (jwt.PyJWTError, KeyError) as error:
            return JSONResponse({"error": f"the token does not verify: {error}"}, 401)
        self.verified_claims.append(claims)
        return None

    async def _document(self, _request: Request) -> Response:
        return JSONResponse(ORDERS_31)

    async def _moved(self, _request: Request) -> Response:
        return Response(status_code=302, headers={"location": "/openapi.json"})

    async def _huge(self, _request: Request) -> Response:
        # Past the 2 MiB an imported document may be.
        return Response(b" " * (2 * 1024 * 1024) + b"{}", media_type="application/json")

    async def _broken(self, request: Request) -> Response:
        await self._record(request)
        return PlainTextResponse("database\x07 unavailable\nretry later", 500)


def _json(body: bytes) -> Any:
    import json

    try:
        return json.loads(body)
    except ValueError:
        return None


@contextlib.contextmanager
def serve_orders_api() -> Iterator[OrdersApi]:
    """The orders API on a free loopback port, stopped on exit."""
    api = OrdersApi()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    api.base_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    config = uvicorn.Config(
        api.app(), loop="asyncio", lifespan="off", log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="orders-api", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + START_DEADLINE
        # uvicorn says it has started only through this flag.
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the orders API did not start within {START_DEADLINE:g}s")
            time.sleep(POLL_INTERVAL)
        yield api
    finally:
        server.should_exit = True
        thread.join(timeout=START_DEADLINE)
        listener.close()
