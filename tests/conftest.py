"""Shared helpers for the codec, oracle, capture and property tests.

The real captures live outside the project (``../shared/captures``); tests read them
by path and skip with a reason when the folder is absent. Nothing is copied in.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from chatx import ir, pipeline
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from chatx.record import Record

# Property and fuzz tests in the suite are repeatable: the same code gets the same
# verdict in CI; `make fuzz` (CHATX_FUZZ_EXAMPLES) is where randomness explores.
if not os.environ.get("CHATX_FUZZ_EXAMPLES"):
    settings.register_profile("repeatable", derandomize=True, database=None)
    settings.load_profile("repeatable")

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
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason=f"no {fmt} captures in {CAPTURES}"), id="absent"
            )
        ]
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


def convert(
    data: bytes,
    dst: str,
    src: str | None = None,
    *,
    choice: int | None = None,
    options: EncodeOptions | None = None,
    out_container: str | None = None,
) -> tuple[bytes, Notes]:
    """``chatx.pipeline.convert`` that also hands back its notes."""
    notes = Notes()
    out = pipeline.convert(
        data,
        dst=dst,
        src=src,
        notes=notes,
        choice=choice,
        options=options,
        out_container=out_container,
    )
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


@functools.cache
def capture_choices(path: Path) -> list[int | None]:
    """The choices to convert a capture with: each lane of a several-choice chat stream,
    else ``None`` (computed once per process: parametrizations ask for it at collection)."""
    if path.parent.name != CHAT:
        return [None]
    lanes = sorted(lanes_of(path.read_bytes(), CHAT))
    return list(lanes) if len(lanes) > 1 else [None]


# -- hand-made streams ------------------------------------------------------------------

CHAT_ID = "chatcmpl-T3st"
CREATED = 1700000000
MODEL = "gpt-test"


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    index: int = 0,
    *,
    choices: list[dict[str, Any]] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``: one choice from ``delta``/``finish``, or ``choices``."""
    if choices is None:
        choices = [{"index": index, "delta": delta or {}, "finish_reason": finish}]
    payload: dict[str, Any] = {
        "id": CHAT_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "choices": choices,
    }
    payload.update(top)
    return payload


def usage_chunk(
    prompt: int = 11,
    completion: int = 7,
    total: int | None = 18,
    *,
    cached: int | None = None,
    reasoning: int | None = None,
) -> dict[str, Any]:
    """The last chunk of an ``include_usage`` stream: ``choices: []`` plus ``usage``."""
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    if total is not None:
        usage["total_tokens"] = total
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return chunk(choices=[], usage=usage)


def chat_text(*pieces: str, finish: str = "stop", usage: bool = True) -> list[dict[str, Any]]:
    """A plain text answer: role chunk, one chunk per piece, finish, usage."""
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in pieces]
    out.append(chunk({}, finish))
    if usage:
        out.append(usage_chunk())
    return out


RESP_ID = "resp_T3st"


class ResponsesBuilder:
    """Writes a well-formed Responses event stream, the way the OpenAI server does."""

    def __init__(self, rid: str = RESP_ID, model: str = MODEL, created: int = CREATED) -> None:
        self.rid = rid
        self.events: list[dict[str, Any]] = []
        self.output: list[dict[str, Any]] = []
        self.response = {
            "id": rid,
            "object": "response",
            "created_at": created,
            "status": "in_progress",
            "background": False,
            "completed_at": None,
            "error": None,
            "frequency_penalty": 0.0,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": model,
            "output": [],
            "parallel_tool_calls": True,
            "presence_penalty": 0.0,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "reasoning": None,
            "safety_identifier": None,
            "service_tier": "default",
            "store": False,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "metadata": {},
        }
        self.emit("response.created", response=dict(self.response))
        self.emit("response.in_progress", response=dict(self.response))

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, **fields, "sequence_number": len(self.events)}
        self.events.append(event)
        return event

    def _index(self) -> int:
        return len(self.output)

    def message(
        self, *pieces: str, refusal: str | None = None, logprobs: list[list[Any]] | None = None
    ) -> ResponsesBuilder:
        index, iid = self._index(), f"msg_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={
                "id": iid,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            },
        )
        content = []
        if refusal is not None:
            part = {"type": "refusal", "refusal": ""}
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part=part,
            )
            self.emit(
                "response.refusal.delta",
                item_id=iid,
                output_index=index,
                content_index=0,
                delta=refusal,
            )
            self.emit(
                "response.refusal.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                refusal=refusal,
            )
            done = {"type": "refusal", "refusal": refusal}
        else:
            text = "".join(pieces)
            lps = [lp for entry in (logprobs or []) for lp in entry]
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
            )
            for number, piece in enumerate(pieces):
                self.emit(
                    "response.output_text.delta",
                    item_id=iid,
                    output_index=index,
                    content_index=0,
                    delta=piece,
                    logprobs=logprobs[number] if logprobs else [],
                )
            self.emit(
                "response.output_text.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                text=text,
                logprobs=lps,
            )
            done = {"type": "output_text", "annotations": [], "logprobs": lps, "text": text}
        self.emit(
            "response.content_part.done",
            item_id=iid,
            output_index=index,
            content_index=0,
            part=done,
        )
        content.append(done)
        item = {
            "id": iid,
            "type": "message",
            "status": "completed",
            "content": content,
            "role": "assistant",
        }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def reasoning(self, *pieces: str, family: str = "summary") -> ResponsesBuilder:
        index, iid = self._index(), f"rs_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={"id": iid, "type": "reasoning", "summary": []},
        )
        text = "".join(pieces)
        if family == "summary":
            self.emit(
                "response.reasoning_summary_part.added",
                item_id=iid,
                output_index=index,
                summary_index=0,
                part={"type": "summary_text", "text": ""},
            )
            for piece in pieces:
                self.emit(
                    "response.reasoning_summary_text.delta",
                    item_id=iid,
                    output_index=index,
                    summary_index=0,
                    delta=piece,
                )
            self.emit(
                "response.reasoning_summary_text.done",
                item_id=iid,
                output_index=index,
                summary_index=0,
                text=text,
            )
            self.emit(
                "response.reasoning_summary_part.done",
                item_id=iid,
                output_index=index,
                summary_index=0,
                part={"type": "summary_text", "text": text},
            )
            item = {
                "id": iid,
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": text}],
            }
        else:
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "reasoning_text", "text": ""},
            )
            for piece in pieces:
                self.emit(
                    "response.reasoning_text.delta",
                    item_id=iid,
                    output_index=index,
                    content_index=0,
                    delta=piece,
                )
            self.emit(
                "response.reasoning_text.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                text=text,
            )
            self.emit(
                "response.content_part.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "reasoning_text", "text": text},
            )
            item = {
                "id": iid,
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": text}],
            }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def call(self, name: str, call_id: str, *fragments: str) -> ResponsesBuilder:
        index, iid = self._index(), f"fc_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={
                "id": iid,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": call_id,
                "name": name,
            },
        )
        for fragment in fragments:
            self.emit(
                "response.function_call_arguments.delta",
                item_id=iid,
                output_index=index,
                delta=fragment,
            )
        arguments = "".join(fragments)
        self.emit(
            "response.function_call_arguments.done",
            item_id=iid,
            output_index=index,
            arguments=arguments,
            name=name,
        )
        item = {
            "id": iid,
            "type": "function_call",
            "status": "completed",
            "arguments": arguments,
            "call_id": call_id,
            "name": name,
        }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def builtin(self, item: dict[str, Any], *progress: str) -> ResponsesBuilder:
        """A built-in tool item (web_search_call…), with its progress events."""
        index = self._index()
        self.emit(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress"}
        )
        for kind in progress:
            self.emit(kind, item_id=item["id"], output_index=index)
        done = {**item, "status": "completed"}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def error(self, message: str, code: str = "server_error") -> ResponsesBuilder:
        self.emit("error", code=code, message=message, param=None)
        self.end("failed", error={"code": code, "message": message})
        return self

    def end(
        self,
        status: str = "completed",
        *,
        usage: dict[str, Any] | None = None,
        reason: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> ResponsesBuilder:
        response = dict(self.response, status=status, output=list(self.output))
        if reason is not None:
            response["incomplete_details"] = {"reason": reason}
        if error is not None:
            response["error"] = error
        if usage is not None:
            response["usage"] = usage
        self.emit(f"response.{status}", response=response)
        return self

    def bytes(self, *, events: bool = True) -> bytes:
        return sse(self.events, done=False, events=events)


def responses_usage(
    inp: int = 11, out: int = 7, total: int = 18, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": total,
    }


def chat_streams(data: bytes) -> list[list[dict[str, Any]]]:
    """chatx's chat output split at ``[DONE]``: the chunks of each stream."""
    streams: list[list[dict[str, Any]]] = [[]]
    for record in records(data):
        if record.done:
            streams.append([])
        else:
            streams[-1].append(record.data)
    return [s for s in streams if s]


def responses_streams(data: bytes) -> list[list[dict[str, Any]]]:
    """chatx's Responses output split at ``response.created``."""
    streams: list[list[dict[str, Any]]] = []
    for payload in payloads(data):
        if payload.get("type") == "response.created" or not streams:
            streams.append([])
        streams[-1].append(payload)
    return streams
