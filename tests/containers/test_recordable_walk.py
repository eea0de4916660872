"""A Llama Stack recordable mock read as it comes (each call's ``chunks`` array element
by element, each chunk unwrapped and written back at once into a file the calls share)
reads exactly as one parsed whole: the mocks of ``test_llama_mock`` and made ones (many
calls, values, chunks of every kind, wrappers nested, integers beyond 64 bits, lone
surrogates, keys repeated, chunks where no call's are), and mocks cut short, not JSON or
nested too deep, read with every threshold at 0 and in reads of 1 and 7 bytes; every
command the same; many calls on one file descriptor; and a large mock read in the
memory of a small one."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatx.containers import json_document, json_walk, recordable
from chatx.errors import InputError
from tests.containers.common import Slow, arrays_walked, commands_alike, outcome, walked_as_whole
from tests.containers.test_big_har import peak_rss
from tests.containers.test_llama_mock import CALL, JSON_KEY, REPR_KEY, TEXT, TOOL_KEY, recorded
from tests.containers.test_llama_mock import _chunk as chunk
from tests.containers.test_llama_mock import _enum as enum
from tests.containers.test_llama_mock import _model as model

BIG = 123456789012345678901234567890
DEEP: Any = {"text": "deep", "type": "text"}
for _ in range(210):  # past what a recorded value is unwrapped through (limits.MAX_DEPTH)
    DEEP = {"inner": DEEP}
DATED = {"__datetime__": "2025-03-06T10:00:00", "__module__": "datetime", "__class__": "datetime"}


def mock(calls: dict[str, Any], indent: bool = True) -> bytes:
    return json.dumps(calls, indent=2 if indent else None).encode()


def generator(chunks: Any, kind: Any = "generator") -> dict[str, Any]:
    return {"chunks": chunks, "type": kind}


def _many(count: int) -> dict[str, Any]:
    return {json.dumps([f"model-{n}", []]) + "_{}": generator(TEXT) for n in range(count)}


MADE = {
    "recorded": mock(recorded()),
    "recorded compact": mock(recorded(), indent=False),
    "many calls": mock(_many(40), indent=False),
    "values only": mock({TOOL_KEY: recorded()[TOOL_KEY]}),
    "empty chunks": mock({JSON_KEY: generator([])}),
    "no type": mock({JSON_KEY: {"chunks": TEXT}}),
    "type value beside chunks": mock({JSON_KEY: {"chunks": TEXT, "type": "value", "value": 1}}),
    "chunks not an array": mock({JSON_KEY: generator("text"), REPR_KEY: generator({"a": [1]})}),
    "chunks of every kind": mock({JSON_KEY: generator([1, 2.5, None, True, "s", [1, [2]], {}])}),
    "wrappers nested": mock({JSON_KEY: generator([chunk("progress", {
        "text": "a", "type": "text", "at": DATED, "kind": enum("K", "v"),
        "list": [model("M", {"e": enum("E", "x")})]})])}),  # fmt: skip
    "big ints": mock({JSON_KEY: generator([model("C", {"n": BIG}), {"n": -BIG}])}),
    "key with escapes": mock({'["m\\"\\u00e9\\n", []]_{}': generator(CALL), "(é": generator(TEXT)}),
    "repeated key": b'{"[1]": {"chunks": [1, 2]}, "[1]": {"chunks": [3]}, "[2]": {"chunks": [4]}}',
    "chunks deeper": mock({JSON_KEY: {"type": "generator", "x": {"chunks": [1]}}}),
    "chunks at the top": b'{"chunks": [1, 2], "[1]": {"chunks": [3]}}',
    "top an array": b'[{"chunks": [1]}, {"chunks": [2]}]',
    "lone surrogate": b'{"[1]": {"chunks": [{"t": "a\\ud83d"}, 2]}, "[2]": {"chunks": [3]}}',
    "lone surrogate exact": b'{"[1]": {"chunks": [{"t": "a\\ud83d"}]}, "n": 12345678901234567890123}',
    "unwrapped too deep": mock({JSON_KEY: generator([TEXT[0], DEEP, TEXT[1]]), "[2]": generator([1])}),
    "nested too deep": b'{"[1]": {"chunks": [1, ' + b"[" * 1100 + b"]" * 1100 + b"]}}",
    "missing comma": b'{"[1]": {"chunks": [1\n 2]}}',
    "trailing comma": b'{"[1]": {"chunks": [1,\n]}}',
    "bad element": b'{"[1]": {"chunks": [{"a"\n 1}]}}',
    "wrong close": b'{"[1]": {"chunks": [1}}',
    "error after": b'{"[1]": {"chunks": [1],\n\n "x": ]}}',
    "after the document": mock(recorded()) + b"\nx",
}  # fmt: skip
_WHOLE = mock(recorded(), indent=False)
CUTS = {f"cut at {n}": _WHOLE[:n] for n in range(200, len(_WHOLE), 131)}


def documents() -> Iterator[tuple[str, bytes]]:
    yield from MADE.items()
    yield from CUTS.items()


def read(data: bytes, block: int | None = None) -> Any:
    """Each call a mock holds (its fields and body), or the error."""
    try:
        return [outcome(entry) for entry in recordable.entries(Slow(data, block))]
    except InputError as exc:
        return ("InputError", exc.message, exc.line)


@pytest.mark.parametrize("block", [None, 1, 7])
@pytest.mark.parametrize("run", [32, 1 << 20])
def test_a_mock_walked_reads_as_one_parsed_whole(
    monkeypatch: pytest.MonkeyPatch, block: int | None, run: int
) -> None:
    _, walks = walked_as_whole(monkeypatch, list(documents()), read, block, run)
    assert all(isinstance(sink, recordable._Chunks) for sink in walks)
    assert len(walks) > 40 + len(MADE)  # the chunks were walked, not parsed with the rest


def test_what_the_whole_read_says_is_what_was_meant() -> None:
    """A few of the cases above, read whole: the errors are where they belong."""
    assert [said[-1] for said in read(MADE["repeated key"])] == [b"3\n", b"4\n"]
    assert read(MADE["top an array"])[0] == "InputError"
    lone = read(MADE["lone surrogate"])
    assert lone[0] == "InputError"  # orjson reads no lone surrogate
    lone_exact = read(MADE["lone surrogate exact"])
    assert lone_exact[0][-1][0] == "BodyError"  # read as JSON.parse does, but not written
    deep = read(MADE["unwrapped too deep"])
    assert deep[0][-1] == ("BodyError", "a recorded value nested deeper than 200 levels")
    assert deep[1][-1] == b"1\n"  # one call's chunk refused, not the next call's
    assert read(MADE["nested too deep"])[0] == "InputError"
    assert read(MADE["missing comma"])[2] == 2
    (dated,) = read(MADE["wrappers nested"])
    event = json.loads(dated[-1])["event"]
    assert event["delta"]["at"] == "2025-03-06T10:00:00"
    assert event["delta"]["list"] == [{"e": "x"}]
    assert [said[-1] for said in read(MADE["chunks not an array"])] == [b"", b""]


def test_many_calls_share_one_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """An attacker's mock of a million small calls must not open a file for each: the
    walked calls are parts of one temporary file."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs Linux /proc to count open files")
    arrays_walked(monkeypatch)
    data = mock(_many(3000), indent=False)
    before = len(os.listdir("/proc/self/fd"))
    calls = list(recordable.entries(io.BytesIO(data)))
    assert len(os.listdir("/proc/self/fd")) - before <= 2
    assert len(calls) == 3000
    assert {b"".join(call.pieces()) for call in calls} == {recordable._body(generator(TEXT), True)}


def _files(folder: Path) -> Iterator[str]:
    for name in ("recorded", "many calls", "big ints", "unwrapped too deep", "missing comma"):
        path = folder / (name.replace(" ", "-") + ".json")
        path.write_bytes(MADE[name])
        yield str(path)
    cut = folder / "cut.json"
    cut.write_bytes(list(CUTS.values())[len(CUTS) // 2])
    yield str(cut)


def test_every_command_reads_a_walked_mock_as_a_whole_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_document, "_BLOCK", 7)  # these two matter only once walked
    monkeypatch.setattr(json_document, "KEEP", 0)
    cases = commands_alike(list(_files(tmp_path)), monkeypatch, json_walk, BIG=0)
    assert len(cases) > 100


def _large(path: Path, count: int) -> None:
    """A mock of one call of ``count`` text chunks, as the recorder wrapped them."""
    with path.open("wb") as out:
        out.write(b"{" + json.dumps(JSON_KEY).encode() + b': {"type": "generator", "chunks": [')
        out.write(json.dumps(TEXT[0]).encode())
        piece = json.dumps(chunk("progress", {"text": "Hello there, ", "type": "text"}))
        for _ in range(count):
            out.write(b",\n" + piece.encode())
        out.write(b",\n" + json.dumps(TEXT[2]).encode() + b"]}}\n")


def test_a_large_mock_is_read_in_the_memory_of_a_small_one(tmp_path: Path) -> None:
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    _large(small, 10)
    _large(large, 150_000)
    assert large.stat().st_size > 36 << 20
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    for args in (["ls"], ["convert", "--to", "responses-event", "-o", str(tmp_path / "o")]):
        peak, code, err = peak_rss([*args[:1], str(large), *args[1:]])
        assert code == 0, err
        # Held whole, the mock parsed takes several times its 40 MB.
        assert peak - base < 32 << 20, (args, peak >> 20, base >> 20)


@pytest.mark.parametrize("reader", ["mock", "har"])
def test_a_long_element_piped_in_is_scanned_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """A pipe gives 64 KiB a read: were each read scanned with all held before it, a
    64 MiB element would be scanned a thousand times. Each read asks for as many bytes
    again as are held, and is filled: the reads grow, and are few."""
    from chatx.containers import har

    text = b"x" * (2 << 20)
    reads: list[int] = []
    real = json_walk.fill

    def counted(read: Any, size: int) -> bytes:
        got = real(read, size)
        reads.append(len(got))
        return got

    monkeypatch.setattr(json_walk, "fill", counted)
    monkeypatch.setattr(json_document, "_BLOCK", 1024)
    monkeypatch.setattr(har, "_BLOCK", 1024)
    if reader == "mock":
        arrays_walked(monkeypatch)
        data = b'{"[1]": {"chunks": [{"t": "' + text + b'"}]}}'
        (call,) = recordable.entries(Slow(data, 4096))
        assert b"".join(call.pieces()) == b'{"t":"' + text + b'"}\n'
    else:
        data = b'{"log": {"entries": [{"response": {"content": {"text": "' + text + b'"}}}]}}'
        assert len(list(har.entries(Slow(data, 4096)))) == 1
    assert 10 <= len(reads) < 40, reads
