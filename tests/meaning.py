"""The meaning of a stream: what a client reconstructs (text, reasoning, refusal, calls,
finish, usage, errors), per stream and per lane, to compare streams across formats."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from tests.streams import batches


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
        return {
            "text": self.text,
            "reasoning": self.reasoning,
            "refusal": self.refusal,
            "calls": calls,
            "finish": finish,
        }


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
        lanes = {n: one.summary() for n, one in sorted(stream.lanes.items())}
        if lane is not None:
            lanes = {0: lanes[lane]} if lane in lanes else {}
        # A lane that says nothing at all is not worth comparing (Azure's filter chunk).
        lanes = {n: v for n, v in lanes.items() if v != Lane().summary()}
        out.append({"lanes": lanes, "usage": stream.usage, "errors": stream.errors})
    return out


def lanes_of(data: bytes, src: str | None = None) -> set[int]:
    return {n for stream in meaning(batches(data, src)) for n in stream.lanes}
