"""Encode IR events as Anthropic Messages stream events.

``message_start`` first (usage zero: the counts come at the end); each IR item one
content block, ``content_block_start`` → deltas → ``content_block_stop``, one block at a
time (tool calls whose fragments interleave are held open as
:mod:`chatx.codecs.call_order` says); ``message_delta`` with the stop reason and the
usage, then ``message_stop``, once the source's stream ends. A message item is a
``text`` block, a tool call a ``tool_use`` block (``call_id`` its id), a reasoning item
a ``thinking`` block, written once it has something to say: its signature closes it,
and a reasoning item with only ``encrypted`` content is a ``redacted_thinking`` block.
An ``Error`` is an ``error`` event, after which nothing is written.

From this codec's own decoder (``EncodeOptions.source_format``) each record is the
canonical record of its events with their residue merged back (see the decoder), and
records with no IR content come back from their ``~record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, NullResidue, merge, report

from . import records as r
from .citations import Citations
from .content import Content, merged
from .runs import Runs
from .searches import Searches
from .written import Written

NAME = r.NAME


def message_id(source: str) -> str:
    """``chatcmpl-X`` / ``resp_X`` → ``msg_X``: the message id derives from the source's."""
    if source.startswith("msg_"):
        return source
    for prefix in ("chatcmpl-", "chat-", "resp_"):
        if source.startswith(prefix):
            return "msg_" + source[len(prefix) :]
    return "msg_" + (source or "0")


class AnthropicEncoder:
    """Incremental encoder: ``feed(batch)`` returns the events of one source record;
    ``feed_run`` a run's.

    Its parts share the :class:`~chatx.codecs.anthropic_event.written.Written` message:
    ``content`` writes the content blocks (its ``queue`` holds tool calls open),
    ``citations`` and ``searches`` another format's citations and web searches,
    ``runs`` a run of deltas in one loop. ``handlers`` is the table from an event's type
    to the method that writes it; the message's start and end are the encoder's own."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == NAME
        self.lost_meta = MetaReport(notes)
        self.written = written = Written(notes, self.own)
        self.content = content = Content(written, notes, self._step)
        self.queue = content.queue
        self.citations = Citations(written, notes, content.open_text)
        self.searches = Searches(written, notes, content.close_block)
        self.runs = Runs(written, notes, self.queue, self.lost_meta, self.feed)
        self.handlers: dict[type, Callable[[Any, list[Any]], None]] = {
            ir.StreamStart: self._stream_start,
            ir.StreamEnd: self._stream_end,
            ir.LaneStart: self._lane_start,
            ir.Meta: self._meta,
            ir.ItemStart: content.item_start,
            ir.TextDelta: content.text,
            ir.RefusalDelta: content.refusal,
            ir.ReasoningDelta: content.reasoning,
            ir.ToolArgsDelta: content.args,
            ir.ItemEnd: content.item_end,
            ir.Usage: self._usage,
            ir.Finish: self._finish,
            ir.Error: self._error,
            ir.Passthrough: self._passthrough,
        }
        self._reset("")

    def _reset(self, mid: str) -> None:
        self.written.restart(mid)
        self.finish_event: ir.Finish | None = None
        self.usage: ir.Usage | None = None
        self.delta_written = False
        self.start: dict[str, int] = {}  # own: message_start's usage counts

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; from this codec's own decoder, one record per batch."""
        out: list[Any] = []
        written, queue, handlers = self.written, self.queue, self.handlers
        if not self.own and len(events) > 1 and any(type(e) is ir.Error for e in events):
            # The usage and finish of the record that says the error come before it.
            events = sorted(events, key=_error_last)
        for event in events:
            if written.failed and not self.own and type(event) is not ir.StreamStart:
                self._after_error(event)
            elif queue.held is not None:
                queue.feed_held((event,), out)
            else:
                handlers[type(event)](event, out)
        if written.delta_due:
            self._own_delta(out)
        return out

    def _step(self, event: ir.Event, out: list[Any]) -> None:
        self.handlers[type(event)](event, out)

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun` (:mod:`.runs`)."""
        return self.runs.encode(run)

    def finish(self) -> list[Any]:
        """End of input: a message without its ``message_stop`` is left as it is, unless
        ``--finish`` asks for an ending."""
        written = self.written
        out: list[Any] = []
        self.queue.release_all(out)
        if written.open and not written.failed:
            if self.options.finish:
                self.notes.repaired("input ended without message_stop: ending written")
                self._end(out)
            elif not self.own:
                self.notes.warning("input ended without message_stop (--finish writes one)")
        return out

    # --- the message --------------------------------------------------------------------

    def _stream_start(self, event: ir.StreamStart, out: list[Any]) -> None:
        written = self.written
        if written.open and not self.own and not written.failed:
            self._end(out)
        extra = event.extra
        if self.own:
            self._reset(event.id)
            written.open = True
            self.start = dict(extra.get("~usage") or {})
            if extra.get("~implicit"):
                return  # the source had no message_start: none is written
            record = r.message_start(
                event.id,
                event.model,
                dict(extra.get("~usage") or {}),
                extra.get("~content") or [],
                extra.get("~stop") or [None, None],
            )
            out.append(merged(record, extra))
            return
        self._reset(message_id(event.id))
        written.open = True
        if extra:
            report(extra, self.notes, "response.")
        usage = r.start_usage({})
        out.append(r.message_start(written.id, event.model or "", usage, [], [None, None]))

    def _stream_end(self, event: ir.StreamEnd, out: list[Any]) -> None:
        written = self.written
        if self.own:
            out.append(merged(r.message_stop(), event.extra))
            written.open = False
            return
        if event.extra:
            report(event.extra, self.notes, "response.")
        if written.open and not written.failed:
            self._end(out)
        written.open = False

    def _end(self, out: list[Any]) -> None:
        """``message_delta`` and ``message_stop``: the source's stream has ended."""
        self.queue.release_all(out)
        self.content.close_block(out)
        self._foreign_delta(out)
        out.append(r.message_stop())
        self.written.open = False

    def _foreign_delta(self, out: list[Any]) -> None:
        """``message_delta`` from another format: its stop reason and usage, once."""
        if self.delta_written:
            return
        usage = self.usage
        if usage is None and self.start:  # message_start's counts, the last said
            usage = r.read_usage({}, self.start)
        if usage is None:
            self.notes.warning(
                "the input has no usage: message_delta says 0 tokens (the API requires counts)"
            )
            usage = ir.Usage()
        finish = self.finish_event
        sequence = finish.stop_sequence if finish is not None else None
        out.append(r.message_delta(self._stop_word(), r.usage_object(usage, False), sequence))
        self.delta_written = True

    def _stop_word(self) -> str:
        finish = self.finish_event
        if finish is None:
            word = "tool_use" if self.written.called else "end_turn"
            self.notes.repaired(f"the input has no finish reason: stop_reason {word} written")
            return word
        said = r.stop_word(finish.reason, finish.raw)
        if finish.reason == "function_call":
            self.notes.lost("finish reason 'function_call' (a legacy function call): tool_use")
        if said is None:
            what = " (the generation failed)" if finish.reason == "error" else ""
            self.notes.lost(
                f"finish reason {finish.reason!r}{what} has no Anthropic stop reason: "
                "written as end_turn"
            )
            said = "end_turn"
        return said

    def _own_delta(self, out: list[Any]) -> None:
        finish, usage = self.finish_event, self.usage
        word = (finish.raw or finish.reason) if finish is not None else None
        sequence = finish.stop_sequence if finish is not None else None
        record = r.message_delta(
            word, r.usage_record(usage) if usage is not None else None, sequence
        )
        if finish is not None:
            merged(record, finish.extra)
        elif usage is not None:
            merged(record, usage.extra.get("~patch") or {})
        out.append(record)
        self.finish_event = self.usage = None
        self.written.delta_due = False
        self.delta_written = True

    def _lane_start(self, event: ir.LaneStart, out: list[Any]) -> None:
        self.written.lane_ok(event.lane)

    def _usage(self, event: ir.Usage, out: list[Any]) -> None:
        if self.own:
            if "~start" not in event.extra:  # message_start's, said again at the end
                self.usage = event
                self.written.delta_due = True
            return
        self.usage = event
        if event.extra:
            report(event.extra, self.notes, "usage.")
        inputs, outputs, total = event.input, event.output, event.total
        if total is not None and inputs is not None and outputs is not None:
            self._total(total, inputs + outputs)

    def _total(self, total: int, counted: int) -> None:
        if total != counted:
            self.written.note_once(
                "total",
                f"usage total {total}: Anthropic usage has no total, and input + output "
                f"is {counted}",
            )

    def _finish(self, event: ir.Finish, out: list[Any]) -> None:
        if self.own:
            if "~prefill" not in event.extra:
                self.finish_event = event
                self._own_delta(out)
            return
        if not self.written.lane_ok(event.lane):
            return
        self.content.close_block(out)
        if self.finish_event is None:
            self.finish_event = event
        if event.extra:
            report(event.extra, self.notes, "finish.")

    def _error(self, event: ir.Error, out: list[Any]) -> None:
        written = self.written
        if self.own:
            record = r.error(event.type, event.message)
            merge(record["error"], event.extra)
            out.append(record)
            written.failed = True
            return
        # The API ends a stream with its error event. A finish reason or usage the source
        # said before its error (OpenRouter's length, then an error chunk) goes first, in
        # the message_delta: nothing follows the error.
        if written.open and (self.finish_event is not None or self.usage is not None):
            self.queue.release_all(out)
            self.content.close_block(out)
            self._foreign_delta(out)
        written.block = None
        etype = event.type or (event.code if isinstance(event.code, str) else None)
        for key, value in (("code", event.code), ("param", event.param)):
            if value is not None and not (key == "code" and etype == value):
                self.notes.lost_field(f"error.{key}")
        if event.extra:
            report(event.extra, self.notes, "error.")
        out.append(r.error(etype or "api_error", event.message or ""))
        written.failed = True

    def _meta(self, event: ir.Meta, out: list[Any]) -> None:
        written = self.written
        if not self.own:
            cite = event.meaning  # a chat annotation's citation
            if (
                cite is not None
                and written.lane_ok(event.lane or 0)
                and self.citations.cite(cite, written.block, out)
            ):
                return
            if type(event.extra) is not NullResidue:
                self.lost_meta(event)
            return
        extra = event.extra
        if "~record" in extra:
            out.append(extra["~record"])
        elif out and isinstance(out[-1], dict):  # the record's own fields (an error's)
            merge(out[-1], extra)

    def _passthrough(self, event: ir.Passthrough, out: list[Any]) -> None:
        written = self.written
        if event.format == NAME:
            data = event.data
            if type(data) is dict and data.get("type") == "content_block_start":
                written.index += 1
            out.append(data)
            return
        meaning = event.meaning
        if type(meaning) is ir.WebSearch:
            self.searches.write(meaning, out)
            return
        if type(meaning) is ir.Citation and self.citations.cite(meaning, written.block, out):
            return
        data = event.data if isinstance(event.data, dict) else {}
        what, item = data.get("type"), data.get("item")
        if event.item:
            self.notes.lost(f"{event.item} item has no place in Anthropic messages")
        elif isinstance(item, dict) and what == "response.output_item.added":
            self.notes.lost(f"{item.get('type')} item has no place in Anthropic messages")
        elif isinstance(what, str) and "annotation" in what:
            self.notes.lost_field("annotations")
        elif event.item is None and not isinstance(what, str):
            self.notes.lost(f"a {event.format} record has no place in Anthropic messages")

    def _after_error(self, event: ir.Event) -> None:
        """The API writes nothing after its error event: what a source says there
        (a Responses response.failed's usage) has no place."""
        kind = type(event)
        said = kind is ir.Usage or (kind is ir.Finish and event.reason != "error")  # type: ignore[union-attr]
        content = kind in (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta, ir.RefusalDelta)
        if said or content:
            self.written.note_once("after error", "what came after the error event has no place")


def _error_last(event: ir.Event) -> int:
    kind = type(event)
    return 2 if kind is ir.StreamEnd else 1 if kind is ir.Error else 0


_HANDLERS = {
    ir.StreamStart: "_stream_start",
    ir.StreamEnd: "_stream_end",
    ir.LaneStart: "_lane_start",
    ir.Meta: "_meta",
    ir.ItemStart: "_item_start",
    ir.TextDelta: "_text",
    ir.RefusalDelta: "_refusal",
    ir.ReasoningDelta: "_reasoning",
    ir.ToolArgsDelta: "_args",
    ir.ItemEnd: "_item_end",
    ir.Usage: "_usage",
    ir.Finish: "_finish",
    ir.Error: "_error",
    ir.Passthrough: "_passthrough",
}
