"""A Responses source's runs into Responses, written by the encoder's run loop
(encode.py's ``feed_run``, ``_own_plain``): each record of a run that is a delta alone is
written as ``feed`` writes it, in one loop, so the output is byte for byte what
replaying each record's batch gives (``DeltaRun.replay``, the path before), notes
included.

Each case is converted twice, as the CLI does it and with the runs replayed, whole and
in small blocks; the encoder counts the records its run loop wrote (``looped``), so a
case says which path it took.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.responses_event.encode import ResponsesEncoder
from chatx.codecs.responses_event.shapes import SILENT, ResponsesOwn
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from tests.captures import capture_params
from tests.paths import ROOT
from tests.streams import fed

RESPONSES = "responses-event"
FIXTURES = sorted((ROOT / "fixtures" / RESPONSES).iterdir())


@contextmanager
def replayed() -> Iterator[None]:
    """The encoder replays a Responses source's runs record by record, as before."""
    with mock.patch("chatx.codecs.responses_event.encode._own_plain", lambda run: False):
        yield


def convert(body: bytes, size: int) -> tuple[bytes, list[str], int]:
    """The output of ``body`` fed ``size`` bytes at a time (0: its first 1024 bytes, then
    the rest at once, so that runs reach the decoder many records together: fed whole,
    all are parsed before the format is known), its notes, and how many records the
    encoder's run loop wrote."""
    cuts = [0, 1024] if size == 0 else range(0, len(body), size)
    out, notes, encoder = fed(body, cuts, RESPONSES)
    return out, notes, encoder.looped if isinstance(encoder, ResponsesEncoder) else 0


def same_as_replayed(body: bytes, sizes: tuple[int, ...] = (0, 4096, 7)) -> int:
    """Assert every block size gives the replayed output and notes; the records the run
    loop wrote, fed after its head (size 0)."""
    with replayed():
        expected = convert(body, len(body) or 1)
    assert expected[2] == 0
    looped = -1
    for size in (len(body) or 1, *sizes):
        with replayed():
            before = convert(body, size)
        got = convert(body, size)
        assert got[:2] == before[:2] == expected[:2], size
        if size == 0:
            looped = got[2]
    return looped


class Stream:
    """A Responses stream written event by event; ``seq`` numbers them (``numbers``, when
    given, says each number in turn: skips and repeats)."""

    def __init__(self, start: int = 0, numbers: list[int] | None = None) -> None:
        self.parts: list[bytes] = []
        self.seq = start
        self.numbers = iter(numbers) if numbers is not None else None
        self.emit("response.created", response=_response("in_progress", []))

    def emit(self, kind: str, raw_delta: bytes | None = None, **fields: Any) -> None:
        number = next(self.numbers) if self.numbers is not None else self.seq
        self.seq += 1
        payload = {"type": kind, **fields, "sequence_number": number}
        data = orjson.dumps(payload)
        if raw_delta is not None:  # the delta's JSON string as a source may escape it
            data = data.replace(b'"delta":"\\u0000"', b'"delta":' + raw_delta)
        self.parts.append(b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n")

    def message(self, index: int, deltas: list[Any], obfuscate: bool | None = True) -> None:
        """A message item of deltas (a ``bytes`` one is a delta's JSON string as it came;
        ``obfuscate`` None: every other one has an obfuscation)."""
        item = {"id": f"msg_{index}", "type": "message", "status": "in_progress", "content": []}
        ids = {"item_id": f"msg_{index}", "output_index": index, "content_index": 0}
        self.emit("response.output_item.added", output_index=index, item={**item, "role": "x"})
        part = {"type": "output_text", "annotations": [], "text": ""}
        self.emit("response.content_part.added", **ids, part=part)
        text = ""
        for k, delta in enumerate(deltas):
            fields: dict[str, Any] = {**ids, "delta": delta, "logprobs": []}
            raw = None
            if type(delta) is bytes:
                raw, fields["delta"] = delta, "\x00"
                delta = orjson.loads(delta)
            if obfuscate or (obfuscate is None and k % 2):
                fields["obfuscation"] = "abc"[: k % 3 + 1]
            text += delta
            self.emit("response.output_text.delta", raw, **fields)
        self.emit("response.output_text.done", **ids, text=text, logprobs=[])
        done = {"type": "output_text", "annotations": [], "text": text}
        self.emit("response.content_part.done", **ids, part=done)
        item = {**item, "status": "completed", "content": [done], "role": "assistant"}
        self.emit("response.output_item.done", output_index=index, item=item)

    def reasoning(self, index: int, deltas: list[str], kind: str) -> None:
        """A reasoning item, its deltas summary text (``kind`` summary) or reasoning text."""
        item = {"id": f"rs_{index}", "type": "reasoning", "summary": []}
        self.emit("response.output_item.added", output_index=index, item=item)
        ids: dict[str, Any] = {"item_id": f"rs_{index}", "output_index": index}
        if kind == "summary":
            ids["summary_index"] = 0
            part = {"type": "summary_text", "text": ""}
            self.emit("response.reasoning_summary_part.added", **ids, part=part)
            name = "response.reasoning_summary_text"
        else:
            ids["content_index"] = 0
            name = "response.reasoning_text"
        for delta in deltas:
            self.emit(name + ".delta", **ids, delta=delta)
        self.emit(name + ".done", **ids, text="".join(deltas))
        self.emit("response.output_item.done", output_index=index, item=item)

    def call(self, index: int, fragments: list[str]) -> None:
        """A function call item of argument fragments."""
        item = {"id": f"fc_{index}", "type": "function_call", "status": "in_progress"}
        item |= {"arguments": "", "call_id": f"call_{index}", "name": "f"}
        self.emit("response.output_item.added", output_index=index, item=item)
        ids = {"item_id": f"fc_{index}", "output_index": index}
        for fragment in fragments:
            self.emit("response.function_call_arguments.delta", **ids, delta=fragment)
        arguments = "".join(fragments)
        self.emit("response.function_call_arguments.done", **ids, arguments=arguments)
        done = {**item, "status": "completed", "arguments": arguments}
        self.emit("response.output_item.done", output_index=index, item=done)

    def body(self) -> bytes:
        self.emit("response.completed", response=_response("completed", []))
        return b"".join(self.parts)


def _response(status: str, output: list[Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": status,
            "model": "m", "output": output}  # fmt: skip


WORDS = [f" w{k}" for k in range(300)]


def test_a_long_run_is_written_by_the_loop() -> None:
    stream = Stream()
    stream.message(0, WORDS)
    assert same_as_replayed(stream.body()) >= 290


def test_a_long_run_without_obfuscation() -> None:
    stream = Stream()
    stream.message(0, WORDS, obfuscate=False)
    assert same_as_replayed(stream.body()) >= 290


def test_obfuscation_present_and_absent_in_turn() -> None:
    stream = Stream()
    stream.message(0, WORDS, obfuscate=None)
    assert same_as_replayed(stream.body()) >= 0


@pytest.mark.parametrize("start", [1, 17, 9995, 2**63 - 200])
def test_numbering_that_starts_other_than_0(start: int) -> None:
    stream = Stream(start)
    stream.message(0, WORDS)
    assert same_as_replayed(stream.body()) >= 290


@pytest.mark.parametrize("change", ["skip", "repeat", "down"])
def test_numbers_that_skip_or_repeat(change: str) -> None:
    count = len(WORDS) + 7
    numbers = list(range(count))
    if change == "skip":
        numbers[120:] = [n + 5 for n in numbers[120:]]
    elif change == "repeat":
        numbers[120:] = [n - 1 for n in numbers[120:]]
    else:
        numbers[120:] = [n - 50 for n in numbers[120:]]
    stream = Stream(numbers=numbers)
    stream.message(0, WORDS)
    assert same_as_replayed(stream.body()) >= 200


ESCAPES = [b'"caf\\u00e9"', b'"a\\/b"', b'"\\ud83d\\ude00"', b'"\\"q\\" \\\\ \\n"', b'"\\u0041"']


def test_escapes_in_texts() -> None:
    deltas: list[Any] = []
    for k, word in enumerate(WORDS):
        deltas.append(ESCAPES[k % len(ESCAPES)] if k % 7 == 3 else word)
    stream = Stream()
    stream.message(0, deltas)
    assert same_as_replayed(stream.body()) >= 200


def test_a_run_broken_by_another_event() -> None:
    stream = Stream()
    stream.message(0, WORDS[:100])
    ids = {"item_id": "msg_0", "output_index": 0, "content_index": 0}
    body = stream.body()
    # A delta with logprobs (read by the decoder's general path, written by feed) in the
    # middle of the run, and a keep-alive comment.
    marker = b'"delta":" w50"'
    cut = body.index(marker)
    cut = body.rindex(b"event: ", 0, cut)
    logprobs = [{"token": "x", "logprob": -0.5, "top_logprobs": []}]
    extra = orjson.dumps({"type": "response.output_text.delta", **ids, "delta": "x",
                          "logprobs": logprobs, "sequence_number": 55})  # fmt: skip
    event = b": ping\n\nevent: response.output_text.delta\ndata: " + extra + b"\n\n"
    assert same_as_replayed(body[:cut] + event + body[cut:]) >= 90


@pytest.mark.parametrize("kind", ["summary", "text"])
def test_reasoning_deltas(kind: str) -> None:
    stream = Stream()
    stream.reasoning(0, WORDS, kind)
    assert same_as_replayed(stream.body()) >= 290


def test_function_call_argument_deltas() -> None:
    stream = Stream()
    stream.call(0, ['{"a":', *(f'"{k}",' for k in range(200)), '"end"}'])
    assert same_as_replayed(stream.body()) >= 190


def test_several_items_and_output_indexes() -> None:
    stream = Stream(3)
    stream.reasoning(0, WORDS[:80], "summary")
    stream.message(1, WORDS[:80])
    stream.call(2, ['{"a":', *(f'"{k}",' for k in range(80)), '"end"}'])
    stream.reasoning(3, WORDS[:80], "text")
    stream.message(4, WORDS[:80], obfuscate=False)
    assert same_as_replayed(stream.body()) >= 5 * 60


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixtures(path: Path) -> None:
    same_as_replayed(path.read_bytes())


@pytest.mark.parametrize("path", capture_params(RESPONSES))
def test_captures(path: Path) -> None:
    same_as_replayed(path.read_bytes())


# The runs the Responses run hook makes today are deltas alone; a run of another shape
# (a hook that keeps residue, a held call) must still be replayed. Each is fed to the
# encoder directly, after the same events, both ways.

ItemsBefore = list[ir.Event]
OPEN_MESSAGE: ItemsBefore = [ir.StreamStart("resp_1"), ir.ItemStart(0, "message", "msg_1")]
# A call whose arguments are not whole JSON at its end is held open (call_order).
HELD_CALL: ItemsBefore = [
    ir.StreamStart("resp_1"),
    ir.ItemStart(0, "tool_call", "fc_1", call=0),
    ir.ToolArgsDelta(0, 0, '{"a": '),
    ir.ItemEnd(0, "tool_call", call=0),
]


def encoded(
    before: ItemsBefore, run: DeltaRun, replay: bool, source: str = RESPONSES
) -> tuple[list[Any], list[str], int]:
    notes = Notes()
    encoder = ResponsesEncoder(notes, EncodeOptions(source_format=source))
    out = encoder.feed(before)
    out += run.replay(encoder.feed, notes) if replay else encoder.feed_run(run)
    out += encoder.feed([ir.StreamEnd()])
    return orjson.loads(orjson.dumps(out)), [repr(n) for n in notes.summary()], encoder.looped


def text_run(proto: Any, **shared: Any) -> DeltaRun:
    texts = [f" w{k}" for k in range(5)]
    return DeltaRun(proto, texts, ["ab", None, "c", None, "d"], [10, 11, 12, 13, 14], **shared)


RUNS = {
    "plain": (OPEN_MESSAGE, text_run(ir.TextDelta(0, "")), 5),
    "residue": (OPEN_MESSAGE, text_run(ir.TextDelta(0, "", None, {"x": 1})), 0),
    "logprobs": (OPEN_MESSAGE, text_run(ir.TextDelta(0, "", [{"token": "t", "logprob": 0}])), 0),
    "silent": (OPEN_MESSAGE, text_run(ir.TextDelta(0, "", None, {}, None, SILENT)), 0),
    "part opened before": (
        OPEN_MESSAGE,
        text_run(
            ir.TextDelta(0, ""), before=ir.Meta(None, own=ResponsesOwn(open_part=("refusal", 0)))
        ),
        0,
    ),
    # Another format's call (a Responses source's is never held: its arguments are whole)
    "held call": (HELD_CALL, text_run(ir.TextDelta(0, "")), 0),
    "held call's own fragments": (
        HELD_CALL,
        DeltaRun(ir.ToolArgsDelta(0, 0, ""), ['"x', 'y"', "}"], [None] * 3, [10, 11, 12]),
        0,
    ),
    "reasoning text": (OPEN_MESSAGE, text_run(ir.ReasoningDelta(0, "", "text")), 5),
}


@pytest.mark.parametrize("name", RUNS)
def test_runs_fed_directly(name: str) -> None:
    before, run, looped = RUNS[name]
    source = "chat-chunk" if name.startswith("held call") else RESPONSES
    expected = encoded(before, run, True, source)
    got = encoded(before, run, False, source)
    assert got[:2] == expected[:2]
    assert got[2] == looped
