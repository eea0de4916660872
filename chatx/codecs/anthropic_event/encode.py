"""Encode IR events as Anthropic Messages stream events.

``message_start`` first (usage zero: the counts come at the end); each IR item one
content block, ``content_block_start`` → deltas → ``content_block_stop``, one block at a
time (tool calls whose fragments interleave are held open as
:mod:`chatx.codecs.call_order` says); ``message_delta`` with the stop reason and the
usage, then ``message_stop``, once the source's stream ends. A message item is a
``text`` block, a tool call a ``tool_use`` block (``call_id`` its id), a reasoning item
a ``thinking`` block, written once it has something to say: its signature closes it,
and a reasoning item with only ``encrypted`` content is a ``redacted_thinking`` block.
An ``Error`` is an ``error`` event, after which nothing is written (the ending is written
in :mod:`.ending`, content blocks in :mod:`.content`; the state they share is
:mod:`.written`'s).

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
from .citations import AnthropicCitations
from .content import Content, merged
from .ending import AnthropicEnding
from .runs import AnthropicRuns
from .searches import AnthropicSearches
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
    ``runs`` a run of deltas in one loop, ``ending`` the usage, stop reason, ending and
    errors (:mod:`.ending`). ``handlers`` is the table from an event's type to the
    method that writes it; the message's start is the encoder's own."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == NAME
        self.lost_meta = MetaReport(notes)
        self.written = written = Written(notes, self.own)
        self.content = content = Content(written, notes, self._step)
        self.queue = content.queue
        self.citations = AnthropicCitations(written, notes, content.open_text)
        self.searches = AnthropicSearches(written, notes, content.close_block)
        self.runs = AnthropicRuns(written, notes, self.queue, self.lost_meta, self.feed)
        self.ending = ending = AnthropicEnding(written, content, self.queue, notes)
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
            ir.Usage: ending.usage,
            ir.Finish: ending.finish,
            ir.Error: ending.error,
            ir.Passthrough: self._passthrough,
        }
        self.written.restart("")

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; from this codec's own decoder, one record per batch."""
        out: list[Any] = []
        written, queue, handlers = self.written, self.queue, self.handlers
        if not self.own and len(events) > 1 and any(type(e) is ir.Error for e in events):
            # The usage and finish of the record that says the error come before it.
            events = sorted(events, key=_error_last)
        for event in events:
            if written.failed and not self.own and type(event) is not ir.StreamStart:
                self.ending.after_error(event)
            elif queue.held is not None:
                queue.feed_held((event,), out)
            else:
                handlers[type(event)](event, out)
        if written.delta_due:
            self.ending.own_delta(out)
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
                self.ending.end(out)
            elif not self.own:
                self.notes.warning("input ended without message_stop (--finish writes one)")
        return out

    # --- the message --------------------------------------------------------------------

    def _stream_start(self, event: ir.StreamStart, out: list[Any]) -> None:
        written = self.written
        if written.open and not self.own and not written.failed:
            self.ending.end(out)
        extra = event.extra
        if self.own:
            own = r.own_of(event)
            self.written.restart(event.id)
            written.open = True
            written.start_usage = dict(own.usage or {})
            if own.implicit:
                return  # the source had no message_start: none is written
            record = r.message_start(
                event.id,
                event.model,
                dict(own.usage or {}),
                own.content or [],
                own.stop or [None, None],
            )
            out.append(merged(record, extra))
            return
        self.written.restart(message_id(event.id))
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
            self.ending.end(out)
        written.open = False

    def _lane_start(self, event: ir.LaneStart, out: list[Any]) -> None:
        self.written.lane_ok(event.lane)

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
        own = event.own
        if type(own) is r.AnthropicOwn and own.record is not None:
            out.append(own.record)
        elif out and isinstance(out[-1], dict):  # the record's own fields (an error's)
            merge(out[-1], event.extra)

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


def _error_last(event: ir.Event) -> int:
    kind = type(event)
    return 2 if kind is ir.StreamEnd else 1 if kind is ir.Error else 0
