"""Constant-time comparisons (DESIGN: PKCE and signatures use hmac.compare_digest; tokens
are found by their digest in SQL). Every path that compares a secret is watched calling
hmac.compare_digest, on the right values and on wrong ones; and no ``==`` on a secret is
left anywhere in src."""

from __future__ import annotations

import ast
import hmac
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from frontdesk.oauth import pkce
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow, FlowSigner
from frontdesk.protocol.sessions import SessionSigner
from frontdesk.sealing.signing import Signer, b64decode
from frontdesk.tools import signature
from tests.conftest import ROOT, TEST_SECRET
from tests.oauth import flows

pytestmark = pytest.mark.anyio

Compared = list[tuple[Any, Any]]


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> Compared:
    """Every pair hmac.compare_digest is asked about, from anywhere, while the test runs."""
    pairs: Compared = []
    real: Callable[[Any, Any], bool] = hmac.compare_digest

    def recording(a: Any, b: Any) -> bool:
        pairs.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    return pairs


def text(value: Any) -> str:
    # A MAC is compared as raw bytes: not UTF-8, and never equal to an ASCII text.
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def saw(pairs: Compared, first: str, second: str) -> bool:
    return any({text(a), text(b)} == {first, second} for a, b in pairs)


def saw_mac(pairs: Compared, mac: str) -> bool:
    """A signed value's MAC (its text after the last dot) reached compare_digest, as the
    bytes it encodes (itsdangerous compares the decoded MAC)."""
    return any(b64decode(mac) in (a, b) for a, b in pairs)


def test_pkce_verification_compares_in_constant_time(compared: Compared) -> None:
    """The right verifier and a wrong one of the right shape both reach compare_digest."""
    right, wrong = flows.Pkce.new(), flows.Pkce.new()
    assert pkce.verify(right.verifier, right.challenge)
    assert saw(compared, pkce.s256(right.verifier), right.challenge)
    assert not pkce.verify(wrong.verifier, right.challenge)
    assert saw(compared, pkce.s256(wrong.verifier), right.challenge)


def test_signed_values_compare_their_mac_in_constant_time(compared: Compared) -> None:
    """A signed value's MAC, good or forged, is checked with compare_digest."""
    signer = Signer([TEST_SECRET], "test")
    value = signer.sign({"a": 1}, 60)
    body, _, mac = value.partition(".")
    assert signer.verify(value) is not None
    assert saw_mac(compared, mac)
    forged = mac[:-2] + ("AA" if not mac.endswith("AA") else "BB")
    assert signer.verify(f"{body}.{forged}") is None
    assert saw_mac(compared, forged)


def test_session_ids_compare_in_constant_time(compared: Compared) -> None:
    """Session verification, under every listed key, goes through compare_digest."""
    sessions = SessionSigner(["new-key-that-is-long-enough-0000000000", TEST_SECRET], 60)
    old = SessionSigner([TEST_SECRET], 60).issue("acme", "2025-06-18")
    assert sessions.verify(old, "acme") is not None
    mac = b64decode(old.rpartition(".")[2])
    # Checked against the new key first, then the old: both through compare_digest.
    assert sum(mac in (a, b) for a, b in compared) >= 2


def test_flows_compare_mac_and_browser_binding_in_constant_time(compared: Compared) -> None:
    """Opening a sealed flow checks its MAC and the cookie's binding with compare_digest."""
    signer = FlowSigner([TEST_SECRET])
    nonce, binding = signer.new_binding()
    flow = Flow("initech", "fdc_x", flows.REDIRECT_URI, None, "A" * 43, "email", None, binding)
    sealed = signer.seal(flow)
    assert signer.open(sealed, nonce, "initech") == flow
    assert saw(compared, binding, binding)
    assert saw_mac(compared, sealed.rpartition(".")[2])
    compared.clear()
    with pytest.raises(AuthorizePage):
        signer.open(sealed, "x" * len(nonce), "initech")
    assert saw(compared, signer.binding_of("x" * len(nonce)), binding)


def test_backend_signatures_compare_in_constant_time(compared: Compared) -> None:
    """A backend's check of Frontdesk's signature uses compare_digest."""
    given = signature.signature("backend-secret", 1_800_000_000, b"{}")
    assert signature.verify("backend-secret", "1800000000", b"{}", given, 1_800_000_000)
    assert saw(compared, given, given)
    assert not signature.verify("backend-secret", "1800000000", b"{}", "v1=00", 1_800_000_000)
    assert saw(compared, given, "v1=00")


async def test_a_sign_in_over_http_compares_each_secret_in_constant_time(
    client: httpx.AsyncClient, compared: Compared
) -> None:
    """Nonce, verifier and session MAC all reach compare_digest in the running app."""
    signed_in = await flows.sign_in(client)
    nonce_checks = [pair for pair in compared if text(pair[0]) == text(pair[1])]
    assert len(nonce_checks) >= 2, "consent and login each check the browser's nonce"
    compared.clear()
    assert (await flows.exchange(client, signed_in)).status_code == 200
    assert saw(compared, pkce.s256(signed_in.pkce.verifier), signed_in.pkce.challenge)
    initialized = await flows.mcp(client, flows.rpc("initialize", {}))
    session_id = initialized.headers["mcp-session-id"]
    compared.clear()
    response = await client.post(
        "/v1/initech/mcp", json=flows.rpc("ping"), headers={"mcp-session-id": session_id}
    )
    assert response.status_code == 200
    assert saw_mac(compared, session_id.rpartition(".")[2])


# No == on secrets --------------------------------------------------------------------------

SECRET_NAME = re.compile(
    r"token|secret|verifier|signature|(^|_)mac($|_)|nonce|digest|challenge|password"
    r"|(^|_)hash($|_)|(^|_)code$|sealed|cookie|session_id",
    re.IGNORECASE,
)
# (file, comparison) -> why it is not a timing leak.
ALLOWED = {
    ("src/frontdesk/config.py", "key == DEV_SECRET_KEY"): (
        "a start-up check of the operator's keys against the published development key;"
        " no request reaches it"
    ),
    (
        "src/frontdesk/store/tool_versions.py",
        "(entry.tool, entry.version, entry.definition_hash) not in known",
    ): (
        "a tool definition's hash is what every client of the company is shown, not a secret;"
        " the set lookup only finds which versions are already recorded"
    ),
}


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_literal(item) for item in node.elts)
    return False


def _mentioned(node: ast.AST) -> Iterator[str]:
    """Names an operand reads, skipping nested ``is None`` tests (booleans, not secrets)."""
    if isinstance(node, ast.Compare) and all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
        return
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        yield str(node.slice.value)
    for child in ast.iter_child_nodes(node):
        yield from _mentioned(child)


def _column_aliases(tree: ast.AST) -> set[str]:
    """Names bound to a SQLAlchemy ``table.c``: comparisons on them are SQL, run by the
    database on digests, not Python comparing secrets."""
    return {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "c"
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _sql(node: ast.expr, aliases: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            owner = sub.value
            if isinstance(owner, ast.Attribute) and owner.attr == "c":
                return True
            if isinstance(owner, ast.Name) and owner.id in aliases:
                return True
    return False


def secret_comparisons(source: str) -> Iterator[tuple[int, str]]:
    """Each ``==``, ``!=``, ``in`` or ``not in`` in Python code with a secret on one side
    and, on the other, anything but a literal."""
    tree = ast.parse(source)
    aliases = _column_aliases(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        if any(_literal(operand) for operand in operands):
            continue
        if any(_sql(operand, aliases) for operand in operands):
            continue
        if any(SECRET_NAME.search(name) for operand in operands for name in _mentioned(operand)):
            yield node.lineno, ast.unparse(node)


def test_the_scan_finds_a_secret_compared_with_equals() -> None:
    """Control: the scan flags ``==`` on a token, a MAC or a verifier, not SQL or literals."""
    source = (
        "def check(token, expected, row, table, verifier):\n"
        "    c = table.c\n"
        "    if token == expected: pass\n"
        "    if _mac(key, body) != mac: pass\n"
        "    if verifier in row: pass\n"
        "    if token == '': pass\n"
        "    if table.c.token_hash == token_hash: pass\n"
        "    if c.code_hash == code_hash: pass\n"
        "    if (secret is None) == (other is None): pass\n"
    )
    assert [line for line, _ in secret_comparisons(source)] == [3, 4, 5]


def test_no_secret_is_compared_with_equals_in_src() -> None:
    """Outside SQL and the allowlist, no Python comparison in src touches a secret."""
    found = {
        (str(path.relative_to(ROOT)), comparison)
        for path in sorted((ROOT / "src" / "frontdesk").rglob("*.py"))
        for _, comparison in secret_comparisons(path.read_text(encoding="utf-8"))
    }
    assert found - ALLOWED.keys() == set()
    # The allowlist holds no stale entries.
    assert ALLOWED.keys() <= found
