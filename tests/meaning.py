"""The meaning of a stream: what a client reconstructs (text, reasoning, refusal, calls,
finish, usage, errors), per stream and per lane, to compare streams across formats."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
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


def _text(stream: Stream, event: Any) -> None:
    stream.lane(event.lane).text += event.text


def _refusal(stream: Stream, event: Any) -> None:
    stream.lane(event.lane).refusal += event.text


def _reasoning(stream: Stream, event: Any) -> None:
    stream.lane(event.lane).reasoning += event.text


def _item(stream: Stream, event: Any) -> None:
    if event.kind == "tool_call":
        stream.lane(event.lane).calls[event.call] = Call(event.name, event.call_id)


def _arguments(stream: Stream, event: Any) -> None:
    calls = stream.lane(event.lane).calls
    calls.setdefault(event.call, Call(None, None)).arguments += event.fragment


def _finish(stream: Stream, event: Any) -> None:
    stream.lane(event.lane).finish = event.reason


def _usage(stream: Stream, event: Any) -> None:
    inp, out = event.input or 0, event.output or 0
    total = event.total if event.total is not None else inp + out
    stream.usage = (inp, out, total)


def _error(stream: Stream, event: Any) -> None:
    stream.errors.append(event.message or "")


# What each IR event adds to the meaning; other events add nothing to compare.
_READS: dict[type, Callable[[Stream, Any], None]] = {
    ir.TextDelta: _text,
    ir.RefusalDelta: _refusal,
    ir.ReasoningDelta: _reasoning,
    ir.ItemStart: _item,
    ir.ToolArgsDelta: _arguments,
    ir.Finish: _finish,
    ir.Usage: _usage,
    ir.Error: _error,
}


def meaning(batches_: Iterable[list[ir.Event]]) -> list[Stream]:
    """What a stream says, per stream (concatenated captures hold several) and per lane."""
    streams: list[Stream] = []
    for batch in batches_:
        for event in batch:
            if type(event) is ir.StreamStart:
                streams.append(Stream())
                continue
            read = _READS.get(type(event))
            if read is not None:
                if not streams:
                    streams.append(Stream())
                read(streams[-1], event)
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
