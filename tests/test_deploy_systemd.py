"""deploy/systemd/frontdesk.service: systemd accepts it, and what it runs is a valid
``frontdesk`` command line, listening where deploy/nginx/frontdesk.conf sends requests."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from frontdesk.cli.main import main
from frontdesk.server.http_server import SHUTDOWN_GRACE_SECONDS, STOP_MARGIN_SECONDS
from tests.conftest import ROOT

UNIT = ROOT / "deploy" / "systemd" / "frontdesk.service"
NGINX_SITE = ROOT / "deploy" / "nginx" / "frontdesk.conf"
INSTALLED = "/opt/frontdesk/.venv/bin/frontdesk"


def unit_entries() -> dict[str, dict[str, list[str]]]:
    """Section → key → every value given (systemd lets some keys repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{line!r} is outside any section"
        key, separator, value = line.partition("=")
        assert separator, f"{line!r} is not key=value"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def service(key: str) -> str:
    values = unit_entries()["Service"].get(key)
    assert values is not None, f"[Service] sets no {key}"
    assert len(values) == 1, f"[Service] sets {key} {len(values)} times"
    return values[0]


def seconds(value: str) -> float:
    matched = re.fullmatch(r"(\d+)\s*(s|min)?", value)
    assert matched is not None, f"{value!r} is not a duration in s or min"
    return int(matched[1]) * (60 if matched[2] == "min" else 1)


def parsed_command(line: str) -> tuple[str, dict[str, object]]:
    """The subcommand and its options, as the real CLI parses them (nothing is run)."""
    program, *arguments = shlex.split(line)
    assert program == INSTALLED
    context = main.make_context("frontdesk", list(arguments))
    name, command, rest = main.resolve_command(context, list(arguments))
    assert name is not None
    assert command is not None
    parsed = command.make_context(name, rest, parent=context)
    return name, parsed.params


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    """``systemd-analyze verify`` finds no unknown key, bad value or missing program (the
    installed path stands for this checkout's command)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed; the unit is still parsed below")
    command = Path(sys.executable).with_name("frontdesk")
    if not command.exists():
        pytest.skip(f"{command} is missing (the project is not installed in .venv)")
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace(INSTALLED, str(command)))
    checked = subprocess.run(
        [analyze, "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr.strip() == "", checked.stderr


def test_the_service_runs_frontdesk_serve_on_the_proxys_upstream() -> None:
    name, options = parsed_command(service("ExecStart"))
    assert name == "serve"
    upstream = re.search(r"server (\S+):(\d+);", NGINX_SITE.read_text())
    assert upstream is not None
    assert (options["host"], options["port"]) == (upstream[1], int(upstream[2]))


def test_every_command_the_unit_runs_is_valid() -> None:
    """ExecStartPre and the like, if any, parse too: a typo fails here, not at a deploy."""
    for key, values in unit_entries()["Service"].items():
        if key.startswith("Exec"):
            for value in values:
                parsed_command(value.lstrip("-+!@:"))


def test_an_invalid_command_line_would_be_caught() -> None:
    with pytest.raises(click.UsageError):
        parsed_command(f"{INSTALLED} serve --port 8000 --wrokers 2")


def test_it_runs_as_its_own_user_with_its_settings_file() -> None:
    assert service("User") == "frontdesk"
    assert service("Group") == "frontdesk"
    assert service("EnvironmentFile").startswith("/etc/frontdesk/")
    assert service("Restart") == "on-failure"


def test_systemd_waits_out_the_shutdown_grace() -> None:
    """SIGTERM to `frontdesk serve` alone, then longer than serve takes at most to stop
    (its workers' grace and its supervisor's margin) before SIGKILL."""
    assert service("KillSignal") == "SIGTERM"
    assert service("KillMode") == "mixed"
    assert seconds(service("TimeoutStopSec")) > SHUTDOWN_GRACE_SECONDS + STOP_MARGIN_SECONDS


def test_it_is_hardened_and_can_still_write_where_it_must() -> None:
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "RestrictSUIDSGID": "yes",
        "CapabilityBoundingSet": "",
    }.items():
        assert service(key) == value, key
    # ProtectSystem=strict leaves writable only these, which systemd creates for the user.
    working = service("WorkingDirectory")
    assert working == f"/var/lib/{service('StateDirectory')}"
    metrics = dict(
        entry.split("=", 1) for entry in unit_entries()["Service"].get("Environment", [])
    )
    assert metrics["FRONTDESK_METRICS_DIR"] == f"/run/{service('RuntimeDirectory')}"
