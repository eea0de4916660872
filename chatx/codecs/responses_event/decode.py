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
from typing import Any

from chatx import ir
from chatx.codecs.responses_event import citations, shapes, whole
from chatx.codecs.responses_event.deltas import DeltaDecoding
from chatx.codecs.responses_event.envelope import DEFAULTS, decode_usage, usage_object
from chatx.codecs.responses_event.items import NAME, ItemDecoding, ItemState
from chatx.codecs.whole import expand
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import diff

_MAPPED_ENVELOPE = frozenset(("id", "object", "created_at", "model", "status", "output", "usage"))
_UNSET = object()
# Key of the Meta residue that carries patches for derived events; private to this codec.
_IGNORED = frozenset(
    (
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


class ResponsesDecoder(DeltaDecoding, ItemDecoding):
    """Incremental decoder: ``feed(record)`` returns the IR events of one event."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self._reset()

    def _reset(self) -> None:
        """A new stream."""
        self.started = False
        self.ended = False
        self.items: dict[Any, ItemState] = {}  # by output_index
        self.unfinished: set[Any] = set()
        self.calls = 0
        self.output: list[Any] = []
        self.opening: dict[str, Any] = {}  # the response object the stream opened with
        self.usage: ir.Usage | None = None
        self.error: dict[str, Any] | None = None
        self.expected_seq: int | None = None
        self.renumbered = False
        self.noted: set[str] = set()

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
        seq = data.get("sequence_number")
        if (
            not self.started
            or self.ended
            or seq != self.expected_seq
            or type(seq) is not int
            or not data.keys() <= _PLAIN_TEXT_KEYS
        ):
            return None
        output_index = data.get("output_index")
        state = self.items.get(output_index) if type(output_index) is int else None
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
        self.expected_seq = seq + 1
        part.texts.append(delta)
        if lps:
            part.logprobs.extend(lps)
        return [ir.TextDelta(0, delta, lps or None, {}, obfuscation)]

    def general(self, record: Record) -> list[ir.Event]:
        """Decode an event that is no plain text delta (:meth:`plain_text`)."""
        if record.done:
            if self.ended:
                self._repaired(
                    "data: [DONE] after the terminal event left out: Responses "
                    "streams end with their terminal event"
                )
            else:
                self.notes.warning("data: [DONE] in the middle of a Responses stream: left out")
            return []
        data = record.data
        if not isinstance(data, dict):
            raise InputError(
                f"a Responses event must be a JSON object, not {type(data).__name__}",
                line=record.line,
                expected='{"type": "response.…", …}',
            )
        kind = data.get("type") or record.event
        if kind is None and (not self.started or self.ended) and whole.is_response(data):
            return expand(self.general, whole.events(data, self.notes), record.line)
        if not isinstance(kind, str):
            raise InputError(
                "Responses event without a type",
                line=record.line,
                expected='a "type" such as "response.output_text.delta"',
            )
        _check_types(data, record.line)
        self._sequence(data)
        if self.ended and kind not in ("response.created", "response.queued", "error"):
            self.notes.warning(f"{kind} after the terminal event: left out")
            return []
        if kind in ("response.created", "response.queued") and (
            not self.started
            or self.ended
            or kind == "response.created"
            and self._is_new_stream(data)
        ):
            return self._start(kind, data)
        if not self.started:
            self.notes.repaired(f"stream began with {kind}, not response.created")
            self._start("response.created", {"response": {}})
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, data)
        if kind in _IGNORED:
            return self._derived(kind, data)
        if kind == "error":
            return [self._error(data)]
        meaning = citations.said(kind, data)  # a citation another format may write
        return [ir.Passthrough(NAME, data, record.event, record.line, meaning=meaning)]

    def finish(self) -> list[ir.Event]:
        """End of input; a stream without a terminal event stays unfinished, and chatx
        says so whatever the target format (DESIGN §4)."""
        if self.started and not self.ended:
            self.notes.warning("input ended without a terminal event: no ending written")
        return []

    def _repaired(self, message: str) -> None:
        """Say a repair once per stream, not once per event."""
        if message not in self.noted:
            self.noted.add(message)
            self.notes.repaired(message)

    def _is_new_stream(self, data: dict[str, Any]) -> bool:
        # vercel fixtures concatenate several turns: a second response.created starts over.
        return True

    def _sequence(self, data: dict[str, Any]) -> None:
        seq = data.get("sequence_number")
        if (
            self.expected_seq is not None
            and seq != self.expected_seq
            and not self.renumbered
            and data.get("type") != "response.created"
        ):
            self.renumbered = True
            self.notes.repaired(
                f"sequence_number {seq!r} where {self.expected_seq} was due: "
                "events renumbered from 0"
            )
        self.expected_seq = seq + 1 if isinstance(seq, int) else None

    # -- lifecycle ------------------------------------------------------------------

    def _start(self, kind: str, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        if self.started and not self.ended:
            self.notes.warning("a new stream began before the previous one ended")
            out.append(ir.StreamEnd())
        self._reset()
        self.expected_seq = 1 if isinstance(data.get("sequence_number"), int) else None
        self.started = True
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        self.opening = response
        event_extra = {
            k: v for k, v in data.items() if k not in ("type", "response", "sequence_number")
        }
        # Private keys ("~") rebuild the envelope in Responses output; the settings that
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
                {"~response": response, "~type": kind, "~event": event_extra, **settings},
            )
        )
        out.append(ir.LaneStart(0))
        return out

    def _terminal(self, data: dict[str, Any]) -> list[ir.Event]:
        response = data.get("response")
        if not isinstance(response, dict):
            response = {}
        out: list[ir.Event] = []
        if self.unfinished:
            self._repaired("items still open at the terminal event: closed before it")
        usage = response.get("usage")
        if isinstance(usage, dict) and usage:
            self.usage = decode_usage(usage)
            out.append(self.usage)
        status = response.get("status") or data["type"].rsplit(".", 1)[1]
        details = response.get("incomplete_details")
        raw = details.get("reason") if isinstance(details, dict) else None
        if status == "failed":
            reason = "error"
        elif status == "incomplete":
            reason = "content_filter" if raw == "content_filter" else "length"
        else:
            reason = "tool_calls" if self.calls else "stop"
        out.append(ir.Finish(0, reason, raw or (status if status != "completed" else None)))
        tstatus, tdetails = shapes.terminal_status(reason, self.error is not None)
        usage_obj = usage_object(self.usage, True) if self.usage is not None else None
        canonical = shapes.terminal_response(
            self.opening, tstatus, tdetails, self.output, self.error, usage_obj
        )
        patch = diff(response, canonical)
        event_extra = {
            k: v for k, v in data.items() if k not in ("type", "response", "sequence_number")
        }
        if event_extra:
            patch["~event"] = event_extra
        if data["type"] != shapes.TERMINAL_EVENT[tstatus]:
            self.notes.repaired(
                f"{data['type']} with status {status!r}: written as "
                f"{shapes.TERMINAL_EVENT[tstatus]}"
            )
        out.append(ir.StreamEnd(patch))
        self.ended = True
        return out

    def _error(self, data: dict[str, Any]) -> ir.Error:
        nested = data.get("error")
        source = nested if isinstance(nested, dict) else data
        code = source.get("code")
        message = source.get("message")
        param = source.get("param")
        etype = source.get("type") if source is nested else None
        canonical = shapes.error_event(code, message, param, etype, None)
        patch = diff({k: v for k, v in data.items() if k != "sequence_number"}, canonical)
        self.error = shapes.response_error(code, message if isinstance(message, str) else None)
        return ir.Error(
            message if isinstance(message, str) else None,
            code,
            etype if isinstance(etype, str) else None,
            param if isinstance(param, str) else None,
            {"event": patch},
        )

    def _passthrough_state(self, data: dict[str, Any]) -> ir.Event:
        return ir.Passthrough(NAME, data, data.get("type"))

    def _lifecycle(self, data: dict[str, Any]) -> list[ir.Event]:
        return [ir.Passthrough(NAME, data, data.get("type"))]


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


_HANDLERS: dict[str, Callable[[ResponsesDecoder, dict[str, Any]], list[ir.Event]]] = {
    "response.output_text.delta": ResponsesDecoder._text,
    "response.refusal.delta": ResponsesDecoder._refusal,
    "response.reasoning_summary_text.delta": ResponsesDecoder._summary,
    "response.reasoning_text.delta": ResponsesDecoder._reasoning_text,
    "response.reasoning.delta": ResponsesDecoder._reasoning_text,  # Open Responses' name
    "response.function_call_arguments.delta": ResponsesDecoder._arguments,
    "response.output_item.added": ResponsesDecoder._item_added,
    "response.output_item.done": ResponsesDecoder._item_done,
    "response.in_progress": ResponsesDecoder._lifecycle,
    "response.queued": ResponsesDecoder._lifecycle,
    "response.completed": ResponsesDecoder._terminal,
    "response.incomplete": ResponsesDecoder._terminal,
    "response.failed": ResponsesDecoder._terminal,
}
