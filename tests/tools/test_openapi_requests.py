"""The request an openapi tool's call becomes (tools.openapi.request_for), for any argument a
caller can send: a path argument stays in its one segment and reads back as sent, a query
argument round-trips, a header argument never splits the request's head."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from frontdesk.tools.openapi import Operation, Parameter, request_for
from frontdesk.tools.provider import ToolError

OPERATION = Operation(
    base_url="https://api.acme.example/v1",
    method="GET",
    path="/orders/{orderId}/lines",
    parameters=(
        Parameter("orderId", "path", "orderId"),
        Parameter("q", "query", "q"),
        Parameter("X-Trace", "header", "trace"),
    ),
    body=False,
    audience="https://api.acme.example/v1",
)


@given(order_id=st.text(min_size=1), q=st.text())
@example(order_id="..", q="")
@example(order_id=".", q="")
@example(order_id="../../admin?x=1#y", q="&q=2")
def test_a_path_argument_stays_in_its_segment_and_a_query_round_trips(
    order_id: str, q: str
) -> None:
    url, _, _ = request_for(OPERATION, "lines", {"orderId": order_id, "q": q})
    # As httpx sends it: dot segments removed, the rest as written.
    sent = httpx.URL(url)
    path = sent.raw_path.decode("ascii").partition("?")[0]
    segments = path.split("/")
    assert segments[:3] == ["", "v1", "orders"]
    assert segments[4:] == ["lines"]
    assert unquote(segments[3]) == order_id
    assert parse_qsl(urlsplit(url).query, keep_blank_values=True) == [("q", q)]


@given(trace=st.text())
def test_a_header_argument_is_sent_whole_or_refused(trace: str) -> None:
    arguments = {"orderId": "A-1", "trace": trace}
    if any(character in trace for character in "\r\n\0"):
        with pytest.raises(ToolError, match="cannot hold a line break"):
            request_for(OPERATION, "lines", arguments)
        return
    _, headers, _ = request_for(OPERATION, "lines", arguments)
    assert headers == {"X-Trace": trace}


def test_an_array_query_argument_repeats_its_name_and_values_are_written_as_json() -> None:
    url, _, _ = request_for(
        OPERATION, "lines", {"orderId": 7, "q": ["a b", True, 1.5, None, {"k": 1}]}
    )
    assert url == (
        "https://api.acme.example/v1/orders/7/lines?q=a%20b&q=true&q=1.5&q=%7B%22k%22%3A1%7D"
    )
