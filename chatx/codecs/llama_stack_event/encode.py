"""Encode IR events as Llama Stack legacy inference events.

``start`` first (an empty text delta); text as ``progress`` text deltas; each tool call as
``started`` → ``in_progress`` (the argument fragments) → ``succeeded`` (a parsed ToolCall
whose ``arguments_json`` is the exact argument text) or ``failed`` (the raw text, when it
is not JSON); ``complete`` last, with the stop reason and the usage as ``metrics``. A
``Finish`` puts its stop reason on the record its batch wrote (Llama Stack puts it on the
``succeeded`` event), and always on ``complete``; an ``Error`` is an ``{"error": …}`` frame
(the ending is written in :mod:`.ending`, text in :mod:`.text`, calls in :mod:`.calls`;
the state they share is :mod:`.generation`'s).

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

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.as_input import AsInput
from chatx.codecs.base import EncodeOptions
from chatx.codecs.byte_template import Kept
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, passthrough_lost

from . import records as r
from .calls import Calls
from .ending import LlamaStackEnding
from .generation import LS, Generation, patch
from .text import Text, args_record

# The held records a Meta may stand for (its note's ``held``), written back.
_HELD = ("text", "started", "in_progress", "failed")


class LlamaStackEncoder:
    """Incremental encoder: ``feed(batch)`` returns the records of one source record.

    Its parts share the :class:`~chatx.codecs.llama_stack_event.generation.Generation`:
    ``text`` writes text and reads special tokens, ``calls`` writes tool calls (one at
    a time, its ``queue`` holding the rest), ``ending`` the usage, finish and errors.
    ``handlers`` is the table from an event's type to the part's method that writes it;
    a handler returns true when it holds a tool call open."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = own = options.source_format == r.NAME
        self.lost_meta = MetaReport(notes)
        self.generation = g = Generation(notes, own)
        self.text = text = Text(g, notes)
        self.calls = calls = Calls(g, text, notes, self._step)
        self.ending = ending = LlamaStackEnding(g, text, calls, notes)
        self.queue = calls.queue
        self.args_kept = Kept()  # the byte template of a run's argument fragments
        # A Llama Stack source's runs, written as their input bytes where feed would write them.
        self.inputs = AsInput(notes, self.feed, self._as_input)
        self.handlers: dict[type, Callable[[Any, list[Any]], bool | None]] = {
            ir.TextDelta: text.text,
            ir.Meta: self._meta,
            ir.ToolArgsDelta: calls.args,
            ir.ItemStart: calls.item_start,
            ir.ItemEnd: calls.item_end,
            ir.ReasoningDelta: self._reasoning,
            ir.RefusalDelta: text.refusal,
            ir.LaneStart: self._lane_start,
            ir.Finish: ending.finish,
            ir.Usage: ending.usage,
            ir.StreamStart: self._stream_start,
            ir.StreamEnd: self._stream_end,
            ir.Error: ending.error,
            ir.Passthrough: self._passthrough,
        }

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; from this codec's own decoder, one record per batch."""
        out: list[Any] = []
        self.generation.batch = events
        self.queue.encode(events, self.handlers, out)
        return out

    def _step(self, event: ir.Event, out: list[Any]) -> None:
        self.handlers[type(event)](event, out)

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches. A Llama Stack source's run is written as its input bytes where they are
        what ``feed`` writes (:class:`~chatx.codecs.as_input.AsInput`). Another format's
        argument fragments, and its text where the special-token scanner lets each
        through whole (:meth:`.text.Text.plain`), go out from a byte template
        (:class:`~chatx.codecs.byte_template.Kept`); other text is scanned record by record."""
        if self.own:
            return self.inputs.write(run)
        out: list[Any] = []
        g = self.generation
        proto = run.proto
        kind = type(proto)
        call = g.calls.get(proto.call) if kind is ir.ToolArgsDelta else None  # type: ignore[union-attr]
        if (
            self.queue.held is not None
            or run.lane != g.lane
            or proto.extra
            or (kind is ir.ToolArgsDelta and call is None)
        ):
            # Own residue, a lane to check first, or a call not started.
            return run.replay(self.feed, self.notes)
        records = len(run.texts)
        for meta in run.shared:
            self.lost_meta(meta, records)
        obfuscated = records - run.obfuscations.count(None)
        if obfuscated:
            self.notes.lost_fields["obfuscation"] += obfuscated
        g.batch = []
        if kind is ir.ReasoningDelta:  # what _reasoning says of each: no place for it
            self.notes.lost_fields["reasoning"] += records
            return out
        if call is not None:  # a run's fragments are never empty
            call.fragments.extend(run.texts)
            return self.args_kept.records((), args_record, run.texts)
        text = self.text
        if text.plain(run.texts):
            return text.deltas(run.texts)
        scan = text.scan
        for piece in run.texts:
            scan(piece, None, out)
        return out

    def _as_input(self, run: DeltaRun) -> tuple[Any, ...]:
        """What a record written of a Llama Stack source's run depends on (see
        :class:`AsInput`): nothing of the encoder's state. From its own source the
        encoder holds no call open, and writes a text delta as it is, its residue put
        back: a record of another lane writes nothing and one with residue that holds
        a record back writes two, which the probe sees (the run is then replayed)."""
        return ()

    def finish(self) -> list[Any]:
        """End of input: write what is pending; ``complete`` only if asked (``--finish``)."""
        out: list[Any] = []
        g = self.generation
        if g.open:
            self.queue.release_all(out)
            self.calls.close_all(out)
            if self.options.finish and not (g.failed or g.completed):
                out.append(self.ending.complete())
            g.open = False
        return out

    # --- the stream and what the other parts do not write --------------------------------

    def _stream_start(self, event: ir.StreamStart, out: list[Any]) -> None:
        g = self.generation
        if g.open:
            self.calls.close_all(out)
        g.restart(event.id)
        self.queue.clear()
        g.open = True
        ls = g.residue(event.extra, "response.")
        if "implicit" not in ls:
            out.append(r.event("start", r.text_delta("")))
            patch(out, ls)

    def _stream_end(self, event: ir.StreamEnd, out: list[Any]) -> None:
        g = self.generation
        ls = g.residue(event.extra, "")
        self.calls.close_all(out)
        if self.own or not g.failed:
            out.append(self.ending.complete())
            patch(out, ls)
        elif not g.completed and g.said_ending():
            # Llama Stack's server writes nothing after its error frame, and its client
            # raises there: an ending said only after the error has no place.
            self.notes.lost("the finish reason or usage that came after the error frame")
        g.open = False

    def _lane_start(self, event: ir.LaneStart, out: list[Any]) -> None:
        self.generation.lane_ok(event.lane)

    def _reasoning(self, event: ir.ReasoningDelta, out: list[Any]) -> None:
        self.notes.lost_field("reasoning")
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")

    def _meta(self, event: ir.Meta, out: list[Any]) -> None:
        if not self.own:
            self.lost_meta(event)
            return
        own = r.own_of(event)
        self.generation.record_stop(own)
        if own.held in _HELD:
            out.append(self._held_record(own.held, own.value))
        patch(out, event.extra.get(LS, {}))

    def _held_record(self, key: str, value: Any) -> dict[str, Any]:
        """A record the decoder held back and described in a Meta (own residue)."""
        g = self.generation
        text = value if isinstance(value, str) else ""
        if key == "text":
            return r.event("progress", r.text_delta(text))
        if key == "started":
            g.raw = []
        elif key == "in_progress":
            g.raw.append(text)
        else:  # failed: None stands for the fragments' text, as newer Llama Stack sends
            text = "".join(g.raw) if value is None else text
            return r.event("progress", r.tool_delta("failed", text), None, g.stop_word())
        return r.event("progress", r.tool_delta(key, text))

    def _passthrough(self, event: ir.Passthrough, out: list[Any]) -> None:
        if event.format == r.NAME:
            out.append(event.data)
            return
        passthrough_lost(event, self.notes, "Llama Stack events")
