"""No error path keeps anything from one request to the next (issue 22).

An exception instance made once and raised on every request that hits it gathers each
raise's traceback, and with it the frames of every request that raised it: measured here
with such an instance put back, 10 KB a request on a sign-in path (Starlette 1.9), 2.5 KB
on the MCP endpoint. Starlette 1.10 clears the traceback of an exception its handlers
rendered (earlier versions do not); the MCP endpoint renders its own errors. So, for each
error path an unauthenticated or misbehaving client reaches cheaply:

- 10,000 requests after a warm-up leave the process's resident memory flat, which catches
  a reused instance on the MCP endpoint, and on every path under a Starlette before 1.10;
- three requests, traced one after another, raise no exception instance in common, which
  catches one on every path whatever Starlette does with tracebacks;

no module or class of frontdesk holds an exception instance; and requests that share one
failed read of their company each raise an exception of their own.

The requests go to the application's ASGI interface in-process, without an HTTP client in
between: the client's own allocations would only blur the measure, and it would cost more
than the application does on most paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import inspect
import os
import pkgutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import pytest

import frontdesk
from frontdesk.app import Frontdesk
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database
from frontdesk.store.outage import is_outage
from frontdesk.store.tables import access_tokens, authorization_codes, refresh_tokens
from tests.adversarial.error_paths import (
    ERROR_PATHS,
    RAISES_NOTHING_OF_FRONTDESK,
    SIGNIN,
    answer,
    answer_many,
    prepare,
)
from tests.oauth import flows

pytestmark = pytest.mark.anyio

REQUESTS = 10_000
# Enough for every cache a path fills (compiled statements, templates, the registry's entry
# for an unknown key) to be full before the measure starts.
WARM_UP = 500
# Requests in flight at once, as a server has them: lookups wait on the database together.
IN_FLIGHT = 16
# A leak of 10 KB a request is 100 MB over the run, one of 210 bytes is 2 MB. Without a
# leak the growth measured here stays under 0.1 MB (whole pages, allocator arenas).
RSS_BOUND = 2 * 1024 * 1024
TRACED_REQUESTS = 3
STATM = Path("/proc/self/statm")
FRONTDESK_SOURCE = str(Path(frontdesk.__file__).parent)


def resident_bytes() -> int:
    """The process's resident memory, after a full collection (the service raises the
    collector's threshold, so cyclic garbage of earlier requests may still be waiting)."""
    gc.collect()
    return int(STATM.read_text(encoding="ascii").split()[1]) * os.sysconf("SC_PAGE_SIZE")


# Tracing raises --------------------------------------------------------------------------


class RaisedExceptions:
    """Every exception instance raised in this thread while tracing (sys.settrace's
    "exception" event, at the raise and at each frame it passes through)."""

    def __init__(self) -> None:
        # The instances themselves are kept, so that no id is reused while tracing.
        self.instances: dict[int, BaseException] = {}
        # Whether any passed through frontdesk's code (Starlette 1.10 clears the traceback
        # of an exception it rendered, so this is noted as it happens).
        self.through_frontdesk = False

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call":
            frame.f_trace_lines = False
        elif event == "exception":
            instance = arg[1]
            self.instances[id(instance)] = instance
            if frame.f_code.co_filename.startswith(FRONTDESK_SOURCE):
                self.through_frontdesk = True
        return self._trace

    @contextlib.contextmanager
    def tracing(self) -> Iterator[None]:
        previous = sys.gettrace()
        sys.settrace(self._trace)
        try:
            yield
        finally:
            sys.settrace(previous)


# The tests -------------------------------------------------------------------------------


@pytest.fixture
async def values(app: Frontdesk, client: httpx.AsyncClient) -> dict[str, str]:
    """A registered client of initech, its expired code and expired tokens."""
    signed_in = await flows.sign_in(client)
    tokens = await flows.obtain_tokens(client, client_id=signed_in.client_id)
    for table in (authorization_codes, access_tokens, refresh_tokens):
        await flows.expire(app, table)
    return {
        "client": signed_in.client_id,
        "code": signed_in.code,
        "access": tokens.access,
        "refresh": tokens.refresh,
    }


@pytest.mark.skipif(not STATM.exists(), reason="resident memory is read from /proc (Linux)")
@pytest.mark.parametrize("name", ERROR_PATHS)
async def test_an_error_path_keeps_no_memory(
    app: Frontdesk, values: dict[str, str], name: str
) -> None:
    request = prepare(ERROR_PATHS[name], values)
    await answer_many(app, request, WARM_UP, IN_FLIGHT)

    recordings = [RaisedExceptions() for _ in range(TRACED_REQUESTS)]
    for recording in recordings:
        with recording.tracing():
            assert await answer(app, request) == request.status
    _assert_no_instance_raised_twice(name, recordings)

    before = resident_bytes()
    await answer_many(app, request, REQUESTS, IN_FLIGHT)
    grown = resident_bytes() - before
    assert grown < RSS_BOUND, (
        f"{name}: resident memory grew {grown / 1024:.0f} KB over {REQUESTS} requests"
        f" ({grown / REQUESTS:.0f} bytes a request)"
    )


def _assert_no_instance_raised_twice(name: str, recordings: list[RaisedExceptions]) -> None:
    for index, recording in enumerate(recordings):
        for later in recordings[index + 1 :]:
            shared = [
                recording.instances[key]
                for key in recording.instances.keys() & later.instances.keys()
            ]
            assert not shared, f"{name}: raised on more than one request: {shared!r}"
    # The path must raise at all, or the tracing proved nothing.
    raising = all(recording.through_frontdesk for recording in recordings)
    assert raising or name in RAISES_NOTHING_OF_FRONTDESK, f"{name}: frontdesk raised nothing"


def test_no_module_or_class_holds_an_exception_instance() -> None:
    """Such an instance could only be made once and raised again and again; each raise
    makes its exception (a factory function per error where a message is shared)."""
    held = []
    for module_info in pkgutil.walk_packages(frontdesk.__path__, "frontdesk."):
        # __main__ runs the CLI; the migrations are scripts alembic runs in its context.
        if module_info.name.endswith("__main__") or ".migrations" in module_info.name:
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            held.extend(_exceptions_in(value, f"{module_info.name}.{name}", module_info.name))
    assert not held, held


def _exceptions_in(value: object, where: str, module: str, depth: int = 0) -> list[str]:
    """Exception instances reachable from a module's global: in containers, class
    attributes, function defaults and closures, and the attributes of frontdesk objects
    (a few levels deep: far enough for a table of errors, without walking the world)."""
    if depth > 4:
        return []
    if isinstance(value, BaseException):
        return [f"{where} = {value!r}"]
    children: list[tuple[str, object]] = []
    if isinstance(value, dict):
        children = [(f"[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, list | tuple | set | frozenset):
        children = [(f"[{index}]", item) for index, item in enumerate(value)]
    elif inspect.isclass(value):
        if value.__module__ == module:
            children = [(f".{name}", item) for name, item in vars(value).items()]
    elif inspect.isfunction(value):
        if value.__module__ == module:
            children = [(".__defaults__", value.__defaults__ or ())]
            children.append((".__kwdefaults__", value.__kwdefaults__ or {}))
            children.extend(
                (f".<closure {index}>", cell.cell_contents)
                for index, cell in enumerate(value.__closure__ or ())
                if _filled(cell)
            )
    elif type(value).__module__.startswith("frontdesk."):
        names = set(getattr(value, "__dict__", {})) | set(getattr(type(value), "__slots__", ()))
        children = [(f".{name}", getattr(value, name)) for name in names if hasattr(value, name)]
    found = []
    for suffix, child in children:
        found.extend(_exceptions_in(child, where + suffix, module, depth + 1))
    return found


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 -- an empty cell raises ValueError
    except ValueError:
        return False
    return True


async def test_requests_sharing_a_failed_company_read_each_raise_their_own(
    make_settings: Callable[..., Settings],
) -> None:
    """Requests that find a company's entry expired share one read (companies.registry);
    when it fails, each raises an exception of its own, still an outage (a 503)."""
    # A real outage: no PostgreSQL listens on port 1, so every connection is refused.
    url = "postgresql+asyncpg://frontdesk@127.0.0.1:1/frontdesk"
    database = Database(url)
    registry = CompanyRegistry(CompanyRepository(database.engine), make_settings(database_url=url))
    try:
        failures = await asyncio.gather(
            *(registry.active(SIGNIN) for _ in range(20)), return_exceptions=True
        )
    finally:
        await database.close()
    assert all(isinstance(failure, Exception) and is_outage(failure) for failure in failures)
    assert len({id(failure) for failure in failures}) == len(failures)
