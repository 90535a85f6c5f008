"""A bounded, coverage-guided fuzz run of the parsers bad input meets first: the JSON-RPC
envelope parser, the OAuth form parser and the registration validator (``targets``).

    python -m tests.adversarial.fuzz --runs 20000 [--target jsonrpc|form|registration]

It uses atheris (libFuzzer for Python) when it is installed, with the frontdesk modules
instrumented so that mutations follow new branches, and otherwise hypothesis over the same
targets. Either way it stops after ``--runs`` inputs, prints how many each target saw, and
exits non-zero on the first input that breaks a rule (atheris also writes that input to
``--artifacts``). Bytes starting the input pick the target, so one run covers all three.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

Target = Callable[[bytes], None]

NAMES = ("jsonrpc", "form", "registration")

# Valid inputs to start from: mutations of these reach the branches past the first check.
SEEDS: dict[str, tuple[bytes, ...]] = {
    "jsonrpc": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        b'[{"jsonrpc":"2.0","id":"a","method":"ping","params":{}},'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}]',
        b'{"jsonrpc":"2.0","id":18446744073709551615,"method":"x","params":{"a":[1,2.5e300]}}',
    ),
    "form": (
        b"grant_type=authorization_code&client_id=fdc_x&code=fdac_y&redirect_uri="
        b"http%3A%2F%2F127.0.0.1%3A33418%2Fcallback&code_verifier=abc",
        b"grant_type=refresh_token&refresh_token=fdrt_z&client_id=fdc_x&scope=email+profile",
        b"token=fdat_q&client_id=fdc_x",
    ),
    "registration": (
        b'{"redirect_uris":["https://app.example/cb"],"client_name":"App"}',
        b'{"redirect_uris":["http://127.0.0.1:33418/callback","http://[::1]:8/x?y=1"],'
        b'"token_endpoint_auth_method":"none","grant_types":["authorization_code"],'
        b'"response_types":["code"]}',
    ),
}

counts: Counter[str] = Counter()
reported: list[bool] = []
cleanups: list[Callable[[], None]] = []


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.adversarial.fuzz")
    parser.add_argument("--runs", type=int, default=10_000, help="inputs to try in all")
    parser.add_argument("--target", choices=(*NAMES, "all"), default="all")
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    parser.add_argument("--seed", type=int, default=None, help="random seed (atheris)")
    parser.add_argument("--max-len", type=int, default=20_000, help="longest input, bytes")
    parser.add_argument(
        "--artifacts", type=Path, default=None, help="path prefix for inputs that break a rule"
    )
    return parser.parse_args(argv)


def _selected(target: str) -> tuple[str, ...]:
    return NAMES if target == "all" else (target,)


def _dispatcher(names: tuple[str, ...], targets: dict[str, Target], runs: int) -> Target:
    def one_input(data: bytes) -> None:
        if len(names) == 1:
            name, payload = names[0], data
        else:
            name, payload = (names[data[0] % len(names)], data[1:]) if data else (names[0], b"")
        counts[name] += 1
        targets[name](payload)
        if counts.total() == runs:
            # libFuzzer ends the process from C once the runs are done, past atexit.
            _report()

    return one_input


def _report() -> None:
    if reported:
        return
    reported.append(True)
    for cleanup in cleanups:
        cleanup()
    total = counts.total()
    per_target = ", ".join(f"{name}={counts[name]}" for name in sorted(counts))
    print(f"fuzz: {total} inputs tried ({per_target})", file=sys.stderr, flush=True)


def _with_atheris(options: argparse.Namespace) -> None:
    # Imported here: atheris is optional, and the targets must load after it, instrumented.
    import atheris  # type: ignore[import-untyped]

    with atheris.instrument_imports(include=["frontdesk", "urllib", "tests.adversarial.targets"]):
        from tests.adversarial import targets

    names = _selected(options.target)
    seeds = Path(tempfile.mkdtemp(prefix="frontdesk-fuzz-seeds-"))
    cleanups.append(lambda: shutil.rmtree(seeds, ignore_errors=True))
    for index, name in enumerate(names):
        prefix = b"" if len(names) == 1 else bytes([index])
        for number, seed in enumerate(SEEDS[name]):
            (seeds / f"{name}-{number}").write_bytes(prefix + seed)
    artifacts = options.artifacts or Path(tempfile.gettempdir()) / "frontdesk-fuzz"
    libfuzzer = [
        sys.argv[0],
        f"-runs={options.runs}",
        f"-max_len={options.max_len}",
        # Seeds are read, not written to: the corpus stays in memory and leaves no files.
        "-seed_inputs=" + ",".join(str(path) for path in sorted(seeds.iterdir())),
        # A prefix, not a directory: an input that breaks a rule is kept as <prefix>crash-*.
        f"-artifact_prefix={artifacts}-",
        "-rss_limit_mb=4096",
        "-print_final_stats=0",
    ]
    if options.seed is not None:
        libfuzzer.append(f"-seed={options.seed}")
    # A broken rule ends the process through Python: the report goes out then.
    atexit.register(_report)
    atheris.Setup(libfuzzer, _dispatcher(names, targets.TARGETS, options.runs))
    atheris.Fuzz()


def _with_hypothesis(options: argparse.Namespace) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.adversarial import targets

    names = _selected(options.target)
    runs_each = max(1, options.runs // len(names))
    for name in names:
        inputs = st.one_of(
            st.binary(max_size=options.max_len),
            st.sampled_from(SEEDS[name]),
            st.builds(
                lambda seed, cut, junk: seed[:cut] + junk + seed[cut:],
                st.sampled_from(SEEDS[name]),
                st.integers(min_value=0, max_value=200),
                st.binary(max_size=64),
            ),
        )
        run = given(inputs)(_counted(name, targets.TARGETS[name]))
        settings(
            max_examples=runs_each,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )(run)()
    _report()


def _counted(name: str, target: Target) -> Target:
    def run(data: bytes) -> None:
        counts[name] += 1
        target(data)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    options = _arguments(argv)
    engine = options.engine
    if engine == "auto":
        engine = "atheris" if importlib.util.find_spec("atheris") is not None else "hypothesis"
    print(f"fuzz: engine {engine}, {options.runs} runs, target {options.target}", file=sys.stderr)
    if engine == "atheris":
        _with_atheris(options)
    else:
        _with_hypothesis(options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
