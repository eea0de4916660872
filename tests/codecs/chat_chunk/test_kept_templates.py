"""The chat run hook's kept templates (chat_chunk/run_hook.py): the template made for
each kind of item of a lane (reasoning, text, a tool call's arguments with a hole for
the call's index) is kept, and where the template of the moment does not know a record,
a kept one that still holds may, so that a kind that comes back, or the next call,
needs no template made and its first plain chunk is in a run.

The rule: every run found so decodes to exactly the events and notes the record-by-record
path gives (runs off: each record parsed and decoded), and every format's output is byte
for byte the same. Each case is read whole (after its first lines, so that the rest comes
raw, many records at once) and in 7-byte blocks (records one at a time), and the runs
found by a kept template are counted, so that a case says which path it took.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx import codecs
from chatx.codecs.base import open_decoder
from chatx.codecs.byte_template import OBFUSCATION, TEXT, ByteTemplate
from chatx.codecs.chat_chunk.run_hook import (
    CallTemplates,
    ChatRunHook,
    KindTemplate,
    _made,
    _payload,
)
from chatx.codecs.template import DeltaTemplate, RunDecoder
from chatx.collect import collect_side
from chatx.containers.sse import SSEReader
from chatx.errors import ChatxError, InputError
from chatx.notes import Notes
from chatx.pipeline import Transcoder
from chatx.reading.framing import load
from chatx.record import Record
from tests.bench_streams import generate
from tests.captures import capture_params
from tests.paths import FIXTURES

CHAT = "chat-chunk"
FORMATS = ("chat-chunk", "responses-event", "anthropic-event", "llama-stack-event", "gemini-event")
SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=250)
TEXTS = st.text(alphabet='ab "\\é😀\n%', min_size=1, max_size=6)


@contextmanager
def record_by_record() -> Iterator[None]:
    """No run is found: every record is parsed and decoded on its own."""
    with mock.patch.object(ChatRunHook, "run", lambda self, records, start: None):
        yield


def cuts_of(body: bytes, block: int | None) -> list[int]:
    """Where the pieces of ``body`` start: 7-byte blocks, or the first lines then the
    rest at once (fed whole, a body is parsed before its format is known: no run)."""
    if block is not None:
        return list(range(0, len(body), block))
    head = body.find(b"\n\n", 0, 2000)
    return [0, head + 2] if head > 0 else [0]


def converted(
    body: bytes, dst: str, block: int | None, choice: int | None = None
) -> tuple[bytes, list[str], int]:
    """``body`` into ``dst`` (pieces as :func:`cuts_of` says): the bytes, the notes and
    the runs a kept template found."""
    notes = Notes()
    transcoder = Transcoder(dst, notes=notes, choice=choice)
    starts = cuts_of(body, block)
    ends = [*starts[1:], len(body)]
    try:
        out = b"".join(transcoder.feed(body[i:j]) for i, j in zip(starts, ends, strict=True))
        out += transcoder.finish()
    except ChatxError as exc:  # several choices into a format of one: --choice
        out = b"error: " + str(exc).encode()
    decoder = transcoder.decoder
    reused = decoder.hook.reused if type(decoder) is RunDecoder else 0
    return out, sorted(repr(note) for note in notes.summary()), reused


def same_bytes(body: bytes, choices: tuple[int | None, ...] = (None,)) -> int:
    """Assert every format's output and notes are the record-by-record ones, whole and
    in 7-byte blocks (of each of ``choices``); the runs kept templates found (in all)."""
    reused = 0
    for dst in FORMATS:
        for block in (None, 7):
            for choice in choices:
                with record_by_record():
                    expected = converted(body, dst, block, choice)
                got = converted(body, dst, block, choice)
                assert got[:2] == expected[:2], (dst, block, choice)
                reused += got[2]
    return reused


def decoded(body: bytes, block: int | None) -> tuple[list[Any], list[Any], int]:
    """The chat decoder's events and notes of an SSE ``body`` as the pipeline feeds it
    (raw records; runs given whole, their records' batches in turn), and the runs a
    kept template found."""
    notes = Notes()
    decoder = open_decoder(codecs.get(CHAT), notes)
    assert type(decoder) is RunDecoder
    reader = SSEReader()
    reader.raw = True
    starts = cuts_of(body, block)
    ends = [*starts[1:], len(body)]
    events: list[Any] = []
    for records in [*(reader.feed(body[i:j]) for i, j in zip(starts, ends, strict=True))]:
        _take(decoder, records, events, notes)
    _take(decoder, reader.finish(), events, notes)
    events += decoder.finish()
    said = [(note.kind, note.message, note.line) for note in notes.items]
    return events, said, decoder.hook.reused


def _take(decoder: RunDecoder, records: list[Any], events: list[Any], notes: Notes) -> None:
    position = 0
    while position < len(records):
        record = records[position]
        notes.line = record.line
        run = decoder.run(records, position) if record.raw is not None else None
        if run is not None:
            events += [event for batch in run.batches() for event in batch]
            position += len(run.texts)
            continue
        try:
            events += decoder.feed(record)
        except InputError as exc:
            events.append(("skipped", exc.message))
        position += 1


def same_events(body: bytes) -> int:
    """Assert the events and notes are the record-by-record ones, whole and in 7-byte
    blocks; the runs kept templates found."""
    reused = 0
    for block in (None, 7):
        with record_by_record():
            expected = decoded(body, block)
        got = decoded(body, block)
        assert got[:2] == expected[:2], block
        reused += got[2]
    return reused


def collected(body: bytes) -> list[Any]:
    """``chatx collect --as FMT`` of ``body`` into each format, read in memory (where
    runs reach the Assembler whole, their raw payloads bytes or bytearrays), and its
    notes."""
    out: list[Any] = []
    for dst in FORMATS:
        try:
            out.append(orjson.dumps(collect_side(load(body, "<stream>"), dst)))
        except ChatxError as exc:
            out.append(str(exc))
    return out


def same_collected(body: bytes) -> None:
    with record_by_record():
        expected = collected(body)
    assert collected(body) == expected


# -- streams -----------------------------------------------------------------------------


class Stream:
    """A chat stream written chunk by chunk as OpenAI writes it (compact JSON), whose
    envelope (id, model, created, system_fingerprint, obfuscation) may change."""

    def __init__(self) -> None:
        self.envelope: dict[str, Any] = {
            "id": "chatcmpl-a",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "gpt-4o",
            "service_tier": "default",
            "system_fingerprint": "fp_1",
        }
        self.obfuscated = True
        self.blocks: list[bytes] = []
        self.count = 0

    def chunk(self, delta: dict[str, Any], lane: int = 0, **more: Any) -> None:
        choice = {"index": lane, "delta": delta, "logprobs": None, "finish_reason": None}
        choice.update(more.pop("choice", {}))
        data = {**self.envelope, "choices": [choice], **more}
        if self.obfuscated:
            self.count += 1
            data["obfuscation"] = "x" * (self.count % 7 + 1)
        self.blocks.append(b"data: " + orjson.dumps(data) + b"\n\n")

    def body(self) -> bytes:
        return b"".join(self.blocks)


def call_start(call: int) -> dict[str, Any]:
    entry = {"index": call, "id": f"call_{call}", "type": "function"}
    return {"tool_calls": [{**entry, "function": {"name": "f", "arguments": ""}}]}


def args(call: int, text: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": call, "function": {"arguments": text}}]}


def sealed(text: str) -> dict[str, Any]:
    """Reasoning with its thinking block's signature: it seals the reasoning item."""
    block = {"type": "thinking", "thinking": text, "signature": "c2ln"}
    return {"reasoning_content": text, "thinking_blocks": [block]}


def agent_turns(turns: int = 3, calls: int = 3, words: int = 12) -> bytes:
    """Turns of reasoning, text and tool calls, each kind coming back in the next turn;
    one stream, then a second after [DONE] with another id."""
    stream = Stream()
    for second in (False, True):
        if second:
            stream.envelope["id"] = "chatcmpl-b"
        stream.chunk({"role": "assistant", "content": None, "reasoning_content": ""})
        call = 0
        for turn in range(turns):
            for k in range(words):
                stream.chunk({"reasoning_content": f'r{turn}.{k} "q" é\\'})
            for k in range(words):
                stream.chunk({"content": f"t{turn}.{k} "})
            for _ in range(calls):
                stream.chunk(call_start(call))
                for k in range(words):
                    stream.chunk(args(call, f'{{"a{k}": "{call}\\"'))
                call += 1
        stream.chunk({}, choice={"finish_reason": "tool_calls"})
        stream.blocks.append(b"data: [DONE]\n\n")
    return stream.body()


# -- the cases ---------------------------------------------------------------------------


def test_each_kind_coming_back_and_each_next_call_is_a_run_of_a_kept_template():
    body = agent_turns()
    assert same_events(body) > 0
    assert same_bytes(body) > 0
    # Whole: one template made per kind and stream, every other change found by a kept
    # one (the next call's first chunk too).
    # Per stream: reasoning and text come back twice, eight calls follow the first.
    assert decoded(body, None)[2] == 2 * (2 * 2 + 8)
    assert converted(body, "responses-event", None)[2] == 2 * (2 * 2 + 8)


def test_the_bench_mixed_stream_decodes_as_record_by_record():
    body = generate.chat_bytes("mixed", 3000)
    assert same_events(body) > 0
    assert same_bytes(body) > 0
    same_collected(body)


def test_collect_reads_the_runs_as_record_by_record():
    """collect reads a body in memory: runs reach the Assembler whole, and some raw
    payloads are bytearrays (a line the splitter cut in place)."""
    same_collected(agent_turns())
    same_collected(generate.chat_bytes("mixed", 1500))


RAW_KINDS = st.sampled_from([bytes, bytearray])  # what the readers give


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=200)
@given(
    texts=st.lists(TEXTS, min_size=1, max_size=80),
    kinds=st.lists(RAW_KINDS, min_size=80, max_size=80),
    other=st.integers(0, 79),
    how=st.sampled_from(["head", "end", "short", "none"]),
)
def test_a_block_reads_bytes_and_bytearrays_as_match_does(texts, kinds, other, how):
    """The block reader's run of raw payloads, bytes or bytearrays, ends where match()
    says, whatever ends it: another head, another end, a payload too short."""
    stand_in = {"a": 1, "t": TEXT, "o": OBFUSCATION, "z": [2]}
    template = ByteTemplate.make(stand_in, [TEXT, OBFUSCATION])
    assert template is not None and template.block is not None
    raws: list[Any] = []
    for k, text in enumerate(texts):
        raw = orjson.dumps({"a": 1, "t": text, "o": "x" * (k % 3), "z": [2]})
        if k == other:
            raw = {
                "head": b'{"a":2' + raw[6:],
                "end": raw[:-3] + b"3]}",
                "short": b'{"a":1,"t":"',
            }.get(how, raw)
        raws.append(kinds[k](raw))
    records = [Record(raw=raw, line=k) for k, raw in enumerate(raws)]
    each = template.read_each(records, 0, None, template.at[0], template.at[1])
    assert template.read(records, 0, template.at[0], template.at[1]) == each


@pytest.mark.parametrize("index_first", [True, False])
@pytest.mark.parametrize("obfuscated", [True, False])
def test_a_call_template_is_the_one_made_of_that_calls_chunk(index_first, obfuscated):
    """The template of call k from a lane's call template is the one made of a chunk of
    call k (the same bytes, holes and delta), wherever the index is in the entry."""
    decoder = open_decoder(codecs.get(CHAT), Notes())
    decoder.feed(plain_record({"role": "assistant", "content": None}))
    decoder.feed(plain_record(call_start(3)))
    entry: dict[str, Any] = {"index": 3, "function": {"arguments": "x"}}
    if not index_first:
        entry = {"function": {"arguments": "x"}, "index": 3}
    data = plain_record({"tool_calls": [entry]}, obfuscated).data
    events = decoder.hook.plain.chunk(data)
    made = _made(data, events)
    assert type(made) is CallTemplates
    for call in (3, 0, 7, 12345, -1, 2**64 - 1, -(2**63)):
        found = _payload(data, events)
        assert found is not None
        chunk, delta, before, after = found
        chunk["choices"][0]["delta"]["tool_calls"][0]["index"] = call
        one = DeltaTemplate.make(chunk, delta, before, after)
        derived = made.of(call)
        assert one is not None and derived is not None
        assert (derived.bytes.head, derived.bytes.rest, derived.bytes.at) == (
            one.bytes.head,
            one.bytes.rest,
            one.bytes.at,
        )
        assert (derived.text_at, derived.obfuscation_at) == (one.text_at, one.obfuscation_at)
        assert derived.proto == replace(delta, call=call)
        assert made.of(call) is derived  # asked again: the same
    # Beyond 64 bits reading says a note; a bool is no index.
    assert made.of(2**64) is None and made.of(-(2**63) - 1) is None
    assert made.of(True) is None and made.of(None) is None


def plain_record(delta: dict[str, Any], obfuscated: bool = False) -> Record:
    data: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 1}
    data["model"] = "m"
    data["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    if obfuscated:
        data["obfuscation"] = "abc"
    return Record(data, line=1)


@pytest.mark.parametrize("path", capture_params(CHAT))
def test_a_capture_decodes_and_converts_as_record_by_record(path):
    body = path.read_bytes()
    if path.suffix == ".sse":
        same_events(body)
    same_bytes(body)


FIXTURE_FILES = sorted(
    p for p in (FIXTURES / CHAT).iterdir() if p.suffix in (".sse", ".jsonl", ".json")
)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_a_fixture_decodes_and_converts_as_record_by_record(path: Path):
    body = path.read_bytes()
    if path.suffix == ".sse":
        same_events(body)
    same_bytes(body)


# -- generated streams -------------------------------------------------------------------

KINDS = st.sampled_from(["reasoning_content", "reasoning", "content", "args", "call"])
STEP = st.one_of(
    st.tuples(KINDS, st.integers(0, 2), st.lists(TEXTS, min_size=1, max_size=8)),
    st.tuples(
        st.sampled_from(
            [
                "id",
                "model",
                "created",
                "fingerprint",
                "obfuscation",
                "role",
                "finish",
                "usage",
                "logprobs",
                "done",
                "comment",
                "seal",
                "lane",
            ]
        ),
        st.integers(0, 2),
        st.lists(TEXTS, min_size=1, max_size=2),
    ),
)


def written(steps: list[tuple[str, int, list[str]]]) -> bytes:
    """A stream of ``steps``: runs of one kind (the call ``n`` of a lane's arguments, a
    call opened), envelope changes, and what ends or breaks a run."""
    stream = Stream()
    stream.chunk({"role": "assistant", "content": ""})
    lane = 0
    for kind, n, texts in steps:
        if kind in ("reasoning_content", "reasoning", "content"):
            for text in texts:
                stream.chunk({kind: text}, lane)
        elif kind == "args":
            for text in texts:
                stream.chunk(args(n, text), lane)
        elif kind == "call":
            stream.chunk(call_start(n), lane)
        else:
            _other(stream, kind, n, texts[0])
            lane = n % 2 if kind == "lane" else lane
    return stream.body() + b"data: [DONE]\n\n"


def _other(stream: Stream, kind: str, n: int, text: str) -> None:
    if kind in ("id", "model", "created", "fingerprint", "obfuscation"):
        _envelope(stream, kind, n)
    elif kind == "role":
        stream.chunk({"role": "assistant", "content": ""})
    elif kind == "finish":
        stream.chunk({}, choice={"finish_reason": ["stop", "tool_calls", "length"][n]})
    elif kind == "usage":
        usage = {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1}
        stream.chunk({"content": text}, usage=usage)
    elif kind == "logprobs":
        entry = {"token": text, "logprob": -0.5, "bytes": list(text.encode()), "top_logprobs": []}
        stream.chunk({"content": text}, choice={"logprobs": {"content": [entry]}})
    elif kind == "done":
        stream.blocks.append(b"data: [DONE]\n\n")
    elif kind == "comment":
        stream.blocks.append(b": keep-alive\n\n")
    elif kind == "seal":
        stream.chunk(sealed(text))


def _envelope(stream: Stream, kind: str, n: int) -> None:
    envelope = stream.envelope
    if kind == "id":
        envelope["id"] = f"chatcmpl-{'abc'[n]}"
    elif kind == "model":
        envelope["model"] = f"gpt-{n}"
    elif kind == "created":
        envelope["created"] = 1700000000 + n
    elif kind == "fingerprint":
        if n:
            envelope["system_fingerprint"] = f"fp_{n}"
        else:
            envelope.pop("system_fingerprint", None)
    elif kind == "obfuscation":
        stream.obfuscated = not stream.obfuscated


@SETTINGS
@given(steps=st.lists(STEP, max_size=14))
def test_generated_streams_decode_as_record_by_record(steps):
    same_events(written(steps))


@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=30)
@given(steps=st.lists(STEP, max_size=10))
def test_generated_streams_convert_as_record_by_record(steps):
    lanes = any(kind == "lane" for kind, _, _ in steps)
    same_bytes(written(steps), (None, 0, 1) if lanes else (None,))


# -- the check has teeth ---------------------------------------------------------------

OUT_OF_STATE = {
    # More reasoning after a signature sealed the item opens another item.
    "sealed": [("reasoning_content", 0, ["a", "b", "c"]), ("seal", 0, ["s"])]
    + [("reasoning_content", 0, ["d", "e", "f"])],
    # Text after the choice's finish: each chunk of it says so.
    "finished": [("content", 0, ["a", "b", "c"]), ("finish", 0, ["x"])]
    + [("content", 0, ["d", "e", "f"])],
    # A second stream whose chunks carry the first one's id: theirs is residue now.
    "stream": [("content", 0, ["a", "b", "c"]), ("done", 0, ["x"]), ("id", 1, ["x"])]
    + [("role", 0, ["x"]), ("id", 0, ["x"]), ("content", 0, ["d", "e", "f"])],
}


@pytest.mark.parametrize("case", sorted(OUT_OF_STATE))
def test_a_kept_template_reused_where_its_state_no_longer_holds_is_seen(case):
    """Were a kept template tried whatever the lane's state and the stream, these
    streams would decode otherwise than record by record: the comparison sees it."""
    body = written(OUT_OF_STATE[case])
    same_events(body)
    always = mock.patch.object(KindTemplate, "holds", lambda self, lane, plain: True)
    with always, pytest.raises(AssertionError):
        same_events(body)
