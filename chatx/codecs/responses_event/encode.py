"""Encode IR events as Responses API stream events.

``response.created`` and ``response.in_progress`` open the stream; each item is opened
with ``output_item.added``, its parts with ``content_part.added`` (or
``reasoning_summary_part.added``), then deltas, ``*.done``, the part's done and
``output_item.done``; one item at a time. Sequence numbers are given here, at the
output stage, contiguous from 0 in each stream. The terminal event's ``output`` is the
list of items closed, and carries the usage. Items open and close in :mod:`.encode_items`,
their parts in :mod:`.parts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.call_order import CallQueue
from chatx.codecs.finish import exact
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.citations import Citations
from chatx.codecs.responses_event.encode_items import ItemEncoding
from chatx.codecs.responses_event.envelope import envelope, responses_id, usage_object
from chatx.codecs.responses_event.parts import OpenItem
from chatx.codecs.responses_event.searches import Searches
from chatx.codecs.responses_event.settle import Ids, Passing, lifecycle_status, settle
from chatx.codecs.responses_event.shapes import OPEN_PART, PATCH
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, NullResidue, merge, report

NAME = "responses-event"


class ResponsesEncoder(ItemEncoding):
    """Incremental encoder: ``feed(batch)`` returns the Responses events it means."""

    citations: Citations  # what the parts half knows as Annotates, and more

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == NAME
        self.lost_meta = MetaReport(notes)
        self.active = False
        self.citations = Citations(notes, self.lost_meta, self._emit, self._part)
        self.searches = Searches(notes, self._emit, self._new_item, self._close)
        self.queue = CallQueue(self._step, self._call_text, self._end_call_now)
        self._reset()

    def _reset(self) -> None:
        self.seq = 0
        self.response: dict[str, Any] = {}
        self.output: list[Any] = []
        self.closed: dict[int, Any] = {}  # output_index → the item its done event wrote
        self.passing = Passing()
        self.ids = Ids()
        self.item: OpenItem | None = None
        self.next_index = 0
        self.usage: ir.Usage | None = None
        self.reason: str | None = None
        self.error: dict[str, Any] | None = None
        self.calls: set[int] = set()
        self.queue.clear()
        self.patches: dict[tuple[Any, ...], dict[str, Any]] = {}

    def feed(self, events: Iterable[ir.Event]) -> list[dict[str, Any]]:
        """Encode one batch of IR events."""
        out: list[dict[str, Any]] = []
        queue = self.queue
        if queue.held is not None:
            queue.feed_held(events, out)
            return out
        it = iter(events)
        for event in it:
            # type() in each branch, not once in an alias: each branch narrows the event.
            # Content first, most frequent first; the stream's own events after.
            if type(event) is ir.TextDelta:
                self._text(event, out)
            elif type(event) is ir.Meta:
                self._meta(event, out)
            elif type(event) is ir.ReasoningDelta:
                self._reasoning(event, out)
            elif type(event) is ir.ToolArgsDelta:
                self._args(event, out)
            elif type(event) is ir.ItemStart:
                self._item_start(event, out)
            elif type(event) is ir.ItemEnd:
                self._item_end(event, out, it)
            elif type(event) is ir.RefusalDelta:
                self._refusal(event, out)
            else:
                self._stream_event(event, out)
        return out

    def _stream_event(self, event: ir.Event, out: list[dict[str, Any]]) -> None:
        if type(event) is ir.StreamStart:
            self._start(event, out)
        elif type(event) is ir.Finish:
            self._finish(event, out)
        elif type(event) is ir.Usage:
            self.usage = event
        elif type(event) is ir.Error:
            self._error(event, out)
        elif type(event) is ir.Passthrough:
            self._passthrough(event, out)
        elif type(event) is ir.StreamEnd:
            self._end(event, out)

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
        batches."""
        out: list[dict[str, Any]] = []
        item, proto = self.item, run.proto
        if (
            self.own  # this format's residue, merged back record by record
            or self.queue.held is not None
            or type(proto) is ir.ReasoningDelta
            or (
                type(proto) is ir.ToolArgsDelta
                and (item is None or item.kind != "tool_call" or item.call != proto.call)
            )
        ):
            return run.replay(self.feed, self.notes)
        records = len(run.texts)
        for meta in (run.before, run.after):
            if meta is not None and type(meta.extra) is not NullResidue:
                self.lost_meta(meta, records)
        if type(proto) is ir.TextDelta:
            self._text_run(run, out)
        else:
            self._args_run(run, out)
        return out

    def finish(self) -> list[dict[str, Any]]:
        """End of input. A stream without its terminal event is left open unless
        ``--finish`` asks for an ending: chatx does not invent one."""
        out: list[dict[str, Any]] = []
        self.queue.release_all(out)
        if self.active:
            if self.error is not None:
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
        if not self.own:
            if event.meaning is not None:
                self.citations.cite(event, self.item, out)
            elif type(event.extra) is not NullResidue:
                self.lost_meta(event)
            return
        extra = event.extra
        if PATCH in extra:
            self.patches.update(extra[PATCH])
        if OPEN_PART in extra and self.item is not None:
            ptype, number = extra[OPEN_PART]
            kind = "message" if ptype in ("output_text", "refusal") else "reasoning"
            if self.item.kind == kind:
                self._part(self.item, ptype, out, number if isinstance(number, int) else 0)

    # -- emit -----------------------------------------------------------------------

    def _emit(
        self,
        out: list[dict[str, Any]],
        payload: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None:
        if extra:
            if self.own:
                merge(payload, extra)
                self.ids.keep(payload, self.notes)
            else:
                self._lost(extra, "")
        if self.patches and payload["type"] in shapes.DERIVED:
            patch = self.patches.pop(shapes.derived_key(payload), None)
            if patch:
                merge(payload, patch)
                self.ids.keep(payload, self.notes)
        payload["sequence_number"] = self.seq
        self.seq += 1
        out.append(payload)

    def _lost(self, extra: dict[str, Any], prefix: str) -> None:
        report(extra, self.notes, prefix)

    # -- stream ---------------------------------------------------------------------

    def _start(self, event: ir.StreamStart, out: list[dict[str, Any]]) -> None:
        if self.active:
            self._end(ir.StreamEnd(), out)
        self._reset()
        self.active = True
        if self.own and event.extra.get("~response"):
            response = dict(event.extra["~response"])
        else:
            rid = responses_id(event.id)
            response = envelope(rid, event.created, event.model, self.options.request)
            if event.extra:
                self._lost(event.extra, "response.")
        self.response = response
        self.ids.response = response.get("id")
        if self.own and event.extra:
            # Lifecycle events after the first (in_progress, queued) come through as
            # passthrough records, so the source's own sequence is kept.
            first = event.extra.get("~type", "response.created")
            payload = {"type": first, "response": dict(response)}
            lifecycle_status(payload, self.notes)
            self._emit(out, payload, event.extra.get("~event"))
            return
        self._emit(out, {"type": "response.created", "response": dict(response)})
        progress = dict(response)
        self._emit(out, {"type": "response.in_progress", "response": progress})

    def _end(self, event: ir.StreamEnd, out: list[dict[str, Any]]) -> None:
        if not self.active:
            return
        self._close(out)
        status, details = shapes.terminal_status(self.reason, self.error is not None)
        usage = usage_object(self.usage, self.own) if self.usage is not None else None
        response = shapes.terminal_response(
            self.response, status, details, self.output, self.error, usage
        )
        terminal: dict[str, Any] = {"type": shapes.TERMINAL_EVENT[status], "response": response}
        if event.extra:
            if self.own:
                merge(response, {k: v for k, v in event.extra.items() if k != "~event"})
                merge(terminal, event.extra.get("~event") or {})
            else:
                self._lost(event.extra, "response.")
        if self.own:
            self.ids.keep(terminal, self.notes)
            lifecycle_status(terminal, self.notes)
            settle(response, self.passing.open, self.closed, partial(self._emit, out), self.notes)
        self._emit(out, terminal)
        self.active = False

    def _finish(self, event: ir.Finish, out: list[dict[str, Any]]) -> None:
        if event.lane != 0:
            self.notes.lost(f"choice {event.lane}: a Responses stream holds one choice")
            return
        self._close(out)
        self.reason = event.reason
        if self.own:
            return
        if event.extra:
            self._lost(event.extra, "finish.")
        if event.stop_sequence is not None:  # Anthropic's: Responses has no stop sequences
            self.notes.lost_field("finish.stop_sequence")
        if exact(event.reason) is None:
            self.notes.lost(
                f"finish reason {event.reason!r} has no Responses status: written as "
                f"response.incomplete with incomplete_details.reason {event.reason!r}"
            )

    def _error(self, event: ir.Error, out: list[dict[str, Any]]) -> None:
        if not self.active:
            # An error before any stream (vLLM's frame when a request fails before its
            # first token): a server has sent response.created by then.
            self._start(ir.StreamStart(""), out)
        # Close what is open first: after an error only response.failed may follow.
        self._close(out)
        extra = event.extra
        if self.own:
            payload = shapes.error_event(event.code, event.message, event.param, event.type, None)
            self._emit(out, payload, extra.get("event"))
        else:
            payload = shapes.error_event(event.code, event.message, event.param, event.type, extra)
            self._emit(out, payload)
        self.error = shapes.response_error(event.code, event.message)

    def _passthrough(self, event: ir.Passthrough, out: list[dict[str, Any]]) -> None:
        if event.format != NAME:
            self.searches.foreign(event, self.item, out)
            return
        data = dict(event.data)
        data.pop("sequence_number", None)
        kind = data.get("type")
        if self.passing.opens(data):
            self._close(out)
        emit = partial(self._emit, out)
        if self.passing.route(data, self.next_index, emit, self.ids, self.notes):
            self.next_index += 1
        self.ids.keep(data, self.notes)
        lifecycle_status(data, self.notes)
        if kind == "response.output_item.done" and isinstance(data.get("item"), dict):
            self.output.append(data["item"])
            self.closed[data["output_index"]] = data["item"]
        self._emit(out, data)
