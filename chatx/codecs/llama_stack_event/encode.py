"""Encode IR events as Llama Stack legacy inference events.

``start`` first (an empty text delta); text as ``progress`` text deltas; each tool call as
``started`` → ``in_progress`` (the argument fragments) → ``succeeded`` (a parsed ToolCall
whose ``arguments_json`` is the exact argument text) or ``failed`` (the raw text, when it
is not JSON); ``complete`` last, with the stop reason and the usage as ``metrics``. A
``Finish`` puts its stop reason on the record its batch wrote (Llama Stack puts it on the
``succeeded`` event), and always on ``complete``; an ``Error`` is an ``{"error": …}`` frame
(the ending is written in :mod:`.ending`, text in :mod:`.text`, calls in :mod:`.calls`).

From another format, chat text is read for Llama's special tokens, as Llama Stack's own
OpenAI-compat layer does: ``<|eot_id|>``/``<|eom_id|>`` set the stop reason and
``<|python_tag|>`` opens a built-in tool call; no token reaches the text. What Llama Stack
cannot hold (reasoning, refusal as such, a second choice, other formats' items and
residue) is reported in ``notes``.

From this codec's own decoder (``EncodeOptions.source_format``) the residue under
``extra["llama_stack"]`` is put back (see the decoder's docstring), so each record comes
back with the same JSON value; special tokens are not interpreted then.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.call_order import CallQueue
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, merge, report

from . import records as r
from .calls import CallEncoding, OpenCall
from .ending import EndingEncoding
from .special_tokens import TokenScanner
from .text import TextEncoding

LS = r.LS
_RECORD_KEYS = ("~text", "~started", "~in_progress", "~failed")


class LlamaStackEncoder(TextEncoding, CallEncoding, EndingEncoding):
    """Incremental encoder: ``feed(batch)`` returns the records of one source record."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == r.NAME
        self.lost_meta = MetaReport(notes)
        self.open = False
        self.batch: list[ir.Event] = []  # the batch being encoded
        self.noted: set[str] = set()
        self.queue = CallQueue(self._step, self._call_text, self._end_call_now)
        self._reset("")

    def _reset(self, stream: str) -> None:
        self.id = stream
        self.lane: int | None = None
        self.stop: str | None = None  # from Finish
        self.token_stop: str | None = None  # from <|eot_id|> / <|eom_id|>
        self.usage: ir.Usage | None = None
        self.calls: dict[int | None, OpenCall] = {}
        self.queue.clear()
        self.count = 0  # calls written, for derived call ids
        self.raw: list[str] = []  # in_progress fragments since the last started
        self.scanner = TokenScanner()
        self.python: list[str] | None = None  # the text after <|python_tag|>
        self.logprobs: list[Any] | None = None  # of text the scanner still holds
        self.failed = False  # an error frame was written
        self.completed = False  # the complete event was written
        self.reason: str | None = None  # the IR finish reason

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; from this codec's own decoder, one record per batch."""
        out: list[Any] = []
        self.batch = events
        queue = self.queue
        if queue.held is not None:
            queue.feed_held(events, out)
            return out
        it = iter(events)
        for event in it:
            if self._encode(event, out):  # a call held open: the rest waits on it
                queue.feed_held(it, out)
        return out

    def _step(self, event: ir.Event, out: list[Any]) -> None:
        self._encode(event, out)

    def _encode(self, event: ir.Event, out: list[Any]) -> bool:
        """One event; true when it holds a tool call open (see :mod:`chatx.codecs.call_order`).

        One ``if type(event) is ...`` chain, most frequent first, as the other encoders
        dispatch: each branch narrows the event for the type checker. The stream's own
        events are in :meth:`_stream_event`."""
        if type(event) is ir.TextDelta:
            self._text(event, out)
        elif type(event) is ir.Meta:
            self._meta(event, out)
        elif type(event) is ir.ToolArgsDelta:
            self._args(event, out)
        elif type(event) is ir.ItemStart:
            self._item_start(event, out)
        elif type(event) is ir.ItemEnd:
            return self._item_end(event, out)
        elif type(event) is ir.ReasoningDelta:
            self._reasoning(event, out)
        elif type(event) is ir.RefusalDelta:
            self._refusal(event, out)
        else:
            self._stream_event(event, out)
        return False

    def _stream_event(self, event: ir.Event, out: list[Any]) -> None:
        if type(event) is ir.LaneStart:
            self._lane_ok(event.lane)
        elif type(event) is ir.Finish:
            self._finish(event, out)
        elif type(event) is ir.Usage:
            self._usage(event)
        elif type(event) is ir.StreamStart:
            self._stream_start(event, out)
        elif type(event) is ir.StreamEnd:
            self._stream_end(event, out)
        elif type(event) is ir.Error:
            self._error(event, out)
        elif type(event) is ir.Passthrough:
            self._passthrough(event, out)

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches."""
        out: list[Any] = []
        proto = run.proto
        kind = type(proto)
        call = self.calls.get(proto.call) if kind is ir.ToolArgsDelta else None  # type: ignore[union-attr]
        if (
            self.own
            or self.queue.held is not None
            or run.lane != self.lane
            or proto.extra
            or (kind is ir.ToolArgsDelta and call is None)
        ):
            # Own residue, a lane to check first, or a call not started.
            return run.replay(self.feed, self.notes)
        records = len(run.texts)
        for meta in (run.before, run.after):
            if meta is not None:
                self.lost_meta(meta, records)
        obfuscated = records - run.obfuscations.count(None)
        if obfuscated:
            self.notes.lost_fields["obfuscation"] += obfuscated
        self.batch = []
        if kind is ir.ReasoningDelta:  # what _reasoning says of each: no place for it
            self.notes.lost_fields["reasoning"] += records
            return out
        if call is not None:  # a run's fragments are never empty
            call.fragments.extend(run.texts)
            event, delta = r.event, r.tool_delta
            out.extend(event("progress", delta("in_progress", text)) for text in run.texts)
            return out
        for text in run.texts:
            self._scan(text, None, out)
        return out

    def finish(self) -> list[Any]:
        """End of input: write what is pending; ``complete`` only if asked (``--finish``)."""
        out: list[Any] = []
        if self.open:
            self.queue.release_all(out)
            self._close_all(out)
            if self.options.finish and not (self.failed or self.completed):
                out.append(self._complete())
            self.open = False
        return out

    # --- stream -------------------------------------------------------------------------

    def _stream_start(self, event: ir.StreamStart, out: list[Any]) -> None:
        if self.open:
            self._close_all(out)
        self._reset(event.id)
        self.open = True
        ls = self._own(event.extra, "response.")
        if "implicit" not in ls:
            out.append(r.event("start", r.text_delta("")))
            self._patch(out, ls)

    def _stream_end(self, event: ir.StreamEnd, out: list[Any]) -> None:
        ls = self._own(event.extra, "")
        self._close_all(out)
        if self.own or not self.failed:
            out.append(self._complete())
            self._patch(out, ls)
        elif not self.completed and self._said():
            # Llama Stack's server writes nothing after its error frame, and its client
            # raises there: an ending said only after the error has no place.
            self.notes.lost("the finish reason or usage that came after the error frame")
        self.open = False

    def _meta(self, event: ir.Meta, out: list[Any]) -> None:
        if not self.own:
            self.lost_meta(event)
            return
        ls = self._record_stop(event.extra.get(LS, {}))
        key = next((k for k in _RECORD_KEYS if k in ls), None)
        if key is not None:
            out.append(self._held_record(key, ls[key]))
        self._patch(out, ls)

    def _held_record(self, key: str, value: Any) -> dict[str, Any]:
        """A record the decoder held back and described in a Meta (own residue)."""
        text = value if isinstance(value, str) else ""
        if key == "~text":
            return r.event("progress", r.text_delta(text))
        if key == "~started":
            self.raw = []
        elif key == "~in_progress":
            self.raw.append(text)
        else:  # failed: None stands for the fragments' text, as newer Llama Stack sends
            text = "".join(self.raw) if value is None else text
            return r.event("progress", r.tool_delta("failed", text), None, self._stop_word())
        return r.event("progress", r.tool_delta(key[1:], text))

    # --- text ---------------------------------------------------------------------------

    def _refusal(self, event: ir.RefusalDelta, out: list[Any]) -> None:
        if not self._lane_ok(event.lane):
            return
        self._note_once(
            "refusal", "a refusal is written as message text: Llama Stack events have no refusal"
        )
        self._flush(out)
        self.logprobs = event.logprobs
        self._write_text(event.text, out)

    def _reasoning(self, event: ir.ReasoningDelta, out: list[Any]) -> None:
        self.notes.lost_field("reasoning")
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")

    # --- tool calls (the rest in calls.py) ----------------------------------------------

    def _close_all(self, out: list[Any]) -> None:
        self._flush(out)
        for call in list(self.calls.values()):
            self._end_call(call, False, out)
        self.calls.clear()

    # --- passthrough records ------------------------------------------------------------

    def _passthrough(self, event: ir.Passthrough, out: list[Any]) -> None:
        if event.format == r.NAME:
            out.append(event.data)
            return
        # As the chat encoder does: an item with no place is reported once, where it is
        # added; its other events and lifecycle events say nothing more.
        if event.item is not None:
            if event.item:
                self.notes.lost(f"{event.item} item has no place in Llama Stack events")
            return
        data = event.data if isinstance(event.data, dict) else {}
        what, item = data.get("type"), data.get("item")
        if isinstance(item, dict) and what == "response.output_item.added":
            self.notes.lost(f"{item.get('type')} item has no place in Llama Stack events")
        elif isinstance(what, str) and "annotation" in what:
            self.notes.lost_field("annotations")
        elif not isinstance(what, str):
            self.notes.lost(f"a {event.format} record has no place in Llama Stack events")

    # --- helpers ------------------------------------------------------------------------

    def _stop_word(self) -> str | None:
        return self.token_stop or self.stop

    def _own(self, extra: dict[str, Any], prefix: str) -> dict[str, Any]:
        """This codec's residue from ``extra``; from another format, report ``extra``."""
        if self.own:
            return self._record_stop(extra.get(LS, {}))
        if extra:
            report(extra, self.notes, prefix)
        return {}

    def _record_stop(self, ls: dict[str, Any]) -> dict[str, Any]:
        """Own residue: a tool record whose ``Finish`` the decoder said later ("~stop")
        carries its stop reason all the same, as do the records after it."""
        if "~stop" in ls:
            self.stop = ls["~stop"]
        return ls

    def _patch(self, out: list[Any], ls: dict[str, Any]) -> None:
        """Apply own residue to the record just written."""
        if not ls or not out or not isinstance(out[-1], dict):
            return
        if "patch" in ls:
            merge(out[-1], ls["patch"])

    def _lane_ok(self, lane: int) -> bool:
        if self.lane is None:
            self.lane = lane
        if lane == self.lane:
            return True
        self._note_once(
            f"lane {lane}",
            f"choice {lane} left out: Llama Stack events hold "
            "one choice (choose one with --choice)",
        )
        return False

    def _note_once(self, key: str, message: str) -> None:
        if key not in self.noted:
            self.noted.add(key)
            self.notes.lost(message)
