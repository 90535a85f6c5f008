"""The traffic of a dashboard run that wrk does not send: a trickle of what a live service
sees beside its tool calls, one step a second. Customers sign in over the OAuth flow and
refresh; now and then a spent refresh token comes back (reuse), a customer signs out
(revocation) or denies consent, a tenant key is mistyped; a company's backend fails and
answers late, more so during an incident in the middle of the run; and one caller goes
over a company's rate limit (bench/dashboard-companies.yaml)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

from benchkit.messages import HANDSHAKE_VERSION, Json, rpc
from benchkit.processes import BenchError
from benchkit.signin import SignedIn, deny_consent, sign_in

SIGNIN_TENANT = "benchauth"
SHOP = "benchshop"
LIMITED = "benchlimited"
# The share of the run, from its start, that is the backend incident.
INCIDENT = (0.45, 0.6)
# Per step: backend calls, and calls to the rate-limited company (30 a minute allowed).
FLAKY_CALLS = 6
SLOW_CALLS = 2
LIMITED_CALLS = 2


@dataclass
class Family:
    """A signed-in customer's tokens, and the refresh token the last refresh spent."""

    tokens: SignedIn
    spent: str | None = None


@dataclass
class SideTraffic:
    base_url: str
    client_id: str
    families: list[Family] = field(default_factory=list)
    customers: int = 0
    steps: int = 0
    # Seeded: every run draws the same picture for the same timing.
    chance: random.Random = field(default_factory=lambda: random.Random(21))  # noqa: S311

    def step(self, client: httpx.Client, progress: float) -> None:
        """One second's worth, ``progress`` (0-1) into the run."""
        self.steps += 1
        step = self.steps
        incident = INCIDENT[0] <= progress < INCIDENT[1]
        for _ in range(FLAKY_CALLS):
            fail = self.chance.random() < (0.4 if incident else 0.03)
            self._call(client, SHOP, "flaky", {"fail": fail})
        for _ in range(SLOW_CALLS):
            late = incident and self.chance.random() < 0.5
            seconds = 0.5 if late else self.chance.uniform(0.01, 0.08)
            self._call(client, SHOP, "slow", {"seconds": seconds})
        for _ in range(LIMITED_CALLS):
            self._call(client, LIMITED, "echo", {"text": "hello"}, allowed=(200, 429))
        if step % 5 == 1:
            self.customers += 1
            email = f"dashboard{self.customers}@example.com"
            signed_in = sign_in(self.base_url, SIGNIN_TENANT, email, self.client_id)
            self.families.append(Family(signed_in))
        if step % 2 == 0 and self.families:
            self._refresh(client, self.families[step % len(self.families)])
        if step % 17 == 0:
            self._reuse(client)
        if step % 13 == 0 and len(self.families) > 1:
            self._revoke(client, self.families.pop(0))
        if step % 11 == 0:
            deny_consent(self.base_url, SIGNIN_TENANT, self.client_id)
        if step % 7 == 0:
            self._call(client, "no-such-company", "echo", {"text": "hello"}, allowed=(404,))

    def _call(
        self,
        client: httpx.Client,
        tenant: str,
        tool: str,
        arguments: Json,
        allowed: tuple[int, ...] = (200,),
    ) -> None:
        response = client.post(
            f"{self.base_url}/v1/{tenant}/mcp",
            json=rpc("tools/call", {"name": tool, "arguments": arguments}),
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": HANDSHAKE_VERSION,
            },
        )
        if response.status_code not in allowed:
            raise BenchError(f"{tenant} {tool}: HTTP {response.status_code}: {response.text}")

    def _token(self, client: httpx.Client, form: dict[str, str]) -> httpx.Response:
        form = {"client_id": self.client_id, **form}
        return client.post(f"{self.base_url}/v1/{SIGNIN_TENANT}/oauth/token", data=form)

    def _refresh(self, client: httpx.Client, family: Family) -> None:
        token = family.tokens.refresh_token
        response = self._token(client, {"grant_type": "refresh_token", "refresh_token": token})
        if response.status_code != 200:
            raise BenchError(f"refresh: HTTP {response.status_code}: {response.text}")
        body = response.json()
        family.tokens = SignedIn(self.client_id, body["access_token"], body["refresh_token"], 0.0)
        family.spent = token

    def _reuse(self, client: httpx.Client) -> None:
        """A spent refresh token sent again: the service ends that family."""
        family = next((f for f in self.families if f.spent is not None), None)
        if family is None or family.spent is None:
            return
        response = self._token(
            client, {"grant_type": "refresh_token", "refresh_token": family.spent}
        )
        if response.status_code != 400:
            raise BenchError(f"reuse: HTTP {response.status_code}: {response.text}")
        self.families.remove(family)

    def _revoke(self, client: httpx.Client, family: Family) -> None:
        response = client.post(
            f"{self.base_url}/v1/{SIGNIN_TENANT}/oauth/revoke",
            data={"token": family.tokens.refresh_token, "client_id": self.client_id},
        )
        if response.status_code != 200:
            raise BenchError(f"revoke: HTTP {response.status_code}: {response.text}")
