"""npm projects the interop and conformance tests run: installed once, exactly as locked.

A missing Node.js or npm skips those tests, or fails them under
FRONTDESK_TEST_REQUIRE_SERVICES=1 (CI); a failing ``npm ci`` always fails them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import unavailable

INSTALL_TIMEOUT = 600


def node_major(node: str) -> int | None:
    """The major version of a node binary, or None when it does not say."""
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    match = re.fullmatch(r"v(\d+)\..*", version)
    return None if match is None else int(match[1])


def system_node(min_major: int, what: str) -> str:
    """The node on PATH when it is at least ``min_major``; else skip or fail."""
    node = shutil.which("node")
    if node is None:
        unavailable(f"node is needed for {what}")
    major = node_major(node)
    if major is None or major < min_major:
        found = "an unknown version" if major is None else f"Node.js {major}"
        unavailable(f"{what} needs Node.js {min_major}+, found {found}")
    return node


def _pins(project: Path) -> dict[str, str]:
    manifest = json.loads((project / "package.json").read_text())
    return {name: str(version) for name, version in manifest["dependencies"].items()}


def installed_version(project: Path, package: str) -> str | None:
    try:
        manifest = json.loads((project / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version")
    return version if isinstance(version, str) else None


def is_installed(project: Path) -> bool:
    # Every dependency compared with its exact pin, not just "node_modules exists": a
    # version bump, a new dependency or an interrupted install all reinstall.
    return all(
        installed_version(project, package) == pin for package, pin in _pins(project).items()
    )


def ensure_installed(project: Path) -> None:
    """``npm ci`` in ``project`` unless its pinned dependencies are all in place."""
    if is_installed(project):
        return
    npm = shutil.which("npm")
    if npm is None:
        unavailable(f"npm is needed to install {project.name}'s test tools")
    # Parallel sessions may all arrive here at once; npm must not run twice in one folder.
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"frontdesk-{project.name}-{digest}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_installed(project):
            return
        # `npm ci` installs exactly the committed lockfile and never rewrites it.
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        if result.returncode != 0 or not is_installed(project):
            pytest.fail(
                f"npm ci failed in {project} (exit {result.returncode}):\n"
                f"{result.stdout}{result.stderr}"
            )
