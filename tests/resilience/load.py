"""Bounded load against a live service, with every answer judged and kept.

Each worker is one client: it sends MCP calls with a bearer token, or walks a chain of
refresh tokens, until it is stopped, its request budget is spent or its deadline passes.
An answer is ``ok``, a clean ``unavailable`` (the contract's 503: a JSON-RPC envelope with
-32000 on MCP, ``temporarily_unavailable`` at the token endpoint, each with Retry-After),
``cut`` (the connection failed after the test itself killed the process), or ``bad``:
anything else, a 500, a wrong shape, a dropped connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import anyio
import httpx

from tests.oauth.flows import FORM, Tokens, oauth_path, tool_call

Json = dict[str, Any]
TIMEOUT = httpx.Timeout(10.0)
SERVICE_UNAVAILABLE = -32000


class Outcome(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    CUT = "cut"
    BAD = "bad"


@dataclass(frozen=True, slots=True)
class Answer:
    sent: float
    at: float
    worker: str
    kind: str
    outcome: Outcome
    detail: str = ""


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _retry_after(response: httpx.Response) -> bool:
    value: str = response.headers.get("retry-after", "")
    return value.isdigit()


def judge_mcp(response: httpx.Response) -> tuple[Outcome, str]:
    """A tools/call answer: a successful result, the clean 503 envelope, or bad."""
    body = _json(response)
    if response.status_code == 200 and isinstance(body, dict):
        result = body.get("result")
        if isinstance(result, dict) and result.get("isError") is False:
            return Outcome.OK, ""
    if response.status_code == 503 and isinstance(body, dict) and _retry_after(response):
        error = body.get("error")
        if (
            body.get("jsonrpc") == "2.0"
            and "id" in body
            and isinstance(error, dict)
            and error.get("code") == SERVICE_UNAVAILABLE
            and isinstance(error.get("message"), str)
        ):
            return Outcome.UNAVAILABLE, ""
    return Outcome.BAD, f"MCP {response.status_code}: {response.text[:300]}"


def judge_token(response: httpx.Response) -> tuple[Outcome, str]:
    """A token endpoint answer: a new pair, the clean 503 OAuth error, or bad."""
    body = _json(response)
    if (
        response.status_code == 200
        and isinstance(body, dict)
        and isinstance(body.get("access_token"), str)
        and isinstance(body.get("refresh_token"), str)
    ):
        return Outcome.OK, ""
    if (
        response.status_code == 503
        and isinstance(body, dict)
        and body.get("error") == "temporarily_unavailable"
        and _retry_after(response)
    ):
        return Outcome.UNAVAILABLE, ""
    return Outcome.BAD, f"token {response.status_code}: {response.text[:300]}"


@dataclass
class Chain:
    """One client's token family as the client saw it: every pair it was given, in order."""

    client_id: str
    tenant: str
    pairs: list[tuple[str, str]]
    # Refresh tokens that bought a new pair (a 200), in order.
    spent: list[str] = field(default_factory=list)
    # A refresh sent whose answer never came (the process was killed under it).
    in_flight: str | None = None

    @classmethod
    def of(cls, tokens: Tokens) -> Chain:
        return cls(tokens.client_id, tokens.tenant, [(tokens.access, tokens.refresh)])

    @property
    def refresh_token(self) -> str:
        return self.pairs[-1][1]

    @property
    def access_tokens(self) -> list[str]:
        return [access for access, _ in self.pairs]


@dataclass
class Load:
    """Workers sharing one request budget and one deadline, and every answer they got."""

    base_url: str
    tenant: str
    max_requests: int
    seconds: float
    answers: list[Answer] = field(default_factory=list)
    # Connection failures from this moment on are the test's own doing (a SIGKILL).
    cut_from: float | None = None
    _stopped: anyio.Event = field(default_factory=anyio.Event)
    _deadline: float = 0.0

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.seconds

    def stop(self) -> None:
        self._stopped.set()

    @property
    def running(self) -> bool:
        return (
            not self._stopped.is_set()
            and len(self.answers) < self.max_requests
            and time.monotonic() < self._deadline
        )

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=TIMEOUT)

    def _note(
        self, sent: float, worker: str, kind: str, outcome: Outcome, detail: str = ""
    ) -> Outcome:
        self.answers.append(Answer(sent, time.monotonic(), worker, kind, outcome, detail))
        return outcome

    def _failed(self, sent: float, worker: str, kind: str, error: httpx.TransportError) -> Outcome:
        if self.cut_from is not None and time.monotonic() >= self.cut_from:
            return self._note(sent, worker, kind, Outcome.CUT, type(error).__name__)
        return self._note(sent, worker, kind, Outcome.BAD, f"{kind} dropped: {error!r}")

    async def call(self, client: httpx.AsyncClient, worker: str, access_token: str) -> Outcome:
        """One ``whoami`` with the bearer token: proves the token and the database."""
        sent = time.monotonic()
        try:
            response = await client.post(
                f"/v1/{self.tenant}/mcp",
                json=tool_call("whoami"),
                headers={"authorization": f"Bearer {access_token}"},
            )
        except httpx.TransportError as error:
            return self._failed(sent, worker, "mcp", error)
        return self._note(sent, worker, "mcp", *judge_mcp(response))

    async def mcp_worker(self, worker: str, access_token: str) -> None:
        async with self.client() as client:
            while self.running:
                if await self.call(client, worker, access_token) is Outcome.CUT:
                    return

    async def refresh_worker(self, worker: str, chain: Chain) -> None:
        """Refresh, use the new access token, repeat. After a 503 the same refresh token is
        sent again: nothing was spent, so it must still work."""
        async with self.client() as client:
            while self.running:
                refresh_token = chain.refresh_token
                chain.in_flight = refresh_token
                sent = time.monotonic()
                try:
                    response = await client.post(
                        oauth_path("token", chain.tenant),
                        data={
                            "grant_type": "refresh_token",
                            "client_id": chain.client_id,
                            "refresh_token": refresh_token,
                        },
                        headers=FORM,
                    )
                except httpx.TransportError as error:
                    if self._failed(sent, worker, "refresh", error) is Outcome.CUT:
                        return
                    chain.in_flight = None
                    continue
                chain.in_flight = None
                outcome, detail = judge_token(response)
                self._note(sent, worker, "refresh", outcome, detail)
                if outcome is Outcome.OK:
                    body = response.json()
                    chain.spent.append(refresh_token)
                    chain.pairs.append((body["access_token"], body["refresh_token"]))
                    if await self.call(client, worker, body["access_token"]) is Outcome.CUT:
                        return

    # Reading the answers ----------------------------------------------------------------

    def count(self, outcome: Outcome, kind: str | None = None) -> int:
        return sum(
            1
            for answer in self.answers
            if answer.outcome is outcome and (kind is None or answer.kind == kind)
        )

    def bad(self) -> list[Answer]:
        return [answer for answer in self.answers if answer.outcome is Outcome.BAD]

    def workers(self) -> set[str]:
        return {answer.worker for answer in self.answers}

    def oks_since(self, moment: float, worker: str) -> int:
        return sum(
            1
            for answer in self.answers
            if answer.worker == worker and answer.outcome is Outcome.OK and answer.at >= moment
        )

    def first_ok_since(self, moment: float, worker: str) -> float | None:
        for answer in self.answers:
            if answer.worker == worker and answer.outcome is Outcome.OK and answer.at >= moment:
                return answer.at
        return None

    def unavailable_seconds(self, kind: str | None = None) -> float:
        """From the first clean 503 (of this kind) to the last one."""
        moments = [
            answer.at
            for answer in self.answers
            if answer.outcome is Outcome.UNAVAILABLE and kind in (None, answer.kind)
        ]
        return max(moments) - min(moments) if moments else 0.0


async def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``condition()`` until it holds; fail with ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds:g}s")
        await anyio.sleep(0.02)
