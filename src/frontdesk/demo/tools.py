"""The demo company's tools, served by the ``python`` provider."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontdesk.tools.provider import ToolCall, ToolError

PRODUCTS: tuple[dict[str, Any], ...] = (
    {
        "sku": "ETH-YIRG",
        "name": "Ethiopia Yirgacheffe",
        "roast": "light",
        "price_eur": 14.5,
        "notes": ["jasmine", "bergamot", "lemon"],
    },
    {
        "sku": "COL-HUIL",
        "name": "Colombia Huila",
        "roast": "medium",
        "price_eur": 12.0,
        "notes": ["caramel", "red apple", "cocoa"],
    },
    {
        "sku": "BRA-CERR",
        "name": "Brazil Cerrado",
        "roast": "medium-dark",
        "price_eur": 10.5,
        "notes": ["hazelnut", "milk chocolate"],
    },
    {
        "sku": "SUM-MAND",
        "name": "Sumatra Mandheling",
        "roast": "dark",
        "price_eur": 13.0,
        "notes": ["cedar", "dark chocolate", "spice"],
    },
)


async def echo(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    return str(arguments["text"])


async def search_products(arguments: Mapping[str, Any], _call: ToolCall) -> dict[str, Any]:
    query = str(arguments.get("query", "")).casefold()
    roast = arguments.get("roast")
    found = [
        product
        for product in PRODUCTS
        if (
            not query
            or query in product["name"].casefold()
            or any(query in note for note in product["notes"])
        )
        and (roast is None or product["roast"] == roast)
    ]
    return {"products": found, "count": len(found)}


async def order_status(arguments: Mapping[str, Any], call: ToolCall) -> dict[str, Any]:
    customer = call.customer
    if customer is None:
        raise ToolError("Sign in to see your orders.")
    order_id = str(arguments.get("order_id", "latest"))
    if order_id not in ("latest", "A-1001"):
        raise ToolError(f"No order {order_id} on your account.")
    return {
        "order_id": "A-1001",
        "customer": customer.email or customer.subject,
        "status": "shipped",
        "items": [{"sku": "COL-HUIL", "quantity": 2}],
    }
