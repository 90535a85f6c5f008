"""The sealed sign-in flow: signed, expiring, bound to one company and one browser."""

from __future__ import annotations

import dataclasses
import time

import pytest

from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import FLOW_TTL_SECONDS, Flow, FlowSigner
from frontdesk.sealing.signing import Signer, b64decode

KEY = "flow-test-secret-key-0123456789-abcdefghij"
OLD_KEY = "flow-test-old-secret-key-0123456789-abcdef"


COOKIE = "the-browsers-cookie-value-0123456789"


def a_flow(**changes: object) -> Flow:
    flow = Flow(
        tenant_key="initech",
        client_id="fdc_abc",
        redirect_uri="http://127.0.0.1:33418/callback",
        state="xyz",
        code_challenge="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        scope="profile email",
        resource=None,
        binding=FlowSigner([KEY]).binding_of(COOKIE),
    )
    return dataclasses.replace(flow, **changes)  # type: ignore[arg-type]


def test_a_sealed_flow_opens_in_the_browser_it_is_bound_to() -> None:
    """Seal then open with the matching cookie gives back the same flow."""
    signer = FlowSigner([KEY])
    flow = a_flow()
    assert signer.open(signer.seal(flow), COOKIE, "initech") == flow


@pytest.mark.parametrize("cookie", [None, "", "another-browsers-cookie"])
def test_a_flow_without_its_browsers_cookie_is_refused(cookie: str | None) -> None:
    """No cookie, or another nonce: the 400 page."""
    signer = FlowSigner([KEY])
    sealed = signer.seal(a_flow())
    with pytest.raises(AuthorizePage) as refused:
        signer.open(sealed, cookie, "initech")
    assert refused.value.status == 400


def test_a_flow_of_another_company_is_refused() -> None:
    """initech's flow opened as hooli's: refused."""
    signer = FlowSigner([KEY])
    flow = a_flow()
    with pytest.raises(AuthorizePage):
        signer.open(signer.seal(flow), COOKIE, "hooli")


@pytest.mark.parametrize("sealed", [None, "", "garbage", "a.b", "x" * 5000])
def test_a_missing_or_malformed_flow_is_refused(sealed: str | None) -> None:
    """Anything that is not a sealed flow: refused, never raised as another error."""
    with pytest.raises(AuthorizePage):
        FlowSigner([KEY]).open(sealed, "nonce", "initech")


def test_a_flow_sealed_with_an_unknown_key_is_refused() -> None:
    """A flow sealed by another deployment's key does not open here."""
    flow = a_flow()
    sealed = FlowSigner([OLD_KEY]).seal(flow)
    with pytest.raises(AuthorizePage):
        FlowSigner([KEY]).open(sealed, COOKIE, "initech")


def test_a_flow_sealed_with_a_rotated_out_key_still_opens() -> None:
    """During key rotation the old key still verifies: sign-ins in progress survive."""
    flow = a_flow()
    sealed = FlowSigner([OLD_KEY]).seal(flow)
    assert FlowSigner([KEY, OLD_KEY]).open(sealed, COOKIE, "initech") == flow


def test_an_expired_flow_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its lifetime the flow no longer opens."""
    signer = FlowSigner([KEY])
    flow = a_flow()
    sealed = signer.seal(flow)
    later = time.time() + FLOW_TTL_SECONDS + 1
    monkeypatch.setattr("frontdesk.sealing.signing.time.time", lambda: later)
    with pytest.raises(AuthorizePage):
        signer.open(sealed, COOKIE, "initech")


def test_a_value_signed_for_another_purpose_is_not_a_flow() -> None:
    """The same payload signed under another purpose (a session id) is refused."""
    flow = a_flow()
    payload = dataclasses.asdict(flow)
    elsewhere = Signer([KEY], "mcp-session/v1").sign(payload, 60)
    with pytest.raises(AuthorizePage):
        FlowSigner([KEY]).open(elsewhere, COOKIE, "initech")


def test_a_sealed_value_with_extra_fields_is_refused() -> None:
    """A validly signed payload that is not exactly a flow is refused, not half-read."""
    flow = a_flow()
    payload = {**dataclasses.asdict(flow), "admin": True}
    sealed = Signer([KEY], "signin-flow/v1").sign(payload, 60)
    with pytest.raises(AuthorizePage):
        FlowSigner([KEY]).open(sealed, COOKIE, "initech")


def test_the_login_secret_is_stable_per_flow_and_never_in_the_state() -> None:
    """The connector secret depends on the flow's binding and key, and stays server-side."""
    signer = FlowSigner([KEY])
    flow, other = a_flow(), a_flow(binding=signer.new_binding()[1])
    sealed = signer.seal(flow)
    attempt = signer.attempt(flow, sealed, "http://cb")
    assert attempt.state == sealed
    assert attempt.secret == signer.attempt(flow, sealed, "http://cb").secret
    assert attempt.secret != signer.attempt(other, signer.seal(other), "http://cb").secret
    assert attempt.secret != FlowSigner([OLD_KEY]).attempt(flow, sealed, "http://cb").secret
    assert attempt.secret.hex() not in sealed
    assert len(attempt.secret) == 32


def test_the_state_the_identity_provider_sees_does_not_hold_the_cookie() -> None:
    """The sealed flow travels as the provider's state; the browser's cookie is not in it,
    so whoever reads the state cannot pose as the customer's browser."""
    signer = FlowSigner([KEY])
    cookie, binding = signer.new_binding()
    sealed = signer.seal(a_flow(binding=binding))
    assert cookie not in sealed
    assert cookie not in b64decode(sealed.partition(".")[0]).decode()
    assert signer.open(sealed, cookie, "initech").binding == binding
    with pytest.raises(AuthorizePage):
        signer.open(sealed, binding, "initech")
