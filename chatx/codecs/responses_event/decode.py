"""Decode Responses API stream events into IR events.

Message, reasoning and function-call items become IR items; every other item type
(web search, MCP, image generation, …) and every lifecycle event after the first comes
through as :class:`~chatx.ir.Passthrough`, which the Responses encoder writes back and
other encoders report. ``*.done`` events are derived data: the decoder compares them
with what it has read and keeps only the difference as residue. Items are read in
:mod:`.items`, deltas in :mod:`.deltas`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from chatx import ir
from chatx.codecs.responses_event import citations, shapes, whole
from chatx.codecs.responses_event.deltas import DeltaReader
from chatx.codecs.responses_event.envelope import DEFAULTS, decode_usage, usage_object
from chatx.codecs.responses_event.items import ItemReader
from chatx.codecs.responses_event.read_response import NAME, ReadResponse
from chatx.codecs.responses_event.shapes import ResponsesOwn
from chatx.codecs.whole import expand
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import diff

_MAPPED_ENVELOPE = frozenset(("id", "object", "created_at", "model", "status", "output", "usage"))
_UNSET = object()
# Derived events: what they say is kept as a patch where it differs (ItemReader.derived).
_DERIVED = (
    "response.content_part.added",
    "response.reasoning_summary_part.added",
    "response.output_text.done",
    "response.refusal.done",
    "response.reasoning_text.done",
    "response.reasoning.done",
    "response.reasoning_summary_text.done",
    "response.function_call_arguments.done",
    "response.content_part.done",
    "response.reasoning_summary_part.done",
)


_INDEX_KEYS = ("output_index", "content_index", "summary_index")
# The fields of an output_text.delta read plainly (see ResponsesDecoder.plain_text).
_PLAIN_TEXT_KEYS = frozenset(
    (
        "type",
        "item_id",
        "output_index",
        "content_index",
        "delta",
        "logprobs",
        "sequence_number",
        "obfuscation",
    )
)


class ResponsesDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one event.

    Its parts share the
    :class:`~chatx.codecs.responses_event.read_response.ReadResponse` (``read``):
    ``items`` reads output items and the derived events of their parts, ``deltas`` the
    delta events. ``handlers`` is the table from an event's type to what reads it; the
    response's start and end are the decoder's own."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.read = read = ReadResponse(notes)
        self.items = items = ItemReader(read)
        self.deltas = deltas = DeltaReader(read)
        self.handlers: dict[str, Callable[[dict[str, Any]], list[ir.Event]]] = {
            "response.output_text.delta": deltas.text,
            "response.refusal.delta": deltas.refusal,
            "response.reasoning_summary_text.delta": deltas.summary,
            "response.reasoning_text.delta": deltas.reasoning_text,
            "response.reasoning.delta": deltas.reasoning_text,  # Open Responses' name
            "response.function_call_arguments.delta": deltas.arguments,
            "response.output_item.added": items.added,
            "response.output_item.done": items.done,
            "response.in_progress": self._lifecycle,
            "response.queued": self._lifecycle,
            "response.completed": self._terminal,
            "response.incomplete": self._terminal,
            "response.failed": self._terminal,
            "error": self._error,
            **{kind: partial(items.derived, kind) for kind in _DERIVED},
        }

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one Responses event."""
        data = record.data
        if type(data) is dict and data.get("type") == "response.output_text.delta":
            events = self.plain_text(data)
            if events is not None:
                return events
        return self.general(record)

    def plain_text(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The event almost every stream is made of, decoded without the general checks:
        more text for the open part of a message, in sequence, with nothing else beside
        it. ``None`` sends it the long way, which says what is wrong."""
        read = self.read
        seq = data.get("sequence_number")
        if (
            not read.started
            or read.ended
            or seq != read.expected_seq
            or type(seq) is not int
            or not data.keys() <= _PLAIN_TEXT_KEYS
        ):
            return None
        # Inline, not a call: this runs for nearly every record a run does not take.
        output_index = data.get("output_index")
        state = read.items.get(output_index) if type(output_index) is int else None
        if state is None or state.kind != "message" or data.get("item_id") != state.id:
            return None
        index = data.get("content_index")
        part = state.parts.get(("output_text", index)) if type(index) is int else None
        delta, lps = data.get("delta"), data.get("logprobs")
        obfuscation = data.get("obfuscation")
        if (
            part is None
            or type(delta) is not str
            or type(lps) is not list
            or not (obfuscation is None or type(obfuscation) is str)
        ):
            return None
        read.expected_seq = seq + 1
        part.texts.append(delta)
        if lps:
            part.logprobs.extend(lps)
        return [ir.TextDelta(0, delta, lps or None, {}, obfuscation)]

    def general(self, record: Record) -> list[ir.Event]:
        """Decode an event that is no plain text delta (:meth:`plain_text`)."""
        if record.done:
            self._done()
            return []
        data = record.data
        if not isinstance(data, dict):
            raise InputError(
                f"a Responses event must be a JSON object, not {type(data).__name__}",
                line=record.line,
                expected='{"type": "response.…", …}',
            )
        kind = data.get("type") or record.event
        read = self.read
        if kind is None and (not read.started or read.ended) and whole.is_response(data):
            return expand(self.general, whole.events(data, self.notes), record.line)
        if not isinstance(kind, str):
            raise InputError(
                "Responses event without a type",
                line=record.line,
                expected='a "type" such as "response.output_text.delta"',
            )
        _check_types(data, record.line)
        self._sequence(data)
        return self._event(kind, data, record)

    def _event(self, kind: str, data: dict[str, Any], record: Record) -> list[ir.Event]:
        """An event of type ``kind``, read where the stream stands."""
        read = self.read
        if read.ended and kind not in ("response.created", "response.queued", "error"):
            self.notes.warning(f"{kind} after the terminal event: left out")
            return []
        # vercel fixtures concatenate several turns: a second response.created starts over.
        if kind == "response.created" or (
            kind == "response.queued" and (not read.started or read.ended)
        ):
            return self._start(kind, data)
        if not read.started:
            self.notes.repaired(f"stream began with {kind}, not response.created")
            self._start("response.created", {"response": {}})
        handler = self.handlers.get(kind)
        if handler is not None:
            return handler(data)
        meaning = citations.said(kind, data)  # a citation another format may write
        return [ir.Passthrough(NAME, data, record.event, record.line, meaning=meaning)]

    def finish(self) -> list[ir.Event]:
        """End of input; a stream without a terminal event stays unfinished, and chatx
        says so whatever the target format (DESIGN §4)."""
        if self.read.started and not self.read.ended:
            self.notes.warning("input ended without a terminal event: no ending written")
        return []

    def _done(self) -> None:
        """``data: [DONE]``, which Responses streams do not send: left out."""
        if self.read.ended:
            self.read.repaired(
                "data: [DONE] after the terminal event left out: Responses "
                "streams end with their terminal event"
            )
        else:
            self.notes.warning("data: [DONE] in the middle of a Responses stream: left out")

    def _sequence(self, data: dict[str, Any]) -> None:
        read = self.read
        seq = data.get("sequence_number")
        if (
            read.expected_seq is not None
            and seq != read.expected_seq
            and not read.renumbered
            and data.get("type") != "response.created"
        ):
            read.renumbered = True
            self.notes.repaired(
                f"sequence_number {seq!r} where {read.expected_seq} was due: "
                "events renumbered from 0"
            )
        read.expected_seq = seq + 1 if isinstance(seq, int) else None

    # -- lifecycle ------------------------------------------------------------------

    def _start(self, kind: str, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        read = self.read
        if read.started and not read.ended:
            self.notes.warning("a new stream began before the previous one ended")
            out.append(ir.StreamEnd())
        read.reset()
        read.expected_seq = 1 if isinstance(data.get("sequence_number"), int) else None
        read.started = True
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        read.opening = response
        # The own note rebuilds the envelope in Responses output; the settings that
        # differ from a server's defaults are what another format would lose.
        settings = {
            k: v
            for k, v in response.items()
            if k not in _MAPPED_ENVELOPE and DEFAULTS.get(k, _UNSET) != v
        }
        out.append(
            ir.StreamStart(
                str(response.get("id") or ""),
                shapes.text_or_none(response.get("model")),
                response.get("created_at"),
                settings,
                ResponsesOwn(response, kind, _beside(data)),
            )
        )
        out.append(ir.LaneStart(0))
        return out

    def _terminal(self, data: dict[str, Any]) -> list[ir.Event]:
        read = self.read
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        out: list[ir.Event] = []
        if read.unfinished:
            read.repaired("items still open at the terminal event: closed before it")
        usage = response.get("usage")
        if isinstance(usage, dict) and usage:
            read.usage = decode_usage(usage)
            out.append(read.usage)
        status = response.get("status") or data["type"].rsplit(".", 1)[1]
        details = response.get("incomplete_details")
        raw = details.get("reason") if isinstance(details, dict) else None
        reason = _reason(status, raw, read.calls)
        out.append(ir.Finish(0, reason, raw or (status if status != "completed" else None)))
        tstatus, tdetails = shapes.terminal_status(reason, read.error is not None)
        usage_obj = usage_object(read.usage, True) if read.usage is not None else None
        canonical = shapes.terminal_response(
            read.opening, tstatus, tdetails, read.output, read.error, usage_obj
        )
        patch = diff(response, canonical)
        event_extra = _beside(data)
        if data["type"] != shapes.TERMINAL_EVENT[tstatus]:
            self.notes.repaired(
                f"{data['type']} with status {status!r}: written as "
                f"{shapes.TERMINAL_EVENT[tstatus]}"
            )
        out.append(ir.StreamEnd(patch, ResponsesOwn(event=event_extra) if event_extra else None))
        read.ended = True
        return out

    def _error(self, data: dict[str, Any]) -> list[ir.Event]:
        nested = data.get("error")
        source = nested if isinstance(nested, dict) else data
        code = source.get("code")
        message = source.get("message")
        param = source.get("param")
        etype = source.get("type") if source is nested else None
        canonical = shapes.error_event(code, message, param, etype, None)
        patch = diff({k: v for k, v in data.items() if k != "sequence_number"}, canonical)
        self.read.error = shapes.response_error(code, message if isinstance(message, str) else None)
        error = ir.Error(
            message if isinstance(message, str) else None,
            code,
            etype if isinstance(etype, str) else None,
            param if isinstance(param, str) else None,
            {"event": patch},
        )
        return [error]

    def _lifecycle(self, data: dict[str, Any]) -> list[ir.Event]:
        return [ir.Passthrough(NAME, data, data.get("type"))]


def _beside(data: dict[str, Any]) -> dict[str, Any]:
    """What a lifecycle event says beside its response: the event's own residue."""
    return {k: v for k, v in data.items() if k not in ("type", "response", "sequence_number")}


def _reason(status: Any, raw: Any, calls: int) -> str:
    """The finish reason of a terminal response of ``status`` (``raw``: its
    incomplete_details reason) after ``calls`` function calls."""
    if status == "failed":
        return "error"
    if status == "incomplete":
        return "content_filter" if raw == "content_filter" else "length"
    return "tool_calls" if calls else "stop"


def _check_types(data: dict[str, Any], line: int) -> None:
    """An index that is not an integer, logprobs that are not a list: the event cannot
    be read."""
    for key in _INDEX_KEYS:
        value = data.get(key)
        if value is not None and type(value) is not int:
            raise InputError(
                f"{key} must be an integer, not {type(value).__name__}",
                line=line,
                expected=f'"{key}": 0',
            )
    lps = data.get("logprobs")
    if lps is not None and type(lps) is not list:
        raise InputError(
            "logprobs must be a list",
            line=line,
            expected='"logprobs": [{"token": …, "logprob": …}]',
        )
