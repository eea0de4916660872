"""Shared helpers for the codec, oracle, capture and property tests.

The real captures live outside the project (``../shared/captures``); tests read them
by path and skip with a reason when the folder is absent. Nothing is copied in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chatx import ir, pipeline
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from chatx.record import Record

CAPTURES = Path(__file__).resolve().parents[1].parent / "shared" / "captures"
SPEC = Path(__file__).resolve().parents[1].parent / "shared" / "spec"

CHAT = "chat-chunk"
RESPONSES = "responses-event"
OTHER = {CHAT: RESPONSES, RESPONSES: CHAT}

skip_without_captures = pytest.mark.skipif(
    not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent"
)


def captures(fmt: str) -> list[Path]:
    """The capture files of one format, sorted by name (empty when the folder is absent)."""
    folder = CAPTURES / fmt
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".sse", ".jsonl", ".json"))


def capture_params(fmt: str) -> list[Any]:
    """``pytest.param`` per capture, named by file; one skipped param when there are none."""
    paths = captures(fmt)
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no {fmt} captures in "
                                                                 f"{CAPTURES}"), id="absent")]
    return [pytest.param(p, id=p.name) for p in paths]


# -- building inputs --------------------------------------------------------------------


def sse(payloads: Iterable[Any], *, done: bool = True, events: bool = False) -> bytes:
    """Frame payloads as SSE; ``events`` writes ``event: <type>`` lines (Responses style)."""
    out = []
    for payload in payloads:
        if events and isinstance(payload, dict) and "type" in payload:
            out.append(f"event: {payload['type']}\n")
        out.append(f"data: {json.dumps(payload)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def jsonl(payloads: Iterable[Any]) -> bytes:
    return "".join(json.dumps(p) + "\n" for p in payloads).encode()


# -- converting and reading back --------------------------------------------------------


def convert(data: bytes, dst: str, src: str | None = None, *, choice: int | None = None,
            options: EncodeOptions | None = None, out_container: str | None = None,
            ) -> tuple[bytes, Notes]:
    """``chatx.pipeline.convert`` that also hands back its notes."""
    notes = Notes()
    out = pipeline.convert(data, dst=dst, src=src, notes=notes, choice=choice,
                           options=options, out_container=out_container)
    return out, notes


def records(data: bytes) -> list[Record]:
    """Frame bytes into records (the container detected)."""
    return pipeline.read_records(data)[1]


def payloads(data: bytes) -> list[Any]:
    """The JSON payloads of a stream, ``[DONE]`` left out (errors fail the test)."""
    out = []
    for record in records(data):
        assert record.error is None, f"line {record.line}: {record.error}"
        if not record.done:
            out.append(record.data)
    return out


def sse_blocks(data: bytes) -> list[tuple[str | None, str]]:
    """(event name, data text) per SSE block of chatx's output, ``[DONE]`` included."""
    blocks = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        event, lines = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                lines.append(line[6:])
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        blocks.append((event, "\n".join(lines)))
    return blocks


def batches(data: bytes, src: str | None = None) -> list[list[ir.Event]]:
    """The IR batches a stream decodes to."""
    return list(pipeline.decode(records(data), src=src))


def events(data: bytes, src: str | None = None) -> list[ir.Event]:
    return [event for batch in batches(data, src) for event in batch]


def note_kinds(notes: Notes) -> list[str]:
    return [note.kind for note in notes.summary()]


# -- the meaning of a stream ------------------------------------------------------------


@dataclass
class Call:
    name: str | None
    call_id: str | None
    arguments: str = ""

    def key(self) -> tuple[Any, ...]:
        return (self.name or "", self.call_id or "", parse_arguments(self.arguments))


def parse_arguments(text: str) -> Any:
    """Tool arguments compared as JSON values when they parse, as text otherwise."""
    try:
        return ("json", json.dumps(json.loads(text), sort_keys=True))
    except ValueError:
        return ("text", text)


@dataclass
class Lane:
    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    calls: dict[int, Call] = field(default_factory=dict)
    finish: str | None = None

    def summary(self) -> dict[str, Any]:
        calls = [self.calls[k].key() for k in sorted(self.calls)]
        finish = self.finish
        if finish == "stop" and calls:
            # Older Ollama says "stop" after a tool call; Responses has no such word.
            finish = "tool_calls"
        return {"text": self.text, "reasoning": self.reasoning, "refusal": self.refusal,
                "calls": calls, "finish": finish}


@dataclass
class Stream:
    lanes: dict[int, Lane] = field(default_factory=dict)
    usage: tuple[int, int, int] | None = None
    errors: list[str] = field(default_factory=list)

    def lane(self, number: int) -> Lane:
        if number not in self.lanes:
            self.lanes[number] = Lane()
        return self.lanes[number]


def meaning(batches_: Iterable[list[ir.Event]]) -> list[Stream]:
    """What a stream says, per stream (concatenated captures hold several) and per lane."""
    streams: list[Stream] = []

    def current() -> Stream:
        if not streams:
            streams.append(Stream())
        return streams[-1]

    for batch in batches_:
        for event in batch:
            kind = type(event)
            if kind is ir.StreamStart:
                streams.append(Stream())
            elif kind is ir.TextDelta:
                current().lane(event.lane).text += event.text
            elif kind is ir.RefusalDelta:
                current().lane(event.lane).refusal += event.text
            elif kind is ir.ReasoningDelta:
                current().lane(event.lane).reasoning += event.text
            elif kind is ir.ItemStart and event.kind == "tool_call":
                calls = current().lane(event.lane).calls
                calls[event.call] = Call(event.name, event.call_id)
            elif kind is ir.ToolArgsDelta:
                calls = current().lane(event.lane).calls
                calls.setdefault(event.call, Call(None, None)).arguments += event.fragment
            elif kind is ir.Finish:
                current().lane(event.lane).finish = event.reason
            elif kind is ir.Usage:
                inp, out = event.input or 0, event.output or 0
                total = event.total if event.total is not None else inp + out
                current().usage = (inp, out, total)
            elif kind is ir.Error:
                current().errors.append(event.message or "")
    return streams


def summarize(data: bytes, src: str | None = None, *, lane: int | None = None) -> list[Any]:
    """A comparable summary: per stream, the lanes' content, usage and error messages.

    ``lane`` keeps one lane only (numbered 0 in the summary), as ``--choice`` does.
    """
    out = []
    for stream in meaning(batches(data, src)):
        lanes = {n: l.summary() for n, l in sorted(stream.lanes.items())}
        if lane is not None:
            lanes = {0: lanes[lane]} if lane in lanes else {}
        # A lane that says nothing at all is not worth comparing (Azure's filter chunk).
        lanes = {n: v for n, v in lanes.items()
                 if v != Lane().summary()}
        out.append({"lanes": lanes, "usage": stream.usage, "errors": stream.errors})
    return out


def lanes_of(data: bytes, src: str | None = None) -> set[int]:
    return {n for stream in meaning(batches(data, src)) for n in stream.lanes}
