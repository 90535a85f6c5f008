"""A command-line MCP client that signs a customer in the way it would at a desk: it prints the
authorize URL for a person to open, listens on a loopback port for the redirect, and goes on.
Here the person is tests.live.customer_browser: the URL is read from the client's output, the
consent and login pages are played, and the redirect is delivered to the client's listener."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx
from anyio.abc import ByteReceiveStream, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.live.customer_browser import CustomerBrowser, deliver

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;;[^\x07\x1b]*(?:\x07|\x1b\\)")
MAX_LINE = 64 * 1024


@dataclass
class ClientRun:
    """What the client printed and exited with, and what the played browser did."""

    command: Sequence[str]
    returncode: int | None = None
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    authorize_urls: list[str] = field(default_factory=list)
    callbacks: list[httpx.Response] = field(default_factory=list)
    browser: CustomerBrowser = field(default_factory=CustomerBrowser)

    def printed(self) -> str:
        return "\n".join([*self.stdout, "--- stderr ---", *self.stderr])

    def report(self) -> str:
        """The command, its exit code and its whole output, for a failure message."""
        return f"{' '.join(self.command)}\nexited with {self.returncode}:\n{self.printed()}"


@dataclass
class _Watch:
    run: ClientRun
    authorize_url: re.Pattern[str]
    listening: re.Pattern[str] | None
    listener_ready: anyio.Event = field(default_factory=anyio.Event)


async def run_signing_in(
    command: Sequence[str],
    *,
    authorize_url: re.Pattern[str],
    cwd: Path,
    env: Mapping[str, str],
    deadline: float,
    listening: re.Pattern[str] | None = None,
) -> ClientRun:
    """Run ``command``; each line matching ``authorize_url`` (group 1 is the URL) is signed in.

    ``listening`` is a line the client prints once its callback listener is up; the redirect
    waits for it when given (a client may print the URL first and bind its port after).
    The whole run, sign-in included, must end within ``deadline`` seconds, or the client is
    killed and the test fails with everything it printed.
    """
    run = ClientRun(command)
    watch = _Watch(run, authorize_url, listening)
    process = await anyio.open_process(list(command), cwd=cwd, env=dict(env))
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        with anyio.fail_after(deadline):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_read_lines, process.stdout, run.stdout, watch, tasks)
                tasks.start_soon(_read_lines, process.stderr, run.stderr, watch, tasks)
                run.returncode = await process.wait()
    except TimeoutError:
        raise AssertionError(
            f"the client did not finish within {deadline:g}s\n{run.report()}"
        ) from None
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()
    return run


async def _read_lines(
    stream: ByteReceiveStream, lines: list[str], watch: _Watch, tasks: TaskGroup
) -> None:
    buffered = BufferedByteReceiveStream(stream)
    while True:
        try:
            raw = await buffered.receive_until(b"\n", MAX_LINE)
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError):
            if buffered.buffer:
                lines.append(buffered.buffer.decode(errors="replace"))
            return
        line = _ANSI_ESCAPE.sub("", raw.decode(errors="replace")).rstrip("\r")
        lines.append(line)
        if watch.listening is not None and watch.listening.search(line):
            watch.listener_ready.set()
        found = watch.authorize_url.search(line)
        if found is not None:
            watch.run.authorize_urls.append(found[1])
            tasks.start_soon(_sign_in, found[1], watch)


async def _sign_in(url: str, watch: _Watch) -> None:
    redirect = await watch.run.browser.sign_in(url)
    if watch.listening is not None:
        await watch.listener_ready.wait()
    watch.run.callbacks.append(await deliver(redirect))
