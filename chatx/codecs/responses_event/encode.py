"""Encode IR events as Responses API stream events.

``response.created`` and ``response.in_progress`` open the stream; each item is opened
with ``output_item.added``, its parts with ``content_part.added`` (or
``reasoning_summary_part.added``), then deltas, ``*.done``, the part's done and
``output_item.done``; one item at a time. Sequence numbers are given here, at the
output stage, contiguous from 0 in each stream. The terminal event's ``output`` is the
list of items closed, and carries the usage. Items and their parts open and close in
:mod:`.encode_items`, deltas are written in :mod:`.encode_deltas`; the state they share is
:mod:`.written`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions, exact_reason
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.encode_deltas import Deltas
from chatx.codecs.responses_event.encode_items import Items
from chatx.codecs.responses_event.envelope import envelope, responses_id, usage_object
from chatx.codecs.responses_event.settle import lifecycle_status, settle
from chatx.codecs.responses_event.shapes import ResponsesOwn
from chatx.codecs.responses_event.written import ResponseState
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, NullResidue, merge, report

NAME = "responses-event"


class ResponsesEncoder:
    """Incremental encoder: ``feed(batch)`` returns the Responses events it means.

    Its parts share the :class:`~chatx.codecs.responses_event.written.ResponseState`:
    ``items`` opens and closes items and parts (with the ``citations``, ``searches`` and
    call ``queue`` it makes), ``deltas`` writes the deltas. ``handlers`` is the table
    from an event's type to the method that writes it; a handler returns true when it
    holds a tool call open. The response's start and end are the encoder's own."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == NAME
        self.lost_meta = MetaReport(notes)
        self.state = state = ResponseState(notes, self.own)
        self.items = items = Items(state, notes, self.lost_meta, self._step)
        self.deltas = deltas = Deltas(state, items, notes, options.reasoning)
        self.queue = items.queue
        # A Responses source's records written by the run loop rather than replayed
        # (tests count them: feed_run).
        self.looped = 0
        self.handlers: dict[type, Callable[[Any, list[dict[str, Any]]], bool | None]] = {
            # Content first, most frequent first; the stream's own events after.
            ir.TextDelta: deltas.text,
            ir.Meta: self._meta,
            ir.ReasoningDelta: deltas.reasoning,
            ir.ToolArgsDelta: deltas.args,
            ir.ItemStart: items.item_start,
            ir.ItemEnd: items.item_end,
            ir.RefusalDelta: deltas.refusal,
            ir.StreamStart: self._start,
            ir.LaneStart: self._lane_start,
            ir.Finish: self._finish,
            ir.Usage: self._usage,
            ir.Error: self._error,
            ir.Passthrough: self._passthrough,
            ir.StreamEnd: self._end,
        }

    def feed(self, events: Iterable[ir.Event]) -> list[dict[str, Any]]:
        """Encode one batch of IR events."""
        out: list[dict[str, Any]] = []
        self.queue.encode(events, self.handlers, out)
        return out

    def _step(self, event: ir.Event, out: list[dict[str, Any]]) -> None:
        """One event as :meth:`feed` encodes it when nothing is held. While a call is held
        open, only its own fragments and events that write nothing come here, and neither
        can hold another call: what was held stays held."""
        queue = self.queue
        held, queue.held = queue.held, None
        try:
            out += self.feed((event,))
        finally:
            if held is not None:
                queue.held = held

    def feed_run(self, run: DeltaRun) -> list[dict[str, Any]]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches, in one loop (:mod:`.encode_deltas`) where a record's batch is a delta
        alone; anything else replays the batches."""
        out: list[dict[str, Any]] = []
        item, proto = self.state.item, run.proto
        if (
            self.queue.held is not None
            or (self.own and not _own_plain(run))
            or (
                type(proto) is ir.ToolArgsDelta
                and (item is None or item.kind != "tool_call" or item.call != proto.call)
            )
        ):
            return run.replay(self.feed, self.notes)
        records = len(run.texts)
        if self.own:
            self.looped += records
            self.notes.line = run.lines[0]  # what opening an item says, as feed would
        else:
            for meta in run.shared:
                if type(meta.extra) is not NullResidue:
                    self.lost_meta(meta, records)
        if type(proto) is ir.TextDelta:
            self.deltas.text_run(run, out)
        elif type(proto) is ir.ReasoningDelta:
            # A Responses source's reasoning is written as it came (feed: the event's kind)
            self.deltas.reasoning_run(run, out, proto.kind if self.own else None)
        else:
            self.deltas.args_run(run, out)
        return out

    def finish(self) -> list[dict[str, Any]]:
        """End of input. A stream without its terminal event is left open unless
        ``--finish`` asks for an ending: chatx does not invent one."""
        out: list[dict[str, Any]] = []
        self.queue.release_all(out)
        if self.state.active:
            if self.state.error is not None:
                # The error ended the stream (Llama Stack's error frame, a chat error
                # frame with nothing after it): only response.failed may follow it.
                self._end(ir.StreamEnd(), out)
            elif self.options.finish:
                self.notes.repaired("input ended without a terminal event: ending written")
                self._end(ir.StreamEnd(), out)
            else:
                self.notes.warning("input ended without a terminal event (--finish writes one)")
        return out

    def _meta(self, event: ir.Meta, out: list[dict[str, Any]]) -> None:
        """Responses residue: patches for derived events, and parts opened early; another
        format's is lost (but for its nulls)."""
        state = self.state
        if not self.own:
            if event.meaning is not None:
                self.items.citations.cite(event, state.item, out)
            elif type(event.extra) is not NullResidue:
                self.lost_meta(event)
            return
        own = event.own
        if type(own) is not ResponsesOwn:
            return
        if own.derived:
            state.patches.update(own.derived)
        if own.open_part is not None and state.item is not None:
            ptype, number = own.open_part
            kind = "message" if ptype in ("output_text", "refusal") else "reasoning"
            if state.item.kind == kind:
                self.items.part(state.item, ptype, out, number if isinstance(number, int) else 0)

    # -- stream ---------------------------------------------------------------------

    def _start(self, event: ir.StreamStart, out: list[dict[str, Any]]) -> None:
        state = self.state
        if state.active:
            self._end(ir.StreamEnd(), out)
        state.restart()
        self.queue.clear()
        state.active = True
        own = event.own if self.own else None
        if type(own) is ResponsesOwn and own.response:
            response = dict(own.response)
        else:
            rid = responses_id(event.id)
            response = envelope(rid, event.created, event.model, self.options.request)
            if event.extra:
                report(event.extra, self.notes, "response.")
        state.response = response
        state.ids.response = response.get("id")
        if type(own) is ResponsesOwn:
            # Lifecycle events after the first (in_progress, queued) come through as
            # passthrough records, so the source's own sequence is kept.
            payload = {"type": own.first, "response": dict(response)}
            lifecycle_status(payload, self.notes)
            state.emit(out, payload, own.event)
            return
        state.emit(out, {"type": "response.created", "response": dict(response)})
        progress = dict(response)
        state.emit(out, {"type": "response.in_progress", "response": progress})

    def _end(self, event: ir.StreamEnd, out: list[dict[str, Any]]) -> None:
        state = self.state
        if not state.active:
            return
        self.items.close(out)
        status, details = shapes.terminal_status(state.reason, state.error is not None)
        usage = usage_object(state.usage, self.own) if state.usage is not None else None
        response = shapes.terminal_response(
            state.response, status, details, state.output, state.error, usage
        )
        terminal: dict[str, Any] = {"type": shapes.TERMINAL_EVENT[status], "response": response}
        if self.own:
            own = event.own
            if event.extra:
                merge(response, event.extra)
            if type(own) is ResponsesOwn and own.event:
                merge(terminal, own.event)
        elif event.extra:
            report(event.extra, self.notes, "response.")
        if self.own:
            state.ids.keep(terminal, self.notes)
            lifecycle_status(terminal, self.notes)
            settle(
                response,
                state.passing.open,
                state.closed,
                partial(state.emit, out),
                self.notes,
            )
        state.emit(out, terminal)
        state.active = False

    def _lane_start(self, event: ir.LaneStart, out: list[dict[str, Any]]) -> None:
        """Nothing to write: an item says its lane, and one that is not 0 is lost there."""

    def _usage(self, event: ir.Usage, out: list[dict[str, Any]]) -> None:
        self.state.usage = event

    def _finish(self, event: ir.Finish, out: list[dict[str, Any]]) -> None:
        if event.lane != 0:
            self.notes.lost(f"choice {event.lane}: a Responses stream holds one choice")
            return
        self.items.close(out)
        self.state.reason = event.reason
        if self.own:
            return
        if event.extra:
            report(event.extra, self.notes, "finish.")
        if event.stop_sequence is not None:  # Anthropic's: Responses has no stop sequences
            self.notes.lost_field("finish.stop_sequence")
        if exact_reason(event.reason) is None:
            self.notes.lost(
                f"finish reason {event.reason!r} has no Responses status: written as "
                f"response.incomplete with incomplete_details.reason {event.reason!r}"
            )

    def _error(self, event: ir.Error, out: list[dict[str, Any]]) -> None:
        state = self.state
        if not state.active:
            # An error before any stream (vLLM's frame when a request fails before its
            # first token): a server has sent response.created by then.
            self._start(ir.StreamStart(""), out)
        # Close what is open first: after an error only response.failed may follow.
        self.items.close(out)
        extra = event.extra
        if self.own:
            payload = shapes.error_event(event.code, event.message, event.param, event.type, None)
            state.emit(out, payload, extra.get("event"))
        else:
            payload = shapes.error_event(event.code, event.message, event.param, event.type, extra)
            state.emit(out, payload)
        state.error = shapes.response_error(event.code, event.message)

    def _passthrough(self, event: ir.Passthrough, out: list[dict[str, Any]]) -> None:
        state = self.state
        if event.format != NAME:
            self.items.searches.foreign(event, state.item, out)
            return
        data = dict(event.data)
        data.pop("sequence_number", None)
        kind = data.get("type")
        if state.passing.opens(data):
            self.items.close(out)
        emit = partial(state.emit, out)
        if state.passing.route(data, state.next_index, emit, state.ids, self.notes):
            state.next_index += 1
        state.ids.keep(data, self.notes)
        lifecycle_status(data, self.notes)
        if kind == "response.output_item.done" and isinstance(data.get("item"), dict):
            state.output.append(data["item"])
            state.closed[data["output_index"]] = data["item"]
        state.emit(out, data)


def _own_plain(run: DeltaRun) -> bool:
    """Whether each record of a Responses source's ``run`` is what the run loop writes as
    :meth:`ResponsesEncoder.feed` would: a delta alone, without residue (which feed
    merges back), logprobs or a mark of the decoder's own (a text the source gave only
    in a done event writes no delta)."""
    proto = run.proto
    return (
        not run.shared
        and proto.own is None
        and not proto.extra
        and getattr(proto, "logprobs", None) is None
    )
