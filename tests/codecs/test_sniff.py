"""The source format is decided on the records alone (``chatx.codecs.sniff``), never on
how many of them one read brought: a file read whole, a slow pipe and 7-byte blocks give
the same bytes and notes. A record that names its format decides at once (live output
with no ``--from``)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatx import codecs
from chatx.errors import ChatxError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.reading import decoding, framing
from chatx.reading.framing import load
from chatx.record import Record
from chatx.validation import validate_records
from tests.builders.chat_chunk import chunk
from tests.builders.responses_event import ResponsesBuilder
from tests.paths import ROOT
from tests.streams import CHAT, RESPONSES, sse
from tests.test_properties import SETTINGS, chat_stream, responses_stream

LLAMA = "llama-stack-event"
ANTHROPIC = "anthropic-event"
GEMINI = "gemini-event"
FORMATS = [CHAT, RESPONSES, LLAMA, ANTHROPIC, GEMINI]
FIXTURES = ROOT / "fixtures"
TIMEOUT = 60

# A Responses capture with one chat chunk appended: the chunk names chat-chunk for
# certain, as the first event names responses-event.
RESPONSES_BODY = ResponsesBuilder().message("Hello ", "world").end().bytes()
MIXED = RESPONSES_BODY + sse([chunk({"content": "tail"})], done=False)


def fixture_files() -> list[Path]:
    return sorted(
        p
        for fmt in FORMATS
        for p in (FIXTURES / fmt).iterdir()
        if p.suffix in (".sse", ".jsonl", ".json")
    )


def run(pieces: list[bytes], dst: str, src: str | None = None) -> tuple[Any, ...]:
    """Feed ``pieces`` one by one: the output (None after an error), error and notes."""
    notes = Notes()
    out: list[bytes] = []
    error = None
    try:
        transcoder = Transcoder(dst, src=src, notes=notes)
        out += [transcoder.feed(piece) for piece in pieces]
        out.append(transcoder.finish())
    except ChatxError as exc:
        error = f"{type(exc).__name__}: {exc}"
    summary = [(n.kind, n.message, n.line) for n in notes.summary()]
    return (None if error else b"".join(out)), error, summary


def events_of(data: bytes) -> list[bytes]:
    """An SSE body cut after each event's blank line."""
    assert data.endswith(b"\n\n")
    return [block + b"\n\n" for block in data[:-2].split(b"\n\n")]


def blocks_of(data: bytes, size: int) -> list[bytes]:
    return [data[at : at + size] for at in range(0, len(data), size)]


# -- sniff itself ------------------------------------------------------------------------


def rec(data: Any, line: int = 1, **kw: Any) -> Record:
    return Record(data, line=line, **kw)


CHUNK = rec(chunk({"content": "x"}))
CREATED = rec({"type": "response.created", "response": {}, "sequence_number": 0})
START = rec({"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}})
CHOICES = rec({"choices": []})  # chat-like, not certain


@pytest.mark.parametrize(("record", "name"), [(CHUNK, CHAT), (CREATED, RESPONSES), (START, LLAMA)])
def test_one_record_that_names_its_format_decides_at_once(record, name):
    assert codecs.sniff([record], final=False).name == name


def test_the_first_certain_record_decides_whatever_follows():
    assert codecs.sniff([CREATED, CHUNK]).name == RESPONSES
    assert codecs.sniff([CHUNK, CREATED]).name == CHAT
    assert codecs.sniff([CHOICES, CREATED]).name == RESPONSES


def test_without_a_certain_record_sniff_waits_for_four():
    assert codecs.sniff([CHOICES], final=False) is None
    assert codecs.sniff([CHOICES] * 3, final=False) is None
    assert codecs.sniff([CHOICES] * 4, final=False).name == CHAT
    assert codecs.sniff([CHOICES]).name == CHAT  # the input ended: what it has decides


def test_records_after_the_first_four_never_count():
    assert codecs.sniff([CHOICES] * 4 + [CREATED]).name == CHAT


def test_sniff_iter_reads_no_further_than_it_needs():
    records = iter([CHUNK, CREATED, START])
    codec, head = codecs.sniff_iter(records)
    assert (codec.name, head) == (CHAT, [CHUNK])
    assert next(records) is CREATED


# -- the same bytes, the same output -----------------------------------------------------


@pytest.mark.parametrize("dst", FORMATS)
def test_a_responses_capture_with_a_chat_chunk_appended_reads_the_same_every_way(dst):
    whole = run([MIXED], dst)
    assert whole == run(blocks_of(MIXED, 7), dst)
    assert whole == run(blocks_of(MIXED, 1), dst)
    assert whole == run(events_of(MIXED), dst)
    # Read as the Responses stream it begins as, not as chat chunks.
    assert whole[0] == run([MIXED], dst, RESPONSES)[0]


def test_every_command_reads_the_mixed_capture_as_responses():
    assert load(MIXED, "<input>").format == RESPONSES
    batches = list(decoding.decode(framing.read_records(MIXED)[1]))
    texts = [e.text for batch in batches for e in batch if type(e).__name__ == "TextDelta"]
    assert "".join(texts) == "Hello world"
    assert validate_records(MIXED) == validate_records(MIXED, RESPONSES)


def _framed(payloads: list[Any], container: str, names: bool) -> bytes:
    if container == "jsonl":
        return "".join(json.dumps(p) + "\n" for p in payloads).encode()
    return sse(payloads, done=False, events=names)


def _payloads(path: Path) -> list[Any]:
    return [r.data for r in framing.read_records(path.read_bytes())[1] if not r.done]


@st.composite
def inputs(draw: st.DrawFn) -> bytes:
    """A fixture as it is, a generated stream, or records of several streams (and formats)
    cut and joined, framed as SSE or JSON lines, with a stray [DONE] or bad line."""
    files = fixture_files()
    kind = draw(st.sampled_from(["fixture", "chat", "responses", "mixed", "mixed", "mixed"]))
    if kind == "fixture":
        return draw(st.sampled_from(files)).read_bytes()
    if kind == "chat":
        return sse(draw(chat_stream()))
    if kind == "responses":
        return draw(responses_stream()).bytes(events=draw(st.booleans()))
    parts: list[Any] = []
    for _ in range(draw(st.integers(2, 3))):
        source = draw(st.sampled_from(["file", "chat", "responses"]))
        if source == "file":
            records = _payloads(draw(st.sampled_from(files)))
        elif source == "chat":
            records = draw(chat_stream())
        else:
            records = draw(responses_stream()).events
        start = draw(st.integers(0, len(records)))
        parts += records[start : start + draw(st.integers(1, 8))]
    container = draw(st.sampled_from(["sse", "jsonl"]))
    data = _framed(parts, container, draw(st.booleans()))
    if container == "sse" and draw(st.booleans()):
        extra = draw(st.sampled_from([b"data: [DONE]\n\n", b'data: {"half\n\n', b": hi\n\n"]))
        at = draw(st.integers(0, len(parts)))
        blocks = data.split(b"\n\n")
        data = b"\n\n".join([*blocks[:at], extra.rstrip(b"\n"), *blocks[at:]])
    return data


@st.composite
def splits(draw: st.DrawFn, data: bytes) -> list[bytes]:
    how = draw(st.sampled_from(["cuts", "7", "1", "lines"]))
    if how == "7":
        return blocks_of(data, 7)
    if how == "1":
        return blocks_of(data, 1)
    if how == "lines":
        return data.splitlines(keepends=True)
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=16)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@SETTINGS
@given(st.data(), st.sampled_from(FORMATS), st.sampled_from([None, *FORMATS]))
def test_any_split_of_any_input_gives_the_same_bytes_and_notes(data, dst, src):
    body = data.draw(inputs())
    pieces = data.draw(splits(body))
    assert b"".join(pieces) == body
    assert run(pieces, dst, src) == run([body], dst, src)


# -- live: no --from, and the first record is written at once ---------------------------


def _first_record(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        return data.split(b"\n", 1)[0] + b"\n"
    return data.split(b"\n\n", 1)[0] + b"\n\n"


LIVE = [
    FIXTURES / CHAT / "text.sse",
    FIXTURES / RESPONSES / "text.sse",
    FIXTURES / LLAMA / "text.jsonl",
]


# Gemini has no opening record (no role chunk, no created or start event): its first
# chunk is the first that says something, so a start alone writes nothing there.
OPENING = [fmt for fmt in FORMATS if fmt != GEMINI]


@pytest.mark.parametrize("dst", OPENING)
@pytest.mark.parametrize("path", LIVE, ids=lambda p: p.parent.name)
def test_one_record_that_names_its_format_gives_output_at_once(path, dst):
    first = _first_record(path)
    out = Transcoder(dst).feed(first)
    assert out, "the first record is written without waiting for more"
    assert out == Transcoder(dst, src=path.parent.name).feed(first)


def _named_at_once() -> list[Path]:
    """The fixtures whose first record names its format (all but Azure's empty first)."""
    out = []
    for path in fixture_files():
        records = framing.read_records(path.read_bytes())[1]
        first = next(r for r in records if not r.error and not r.done)
        if codecs.certain(first) is not None:
            out.append(path)
    return out


NAMED_AT_ONCE = _named_at_once()


def _names_itself(data: object) -> bool:
    """A first record that says its format in so many words."""
    if not isinstance(data, dict):
        return False
    kind = data.get("type")
    event = data.get("event")
    return (
        data.get("object") in ("chat.completion.chunk", "chat.completion", "response")
        or (isinstance(kind, str) and kind.startswith("response."))
        or (isinstance(event, dict) and "event_type" in event)
        or isinstance(data.get("completion_message"), dict)  # Llama Stack, not streamed
        or kind in ("message_start", "content_block_start", "ping")  # Anthropic
        or (kind == "message" and isinstance(data.get("content"), list))  # not streamed
        or (kind is None and any(k in data for k in ("candidates", "promptFeedback")))  # Gemini
    )


def test_every_fixture_whose_first_record_names_its_format_is_told_at_once():
    # The others are shapes with no name on them: Azure's empty first chunk, a stream
    # that is one error frame.
    for path in fixture_files():
        records = framing.read_records(path.read_bytes())[1]
        first = next(r for r in records if not r.error and not r.done)
        assert (path in NAMED_AT_ONCE) == _names_itself(first.data), path
    assert len(NAMED_AT_ONCE) > len(fixture_files()) // 2


@pytest.mark.parametrize("path", NAMED_AT_ONCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_detection_holds_back_nothing_when_the_first_record_names_the_format(path):
    """Line by line, a detected source writes what a named one writes."""
    detected, named = Transcoder(CHAT), Transcoder(CHAT, src=path.parent.name)
    for piece in path.read_bytes().splitlines(keepends=True):
        assert detected.feed(piece) == named.feed(piece)


def test_live_pipe_writes_the_first_event_before_stdin_closes():
    command = [sys.executable, "-m", "chatx", "convert", "--to", RESPONSES]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(command, **pipes) as proc:
        try:
            proc.stdin.write(sse([chunk({"role": "assistant", "content": ""})], done=False))
            proc.stdin.flush()
            got, deadline = b"", time.monotonic() + TIMEOUT
            while b"\n\n" not in got and time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stdout], [], [], 1)
                if ready:
                    got += os.read(proc.stdout.fileno(), 65536)
            running = proc.poll() is None
            _, err = proc.communicate(timeout=TIMEOUT)  # closes stdin: the input ends
        finally:
            proc.kill()
    assert got.startswith(b"event: response.created\n"), got
    assert running, "the first event came while chatx still waited for the rest"
    assert proc.returncode == 0, err


def test_a_file_and_a_slow_pipe_give_the_same_output(tmp_path):
    path = tmp_path / "mixed.sse"
    path.write_bytes(MIXED)
    command = [sys.executable, "-m", "chatx", "convert", "--to", CHAT]
    from_file = subprocess.run([*command, str(path)], capture_output=True, timeout=TIMEOUT)
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(command, **pipes) as proc:
        for piece in events_of(MIXED):  # one event at a time, each read on its own
            proc.stdin.write(piece)
            proc.stdin.flush()
            time.sleep(0.005)
        out, err = proc.communicate(timeout=TIMEOUT)
    # The appended chat chunk is no Responses event: skipped, said, exit 2, both ways.
    assert from_file.returncode == proc.returncode == 2, (from_file.stderr, err)
    assert b"<stdin>:31: record skipped: Responses event without a type" in err
    assert from_file.stdout == out
    assert b'"content":"Hello "' in out  # the Responses text, not empty chat chunks
    assert from_file.stderr.replace(str(path).encode(), b"<stdin>") == err
