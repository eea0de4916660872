"""Fuzzing: every command on broken input ends with exit 0, 1 or 2, never a crash.

Inputs: random bytes; byte-level mutations (truncate, duplicate, swap, delete, flip a
byte, insert) and JSON-level mutations (a value of another type, a key dropped, records
repeated or reordered) of every fixture stream, seeds of every format and container;
and SSE fed in random chunks, which must give what the whole input gives. Commands run
in process (:mod:`tests.inprocess`), each example drawing one command and its options.

``CHATX_FUZZ_EXAMPLES=N`` sets each test's example count (``make fuzz``: 100000); the
default keeps the whole file to a few seconds.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from chatx.errors import ExitStatus
from chatx.reading import framing
from tests.inprocess import Result, assert_clean, run

EXAMPLES = int(os.environ.get("CHATX_FUZZ_EXAMPLES", "0"))
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEEDS = {
    path: path.read_bytes()
    for folder in ("chat-chunk", "responses-event", "llama-stack-event", "anthropic-event")
    for path in sorted((FIXTURES / folder).iterdir())
}
assert SEEDS, "no seed streams under fixtures/"
SSE_SEEDS = [path for path in SEEDS if path.suffix == ".sse"]
OTHER = str(FIXTURES / "chat-chunk" / "text.sse")

# The suite's short run is derandomized, so CI gives the same verdict on the same code;
# `make fuzz` (CHATX_FUZZ_EXAMPLES set) explores at random.
BASE = settings(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
    derandomize=not EXAMPLES,
    database=None if not EXAMPLES else settings.default.database,
)
# Hypothesis remembers every example of a run (about 60 kB each here): a long campaign is
# run in rounds of this many, each a new run, so memory stays flat.
ROUND = 5000


def campaign(inner: Any, **strategies: Any) -> None:
    """Run ``inner`` on examples of ``strategies``, EXAMPLES of them (60 by default)."""
    total = EXAMPLES or 60
    started, before = time.monotonic(), STATS["inputs"]
    for done in range(0, total, ROUND):
        settings(BASE, max_examples=min(ROUND, total - done))(given(**strategies)(inner))()
    if REPORT:
        with open(REPORT, "a") as report:
            line = {"test": inner.__name__, "inputs": STATS["inputs"] - before,
                    "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
            report.write(json.dumps(line) + "\n")


# -- the commands ---------------------------------------------------------------------------

TARGETS = ("chat-chunk", "responses-event", "llama-stack-event", "anthropic-event")


@st.composite
def commands(draw: st.DrawFn) -> list[str]:
    """One command line reading stdin, with options drawn as a user might give them."""
    kind = draw(st.sampled_from(["convert", "convert", "validate", "show", "collect", "diff"]))
    flags = lambda *options: [o for o in options if draw(st.booleans())]  # noqa: E731
    if kind == "convert":
        args = ["convert", "-", "--to", draw(st.sampled_from(TARGETS))]
        args += flags("--strict", "--finish", "--quiet")
        args += draw(
            st.sampled_from([[], ["--out-container", "jsonl"], ["--out-container", "json"]])
        )
        args += draw(st.sampled_from([[], ["--choice", "0"], ["--choice", "1"]]))
        args += draw(
            st.sampled_from([[], ["--reasoning", "text"], ["--reasoning-field", "reasoning"]])
        )
        return args
    if kind == "validate":
        return [
            "validate",
            "-",
            *flags("--strict"),
            *draw(st.sampled_from([[], ["--output", "json"]])),
        ]
    if kind == "show":
        return ["show", "-", *flags("--events")]
    if kind == "collect":
        args = ["collect", "-", *flags("--quiet")]
        args += draw(
            st.sampled_from([[], ["--as", "chat"], ["--as", "responses"], ["--as", "llama-stack"]])
        )
        return args + draw(st.sampled_from([[], ["--choice", "0"]]))
    args = ["diff", "-", OTHER, *flags("--all")]
    args += draw(st.sampled_from([[], ["--wire"], ["--semantic"], ["--output", "json"]]))
    return args


# CHATX_FUZZ_REPORT=FILE: record every bug found (signature, command, smallest input) in
# FILE as JSON lines instead of failing at the first; for long campaigns.
REPORT = os.environ.get("CHATX_FUZZ_REPORT")
STATS: Counter[str] = Counter()


def bug_signature(args: list[str], data: bytes) -> tuple[str, str]:
    """Run again with --traceback: the exception and the innermost chatx function."""
    try:
        run([*args, "--traceback"], data)
    except Exception as exc:  # noqa: BLE001 - any exception is what we are after
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/chatx/" in f.filename]
        where = (
            f"{frames[-1].filename.rsplit('/chatx/', 1)[1]}:{frames[-1].name}" if frames else "?"
        )
        return (type(exc).__name__, where)
    return ("?", "?")


def check(args: list[str], data: bytes) -> Result:
    STATS["inputs"] += 1
    result = run(args, data)
    # A codec bug is "internal error": the run's exit 70, or a record skipped saying so.
    internal = result.code == ExitStatus.INTERNAL or b"internal error" in result.stderr
    if REPORT and (internal or b"internal error" in result.stdout):
        with open(REPORT, "a") as report:
            line = {
                "bug": bug_signature(args, data),
                "args": args,
                "err": result.err,
                "input": data.decode("latin-1"),
            }
            report.write(json.dumps(line) + "\n")
        reject()
    assert_clean(result)
    assert b"internal error" not in result.stdout, result.stdout[-500:]
    if args[0] == "convert" and result.stdout:
        # Whatever happened, chatx writes well-formed output: whole events, each one JSON.
        container = "jsonl" if "jsonl" in args else "json" if "json" in args else "sse"
        if container == "json" and result.code != 0:
            return result  # an array stopped by an error is not closed
        _, records = framing.read_records(result.stdout, container)
        assert all(r.error is None for r in records), result.stdout[-300:]
    return result


# -- random bytes ---------------------------------------------------------------------------

PREFIXES = [b"", b"data: ", b"data: {", b"{", b'{"event":', b"[", b"\xef\xbb\xbf", b"event: x\n"]


def _random_bytes(prefix, body, args):
    check(args, prefix + body)


def test_random_bytes():
    campaign(
        _random_bytes,
        prefix=st.sampled_from(PREFIXES),
        body=st.binary(max_size=600),
        args=commands(),
    )


def _random_sse_lines(lines, ends, args):
    check(args, ends.join(lines))


def test_random_sse_lines():
    campaign(
        _random_sse_lines,
        lines=st.lists(
            st.sampled_from(
                [b"data: ", b"data:", b"event: ", b": ", b"id: ", b"retry: ", b"", b"x"]
            ).flatmap(lambda field: st.binary(max_size=40).map(lambda value: field + value)),
            max_size=12,
        ),
        ends=st.sampled_from([b"\n", b"\r\n", b"\r"]),
        args=commands(),
    )


# -- byte-level mutations of real streams ----------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(SEEDS[draw(st.sampled_from(list(SEEDS)))])
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        op = draw(
            st.sampled_from(["truncate", "duplicate", "swap", "delete", "flip", "insert", "lines"])
        )
        i = draw(st.integers(0, len(data) - 1))
        j = draw(st.integers(i, min(len(data), i + 400)))
        if op == "truncate":
            del data[i:]
        elif op == "duplicate":
            data[j:j] = data[i:j]
        elif op == "swap":
            k = draw(st.integers(0, len(data) - 1))
            a, b = bytes(data[i:j]), bytes(data[k : k + (j - i)])
            data[i:j], data[k : k + len(b)] = b, a
        elif op == "delete":
            del data[i:j]
        elif op == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[i:i] = draw(
                st.sampled_from(
                    [
                        b"\n",
                        b"\r",
                        b"\x00",
                        b"\xff",
                        b"[DONE]",
                        b"data: ",
                        b'"',
                        b"{",
                        b"}",
                        b"\n\n",
                    ]
                )
            )
        else:  # whole lines: drop, repeat or move one
            lines = bytes(data).split(b"\n")
            n = draw(st.integers(0, len(lines) - 1))
            line = lines.pop(n)
            where = draw(st.integers(0, len(lines)))
            lines[where:where] = [line] * draw(st.integers(0, 2))
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _mutated_streams(data, args):
    check(args, data)


def test_mutated_streams():
    campaign(
        _mutated_streams,
        data=mutated(),
        args=commands(),
    )


# -- JSON-level mutations: well-framed records that say unexpected things ---------------------

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "assistant",
            "stop",
            "length",
            "tool_calls",
            "function",
            "text",
            "response.completed",
            "[DONE]",
        ]
    ),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(
        st.sampled_from(["index", "type", "id", "text", "delta"]), st.integers(-2, 2), max_size=2
    ),
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*path, index))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return value


def _dumps(value: Any) -> bytes:
    # json, not orjson: it writes integers beyond 64 bits, which orjson refuses to.
    return json.dumps(value, separators=(",", ":")).encode()


def _frame(payloads: list[Any], seed: bytes, path: Path) -> bytes:
    if path.suffix == ".jsonl":
        return b"".join(_dumps(p) + b"\n" for p in payloads)
    if path.suffix == ".json":
        return _dumps(payloads)
    named = b"event: " in seed
    out = []
    for p in payloads:
        if p == "[DONE]":
            out.append(b"data: [DONE]\n\n")
            continue
        if (
            named
            and isinstance(p, dict)
            and isinstance(p.get("type"), str)
            and "\n" not in p["type"]
        ):
            out.append(b"event: " + p["type"].encode() + b"\n")
        out.append(b"data: " + _dumps(p) + b"\n\n")
    return b"".join(out)


@st.composite
def json_mutated(draw: st.DrawFn) -> bytes:
    path = draw(st.sampled_from(list(SEEDS)))
    _, records = framing.read_records(SEEDS[path])
    payloads = ["[DONE]" if r.done else r.data for r in records if r.error is None]
    for _ in range(draw(st.integers(1, 5))):
        if not payloads:
            break
        n = draw(st.integers(0, len(payloads) - 1))
        op = draw(st.sampled_from(["set", "set", "set", "delete", "repeat", "move", "drop"]))
        if op in ("set", "delete"):
            target = draw(st.sampled_from(_paths(payloads[n])))
            if op == "delete" and not target:
                continue
            payloads[n] = _set(payloads[n], target, draw(_VALUES), op == "delete")
        elif op == "repeat":
            payloads.insert(n, copy.deepcopy(payloads[n]))
        elif op == "move":
            payloads.insert(draw(st.integers(0, len(payloads) - 1)), payloads.pop(n))
        else:
            payloads.pop(n)
    return _frame(payloads, SEEDS[path], path)


def _json_mutated_streams(data, args):
    check(args, data)


def test_json_mutated_streams():
    campaign(
        _json_mutated_streams,
        data=json_mutated(),
        args=commands(),
    )


# -- re-chunked input ------------------------------------------------------------------------


class _Chunks(io.RawIOBase):
    """A pipe that hands out the input in the given sizes, one read at a time."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.at = data, sizes, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = self.sizes.pop(0) if self.sizes else len(self.data)
        piece = self.data[self.at : self.at + max(1, min(size, len(buffer)))]
        buffer[: len(piece)] = piece
        self.at += len(piece)
        return len(piece)


def run_chunked(args: list[str], data: bytes, sizes: list[int]) -> Result:
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BufferedReader(_Chunks(data, list(sizes)), 1 << 20))
    try:
        return run(args, None)
    finally:
        sys.stdin = saved


def _rechunked_sse_gives_what_the_whole_input_gives(seed, sizes, mutate, cut, args):
    data = SEEDS[seed]
    if mutate:  # a cut-short stream, as a dropped connection leaves it
        data = data[: cut % (len(data) + 1)]
    whole = check(args, data)
    chunked = run_chunked(args, data, sizes)
    assert_clean(chunked)
    assert (chunked.code, chunked.stdout, chunked.stderr) == (
        whole.code,
        whole.stdout,
        whole.stderr,
    )


def test_rechunked_sse_gives_what_the_whole_input_gives():
    campaign(
        _rechunked_sse_gives_what_the_whole_input_gives,
        seed=st.sampled_from(SSE_SEEDS),
        sizes=st.lists(st.integers(1, 64), min_size=1, max_size=200),
        mutate=st.booleans(),
        cut=st.integers(0, 10**6),
        args=st.sampled_from(
            [
                ["convert", "-", "--to", "responses-event"],
                ["convert", "-", "--to", "chat-chunk", "--strict"],
                ["convert", "-", "--to", "llama-stack-event"],
                ["convert", "-", "--to", "anthropic-event"],
                ["validate", "-"],
                ["collect", "-"],
            ]
        ),
    )


def test_the_fuzzers_reach_every_command_and_format():
    """The seeds cover every format and container; the harness reads piped-in chunks."""
    assert {p.parent.name for p in SEEDS} == {
        "chat-chunk",
        "responses-event",
        "llama-stack-event",
        "anthropic-event",
    }
    assert {p.suffix for p in SEEDS} >= {".sse", ".jsonl", ".json"}
    body = SEEDS[FIXTURES / "chat-chunk" / "text.sse"]
    result = run_chunked(["convert", "-", "--to", "chat-chunk"], body, [1] * 50)
    assert result.code == 0 and re.search(rb"data: \[DONE\]\n\n$", result.stdout)
