"""A Llama Stack recording read as it comes (its ``response.body`` array element by
element, each written back at once into a spool) reads exactly as one parsed whole:
the fixture, the real samples and made recordings (streamed chunks, SSE lines, a body
not streamed, elements of every kind, integers beyond 64 bits, lone surrogates, a body
before the request), and recordings that are cut short, not JSON or nested too deep,
read with every threshold at 0 and in reads of 1 and 7 bytes; every command the same;
and a large one read in the memory of a small one."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.containers import json_document, llama_stack_recording
from chatx.containers.bodies import BodyError
from chatx.errors import InputError
from tests.containers import make_fixtures as made
from tests.containers.common import FIXTURES, ROOT, SAMPLES, arrays_walked, chatx, walked_as_whole
from tests.containers.test_big_har import peak_rss
from tests.containers.test_har_walk_commands import runs

sys.path.insert(0, str(ROOT / "bench"))
import big_recording  # noqa: E402

CHUNK = "openai.types.chat.chat_completion_chunk.ChatCompletionChunk"
REQUEST = {"method": "POST", "url": "http://localhost:8321/v1/chat/completions",
           "body": made.CHAT_REQUEST, "endpoint": "/v1/chat/completions"}  # fmt: skip
CHUNKS = made._payloads(made.CHAT)
SSE_LINES = made.CHAT.decode().split("\n")[:-1]


def recording(body: Any, streaming: Any = True, first: bool = False, indent: bool = True) -> bytes:
    """A recording as the recorder writes one (``first``: its body before the request;
    ``streaming`` None: no is_streaming)."""
    response: dict[str, Any] = {"body": body}
    if streaming is not None:
        response["is_streaming"] = streaming
    if first:
        document = {"response": response, "test_id": "t", "request": REQUEST}
    else:
        document = {"test_id": "t", "request": REQUEST, "response": response}
    return json.dumps(document, indent=2 if indent else None).encode()


def wrapped(items: list[Any], kind: str = CHUNK) -> list[Any]:
    return [{"__type__": kind, "__data__": item} for item in items]


BIG = 123456789012345678901234567890
MADE = {
    "chunks": recording(wrapped(CHUNKS)),
    "chunks compact": recording(wrapped(CHUNKS), indent=False),
    "chunks first": recording(wrapped(CHUNKS), first=True),
    "chunks not streamed": recording(wrapped(CHUNKS), streaming=False),
    "chunks streaming unsaid": recording(wrapped(CHUNKS), streaming=None),
    "two types": recording(wrapped(CHUNKS[:2]) + wrapped(CHUNKS[2:], "Other"), streaming=False),
    "data first": recording([{"__data__": c, "__type__": CHUNK} for c in CHUNKS], False),
    "more keys": recording([{"__type__": CHUNK, "__data__": c, "x": [1]} for c in CHUNKS], False),
    "object": recording({"__type__": "X", "__data__": {"a": 1, "b": [1, 2]}}, streaming=False),
    "null": recording(None),
    "empty streamed": recording([]),
    "empty not streamed": recording([], streaming=False),
    "big ints": recording(wrapped([{**c, "created": BIG} for c in CHUNKS])),
    "big int not streamed": recording(wrapped([{"n": BIG}, {"n": -BIG}]), streaming=False),
    "sse lines": recording(SSE_LINES),
    "sse lines not streamed": recording(SSE_LINES, streaming=False),
    "strings with quotes": recording(['a","b', '\\",\\"', "}, {", "é😀", "\\\\", ""]),
    "data with brackets": recording(wrapped([{"t": "},{"}, {"t": "a"}, {"t": "},{ x"}])),
    "lines then objects": recording([*SSE_LINES[:3], *wrapped(CHUNKS[:2]), "tail"]),
    "scalars": recording([1, 2.5, -3e2, True, False, None, "s", [1, [2]], {"a": {}}]),
    "scalars not streamed": recording([1, None, "s", [], {}], streaming=False),
    "nested arrays": recording([[[[[[[1]]]]]], {"a": [[[[{"b": "]"}]]]]}]),
    "lone surrogate": b'{"request": {}, "response": {"body": ["a\\ud83d", "\\ude00b"],'
    b' "is_streaming": true}}',
    "lone surrogate exact": b'{"request": {}, "response": {"body": ["a\\ud83d", "\\ude00b"],'
    b' "is_streaming": true}, "n": 1234567890123456789012}',
    "lone surrogate in data": b'{"request": {}, "response": {"body": [{"__data__": "a\\ud83d"}],'
    b' "is_streaming": true}, "n": 1234567890123456789012}',
    "nested deep but read": recording(wrapped([json.loads("[" * 300 + "]" * 300)]), indent=False),
    "nested too deep": b'{"request": {}, "response": {"body": [1, '
    + b"[" * 1100
    + b"]" * 1100
    + b"]}}",
    "nested too deep after": b'{"request": {}, "response": {"body": [1], "x": '
    + b"[" * 1100
    + b"]" * 1100
    + b"}}",
    "missing comma": b'{"request": {}, "response": {"body": [1\n 2]}}',
    "trailing comma": b'{"request": {}, "response": {"body": [1,\n]}}',
    "leading comma": b'{"request": {}, "response": {"body": [,1]}}',
    "bad element": b'{"request": {}, "response": {"body": [{"a"\n 1}]}}',
    "bad scalar": b'{"request": {}, "response": {"body": [1, tru]}}',
    "closing brace": b'{"request": {}, "response": {"body": [1, }]}}',
    "wrong close": b'{"request": {}, "response": {"body": [1}}',
    "after the array": b'{"request": {}, "response": {"body": [1], "is_streaming": tru}}',
    "error after": b'{"request": {}, "response": {"body": [1],\n\n "x": ]}}',
    "not json": b'{"request": {}, "response": {"body": [hello]}}',
    "after the document": recording(wrapped(CHUNKS)) + b"\nx",
    "no request": recording(wrapped(CHUNKS)).replace(b'"request"', b'"requests"'),
}
# Cut short at every few bytes of a recording (inside strings, elements, between them).
_WHOLE = recording(wrapped(CHUNKS[:3]))
CUTS = {f"cut at {n}": _WHOLE[:n] for n in range(300, len(_WHOLE), 97)}


def documents() -> Iterator[tuple[str, bytes]]:
    yield "fixture", (FIXTURES / "recording.json").read_bytes()
    if SAMPLES.is_dir():
        for path in sorted((SAMPLES / "llama-stack-recording").glob("*.json")):
            yield path.name, path.read_bytes()
    yield from MADE.items()
    yield from CUTS.items()


class _Reads(io.RawIOBase):
    """Bytes read ``size`` at a time."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.at, self.size = data, 0, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        piece = self.data[self.at : self.at + min(self.size, len(buffer))]
        buffer[: len(piece)] = piece
        self.at += len(piece)
        return len(piece)


def read(data: bytes, size: int | None = None) -> Any:
    """What a reader makes of ``data``: each entry and its body (whole and in pieces),
    or the error."""
    stream: Any = io.BytesIO(data) if size is None else io.BufferedReader(_Reads(data, size), 8)
    try:
        found = []
        for entry in llama_stack_recording.entries(stream):
            said: list[Any] = [entry.index, entry.line, entry.method, entry.url, entry.status,
                               entry.content_type, entry.request, entry.refused]  # fmt: skip
            for body in (entry.body, lambda e=entry: b"".join(e.pieces())):
                try:
                    said.append(body())
                except BodyError as exc:
                    said.append(("BodyError", str(exc)))
            found.append(said)
        return found
    except InputError as exc:
        return ("InputError", exc.message, exc.line)


@pytest.mark.parametrize("size", [None, 1, 7])
@pytest.mark.parametrize("run", [32, 1 << 20])
def test_a_recording_walked_reads_as_one_parsed_whole(
    monkeypatch: pytest.MonkeyPatch, size: int | None, run: int
) -> None:
    whole, walks = walked_as_whole(monkeypatch, list(documents()), read, size, run)
    assert any(isinstance(said, tuple) for said in whole)  # errors are among them
    assert len(walks) > len(MADE)  # the bodies were walked, not parsed with the rest


def test_what_the_whole_read_says_is_what_was_meant() -> None:
    """A few of the cases above, read whole, as the recorder's reader reads them."""
    (said,) = read(MADE["sse lines"])
    assert said[-1] == said[-2] == made.CHAT
    (said,) = read(MADE["chunks"])
    assert said[-1].splitlines() == [orjson.dumps(chunk) for chunk in CHUNKS]
    (said,) = read(MADE["empty streamed"])
    assert said[-1] == b"\n"
    (said,) = read(MADE["two types"])
    assert [item["__type__"] for item in orjson.loads(said[-1])] == [CHUNK] * 2 + ["Other"] * (
        len(CHUNKS) - 2
    )
    assert read(MADE["big ints"])[0][-1].count(str(BIG).encode()) == len(CHUNKS)
    assert read(MADE["nested deep but read"])[0][-1][0] == "BodyError"
    assert read(MADE["lone surrogate"])[0] == "InputError"
    assert read(MADE["lone surrogate exact"])[0][-1] == "a\ud83d\n\ude00b\n".encode(
        "utf-8", "surrogatepass"
    )
    assert read(MADE["nested too deep"])[0] == "InputError"
    assert read(MADE["missing comma"])[2] == 2


def _files(folder: Path) -> Iterator[str]:
    yield str(FIXTURES / "recording.json")
    if SAMPLES.is_dir():
        yield from sorted(str(p) for p in (SAMPLES / "llama-stack-recording").glob("*.json"))
    cut = list(CUTS)[len(CUTS) // 2]
    for name in ("sse lines", "chunks first", "big ints", "scalars", "not json", cut):
        path = folder / (name.replace(" ", "-") + ".json")
        path.write_bytes({**MADE, **CUTS}[name])
        yield str(path)


def test_every_command_reads_a_walked_recording_as_a_whole_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [args for path in _files(tmp_path) for args in runs(path)]
    assert len(cases) > 20
    before = [chatx(*args) for args in cases]
    arrays_walked(monkeypatch)
    monkeypatch.setattr(json_document, "_BLOCK", 7)
    for args, was in zip(cases, before, strict=True):
        now = chatx(*args)
        assert (now.code, now.stdout, now.err) == (was.code, was.stdout, was.err), args


def test_a_large_recording_is_read_in_the_memory_of_a_small_one(tmp_path: Path) -> None:
    chunk = made.CHAT.split(b"\n\n")[1] + b"\n\n"
    (tmp_path / "small.sse").write_bytes(chunk * 10)
    (tmp_path / "large.sse").write_bytes(chunk * 80_000)
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    big_recording.recording(small, tmp_path / "small.sse", lines=False)
    big_recording.recording(large, tmp_path / "large.sse", lines=False)
    assert large.stat().st_size > 36 << 20
    base, code, err = peak_rss(["ls", str(small)])
    assert code == 0, err
    for args in (["ls"], ["convert", "--to", "responses-event", "-o", str(tmp_path / "o")]):
        peak, code, err = peak_rss([*args[:1], str(large), *args[1:]])
        assert code == 0, err
        # Held whole, the recording parsed takes several times its 40 MB.
        assert peak - base < 32 << 20, (args, peak >> 20, base >> 20)
