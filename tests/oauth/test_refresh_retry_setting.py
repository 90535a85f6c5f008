"""FRONTDESK_REFRESH_RETRY_SECONDS: the refresh retry window, bounded, 0 for none."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import ValidationError

from frontdesk.config import Settings


def test_the_window_is_a_minute_unless_set(make_settings: Callable[..., Settings]) -> None:
    """By default a lost answer may be retried for 60 seconds after the rotation."""
    assert make_settings().refresh_retry_seconds == 60


def test_the_window_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """FRONTDESK_REFRESH_RETRY_SECONDS sets it; 0 turns retries off."""
    monkeypatch.setenv("FRONTDESK_REFRESH_RETRY_SECONDS", "0")
    assert Settings().refresh_retry_seconds == 0


@pytest.mark.parametrize("seconds", [-1, 601])
def test_a_window_out_of_bounds_stops_start_up(
    make_settings: Callable[..., Settings], seconds: int
) -> None:
    """Negative, or longer than 10 minutes: refused when the settings are read."""
    with pytest.raises(ValidationError):
        make_settings(refresh_retry_seconds=seconds)
