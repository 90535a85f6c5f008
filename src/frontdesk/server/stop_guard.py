"""How ``frontdesk serve`` stops: this process takes every stop signal, and the server hears
one.

Granian's supervisor answers SIGINT and SIGTERM from a Python signal handler that sets a
``threading.Event``. A second signal that lands while the first handler, or the supervisor's
own wait on that event, holds the event's lock runs the handler again in the same thread,
and it waits forever for the lock its own thread holds: a supervisor that never exits,
sometimes with its workers already gone and nothing listening (granian 2.8.7; the Python
code of 2.8.9, the latest release, is the same). Two signals close together are ordinary:
Ctrl-C pressed twice, a terminal's SIGINT to the whole process group while a script passes
on its own, ``timeout``.

So the server runs as a child in a session of its own, out of reach of a terminal's or a
process group's signals, and this process, the one an operator, systemd (``KillMode=mixed``)
or a script signals, passes on the first SIGINT or SIGTERM as one SIGTERM and ignores the
rest. A server that has not exited ``stop_within`` seconds later is killed with its whole
session (its workers are in it): a stop always ends.

``frontdesk serve`` becomes this module by exec once the address and the database are
checked (http_server.serve_http): the same pid, in an interpreter that loads only this.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import NoReturn

import structlog

from frontdesk.observability.logs import configure_logging
from frontdesk.observability.metrics_files import shared_metrics_dir

log = structlog.get_logger(__name__)

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
# Exit status of a server that had to be killed: it did not stop in time.
EXIT_KILLED = 1


def run_until_stopped(command: Sequence[str], *, stop_within: float) -> int:
    """Run ``command`` in a session of its own until it exits; the first SIGINT or SIGTERM
    this process receives asks it to stop (one SIGTERM).

    Returns its exit status: 0 for a clean stop, EXIT_KILLED when it outlived
    ``stop_within`` after the stop and was killed, otherwise its own status.
    """
    with _signals_as_bytes() as wakeups:
        # The server's session is new (setsid), so is its process group: nothing sent to
        # this process's group, nor typed at its terminal, reaches the server or its workers.
        # The command is the caller's own (this interpreter and a module of this package).
        server = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)  # noqa: S603
        asked_at: float | None = None
        while server.poll() is None:
            if asked_at is None:
                waited = None
            else:
                waited = asked_at + stop_within - time.monotonic()
                if waited <= 0:
                    _kill_session(server, stop_within)
                    return EXIT_KILLED
            # A signal's number arrives as a byte; SIGCHLD wakes this wait when the server
            # exits. select is retried on EINTR with the time left (PEP 475).
            readable, _, _ = select.select([wakeups], [], [], waited)
            received = os.read(wakeups, 512) if readable else b""
            if asked_at is None and any(number in STOP_SIGNALS for number in received):
                asked_at = time.monotonic()
                server.send_signal(signal.SIGTERM)
                # Ignored from now on, until this process exits: a signal after the server
                # has ended would otherwise interrupt what is left to do (the default
                # SIGINT handler raises KeyboardInterrupt anywhere).
                for number in STOP_SIGNALS:
                    signal.signal(number, signal.SIG_IGN)
        if asked_at is not None and server.returncode == -signal.SIGTERM:
            # Stopped before Granian took over its signals: the default action, a clean stop.
            return 0
        # Killed by another signal: the status a shell would give.
        return server.returncode if server.returncode >= 0 else 128 - server.returncode


def _kill_session(server: subprocess.Popen[bytes], stop_within: float) -> None:
    log.error(
        "the server did not stop in time after the stop signal; killed with its workers",
        stop_within_seconds=stop_within,
    )
    # Its process group is its session's (setsid): the server's pid names it.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait()


@contextlib.contextmanager
def _signals_as_bytes() -> Iterator[int]:
    """A file descriptor that receives a byte for every SIGINT, SIGTERM and SIGCHLD, and
    nothing else done in the handlers: the interpreter writes the byte itself, from its C
    handler, so signals arriving together never run Python code into each other."""
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    os.set_blocking(writer, False)
    kept = {number: signal.getsignal(number) for number in (*STOP_SIGNALS, signal.SIGCHLD)}
    previous_fd = signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
    try:
        for number in kept:
            signal.signal(number, _only_wake)
        yield reader
    finally:
        for number, handler in kept.items():
            if signal.getsignal(number) is _only_wake:
                signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        os.close(reader)
        os.close(writer)


def _only_wake(_number: int, _frame: FrameType | None) -> None:
    """Python's handler: the byte on the wakeup descriptor is all that is needed."""


def main(arguments: Sequence[str]) -> NoReturn:
    """``python -m frontdesk.server.stop_guard STOP_WITHIN METRICS_BASE LOG_LEVEL json|console --
    COMMAND...``: what ``frontdesk serve`` becomes once the database is ready
    (http_server.serve_http). The workers' metrics directory is made here, named after
    this process, which outlives them all, and removed when the server has ended."""
    stop_within, metrics_base, log_level, log_form, separator, *command = arguments
    if separator != "--" or not command:
        sys.exit(
            "usage: python -m frontdesk.server.stop_guard SECONDS DIR LEVEL FORM -- COMMAND..."
        )
    configure_logging(log_level, json=log_form == "json")
    with shared_metrics_dir(Path(metrics_base) if metrics_base else None):
        status = run_until_stopped(command, stop_within=float(stop_within))
    sys.exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
