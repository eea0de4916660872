"""Decode Llama Stack legacy inference streams into IR events.

One record gives one batch. ``start`` opens the stream and lane 0; text deltas become
``TextDelta``; a ``succeeded`` tool call becomes one complete IR call (``ItemStart`` with
its ``call_id`` and name, one ``ToolArgsDelta`` with the arguments JSON, ``ItemEnd``);
``complete`` carries the metrics (``Usage``) and ends the stream. The first record with a
``stop_reason`` gives the ``Finish`` (Llama Stack repeats it on ``complete``); on a tool
call's ``succeeded``/``failed`` it waits until the calls end (parallel calls each carry
one), and the Llama encoder is told the record's stop reason (``~stop``).

**Hold-back.** Llama Stack sends a tool call in one of two shapes: (1) ``started`` →
``in_progress`` fragments → ``succeeded``/``failed``, or (2) the call written as ordinary
text deltas, then a lone ``succeeded`` (its parser read the whole message as a call). The
fragments of (1) are the model's raw text — python for ``code_interpreter``,
``brave_search.call(query="…")``, or a JSON envelope ``{"name", "parameters"}`` — never
the JSON arguments, and the call's id and name only come with ``succeeded``; so they are
held, and the call is emitted whole when ``succeeded`` arrives. For (2), text that could
still be a call (it starts, after white space, with ``{"``, ``[name(``, ``<function=``,
``<|python_tag|>`` or ``brave_search.call(``…) is held from the start of the turn until
the stream decides: a ``succeeded`` consumes it; anything else releases it as text, one
``TextDelta`` per held record. A ``failed`` call releases its raw text as message text,
which is what Llama Stack's own parser makes of text it cannot read as a call.

**Residue.** What else a record says travels under ``extra["llama_stack"]``, which the
Llama Stack encoder merges back only when it encodes this decoder's events
(``EncodeOptions.source_format``). Each record is compared with the canonical record the
encoder writes for its content (:mod:`.records`): ``patch`` is the difference (keys the
source left out are ``ABSENT``), reported by other encoders when it says anything. The
record a held-back record becomes, when it is no IR content, is a ``Meta(0)`` whose one
``~``-key names its kind (``~text``, ``~started``, ``~in_progress``, ``~failed``) and holds
its raw text; a released ``in_progress`` fragment is a ``TextDelta`` tagged
``~in_progress``. Keys starting with ``~`` are bookkeeping that other encoders skip
(:func:`chatx.residue.report`): the raw text of a call says nothing the call does not.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.whole import expand
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record

from . import records as r
from . import whole
from .special_tokens import call_prefix
from .tool_calls import ToolCallDecoding

LS = r.LS


class LlamaStackDecoder(ToolCallDecoding):
    """Incremental decoder: ``feed(record)`` returns the IR events of one record."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.open = False  # a stream has started and not completed
        self.id = ""
        self.line = 0
        self._turn()

    def _turn(self) -> None:
        self.message = False  # an IR message item is open
        self.may_hold = True  # nothing said yet in this turn: text may still be a call
        self.text_out = False  # text went out as text in this turn
        self.hold: str | None = None  # "text" or "tool": what ``held`` holds
        self.held: list[dict[str, Any]] = []
        self.held_text: list[str] = []
        self.committed = False  # the held text has passed a call opener
        self.stop: str | None = None  # the stop reason of the Finish emitted (or pending)
        self.pending: ir.Finish | None = None  # a tool record's Finish, said once calls end
        self.calls = 0
        self.failed = False  # an error frame came: Llama Stack ends a stream so

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one record (an event or an ``{"error": …}`` frame)."""
        self.line = record.line
        data = self._payload(record)
        if data is None:
            return []
        out: list[ir.Event] = []
        event = data.get("event")
        if not isinstance(event, dict):
            if not self.open and whole.is_completion(data):
                return expand(self.feed, whole.events(data, self.notes), record.line)
            if isinstance(data.get("error"), dict):
                self._error(data, out)
                return out
            raise InputError(
                'a Llama Stack event needs an "event" object',
                line=record.line,
                expected='{"event": {"event_type": …, "delta": …}}',
            )
        kind = event.get("event_type")
        if self.pending is not None and kind != "complete" and not _tool_record(event):
            self._release(out)
            self._settle(out)
        if kind == "start":
            self._start(data, out)
            return out
        if not self.open:
            self.notes.warning("the stream has no start event")
            self._start(data, out, implicit=True)
        if kind == "progress":
            self._progress(data, event, out)
        elif kind == "complete":
            self._complete(data, event, out)
        else:
            self._passthrough(data, f"event_type {kind!r}", out)
        return out

    def finish(self) -> list[ir.Event]:
        """End of input: release what is held and close the message. A stream without its
        ``complete`` event is left unended (no ``StreamEnd``): nothing is invented."""
        out: list[ir.Event] = []
        if self.open:
            self._release(out)
            self._close_message(out)
            self._settle(out)
            if not self.failed:
                self.notes.warning("the stream ends without a complete event")
            self.open = False
        return out

    def _payload(self, record: Record) -> dict[str, Any] | None:
        if record.done:
            self.notes.warning("[DONE] is not part of a Llama Stack stream: ignored")
            return None
        if record.error:
            raise InputError(record.error, line=record.line, expected="a JSON object")
        if not isinstance(record.data, dict):
            raise InputError(
                "a Llama Stack event must be a JSON object",
                line=record.line,
                expected='{"event": {"event_type": …, "delta": …}}',
            )
        return record.data

    # --- records ------------------------------------------------------------------------

    def _start(self, data: dict[str, Any], out: list[ir.Event], implicit: bool = False) -> None:
        if self.open:
            self.notes.warning("a start event inside a stream: a new stream begins")
            self._release(out)
            self._close_message(out)
        self._turn()
        self.open = True
        self.id = r.stream_id(data)
        ls = {"implicit": None} if implicit else r.residue(data, r.event("start", r.text_delta("")))
        out.append(ir.StreamStart(self.id, extra={LS: ls} if ls else {}))
        out.append(ir.LaneStart(0))

    def _progress(self, data: dict[str, Any], event: dict[str, Any], out: list[ir.Event]) -> None:
        value = event.get("delta")
        delta: dict[str, Any] = value if isinstance(value, dict) else {}
        kind = delta.get("type")
        if kind == "text" and isinstance(delta.get("text"), str):
            self._text(data, event, delta["text"], out)
        elif kind == "tool_call":
            self._tool_call(data, event, delta, out)
        else:  # an image delta, or a shape this decoder does not know
            self._passthrough(data, f"{kind or 'untyped'} delta", out)

    def _complete(self, data: dict[str, Any], event: dict[str, Any], out: list[ir.Event]) -> None:
        self._release(out)
        self._close_message(out)
        self._settle(out)
        self._stop(event, out)
        usage, metrics = self._usage(data.get("metrics"))
        if usage is not None:
            out.append(usage)
        counts = (
            {"input": usage.input, "output": usage.output, "total": usage.total} if usage else {}
        )
        canonical = r.event(
            "complete",
            r.text_delta(""),
            None,
            self.stop,
            r.render_metrics(counts, metrics) if usage else None,
        )
        ls = r.residue(data, canonical)
        out.append(ir.StreamEnd({LS: ls} if ls else {}))
        self.open = False

    def _error(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        """``{"error": {…}}``: what Llama Stack's server sends when generation fails."""
        self._release(out)
        self._settle(out)
        self.failed = True
        out.append(r.read_error(data["error"]))
        rest = {k: v for k, v in data.items() if k != "error"}
        if rest:
            out.append(ir.Meta(None, {LS: {"patch": rest}}))

    def _passthrough(self, data: dict[str, Any], what: str, out: list[ir.Event]) -> None:
        self._release(out)
        self.notes.warning(f"{what}: kept as it is, no IR meaning")
        out.append(ir.Passthrough(r.NAME, data, None, self.line))

    # --- text and the shape-2 hold ------------------------------------------------------

    def _text(
        self, data: dict[str, Any], event: dict[str, Any], text: str, out: list[ir.Event]
    ) -> None:
        if self.hold == "tool":
            self._release(out)
        holdable = text != "" and event.get("stop_reason") is None
        if holdable and (self.hold == "text" or (self.may_hold and self.hold is None)):
            self.hold = "text"
            self.held.append(data)
            self.held_text.append(text)
            if not self._could_be_call():
                self._release(out)
            return
        self._release(out)
        self._emit_text(data, event, text, out)

    def _could_be_call(self) -> bool:
        """Whether the held text may still turn out to be a tool call."""
        if not self.committed:
            verdict = call_prefix("".join(self.held_text))
            self.committed = verdict == "call"  # past the opener: hold until decided
            return verdict != "text"
        return True

    def _emit_text(
        self, data: dict[str, Any], event: dict[str, Any], text: str, out: list[ir.Event]
    ) -> None:
        if not text:  # no content, one record all the same: a Meta says so
            meta = ir.Meta(0, {})
            out.append(meta)
            stop = self._stop(event, out)
            canonical = r.event("progress", r.text_delta(""), None, stop)
            meta.extra = {LS: {"~text": "", **r.residue(data, canonical)}}
            return
        if not self.message:
            self._open_message(out)
        raw = event.get("logprobs")
        logprobs = r.logprobs_to_ir(raw) if raw is not None else None
        delta = ir.TextDelta(0, text, logprobs)
        out.append(delta)
        stop = self._stop(event, out) if event.get("stop_reason") is not None else None
        back = r.logprobs_from_ir(logprobs) if logprobs is not None else None
        ls = r.residue(data, r.event("progress", r.text_delta(text), back, stop))
        if ls:
            delta.extra = {LS: ls}
        self.may_hold = False
        self.text_out = True

    def _release(self, out: list[ir.Event]) -> None:
        """The stream did not make a call of what is held: give it back as text."""
        held, hold = self.held, self.hold
        self.held, self.hold, self.held_text, self.committed = [], None, [], False
        for data in held:
            event = data["event"]
            if hold == "text":
                self._emit_text(data, event, event["delta"]["text"], out)
            else:
                self._release_tool(data, out)

    def _stop(self, event: dict[str, Any], out: list[ir.Event], terminal: bool = False) -> Any:
        """Emit ``Finish`` for the first stop reason; return the one the encoder will write
        on this record (terminal tool records repeat a stop reason already known).

        A tool record's stop reason does not end the turn yet: Llama Stack's OpenAI-compat
        layer puts ``end_of_message`` on each ``succeeded`` of parallel calls, and the next
        call's records follow. Its ``Finish`` is pending until a record that is no tool
        call's, the ``complete`` event or the end of input (:meth:`_settle`)."""
        stop = event.get("stop_reason")
        if self.stop is None and isinstance(stop, str) and stop:
            reason = r.STOP_TO_FINISH.get(stop)
            if reason is None:
                self.notes.warning(f"unknown stop_reason {stop!r}: read as end_of_turn")
                reason = "stop"
            # A turn that ends in a call is a tool_calls finish for chat and Responses
            # clients, whichever of end_of_turn / end_of_message the model used.
            if reason == "stop" and self.calls:
                reason = "tool_calls"
            self.stop = r.stop_word(reason, stop)
            finish = ir.Finish(0, reason, stop)
            if terminal:
                # The Llama encoder writes this record before it sees the Finish: "~stop"
                # gives it the stop reason, "~deferred" keeps the Finish off later records.
                finish.extra = {LS: {"~deferred": None}}
                self.pending = finish
            else:
                out.append(finish)
            return self.stop
        return self.stop if terminal else None

    def _settle(self, out: list[ir.Event]) -> None:
        """Emit the pending ``Finish`` of a tool record: no more calls come in this turn."""
        finish = self.pending
        if finish is not None:
            if finish.reason == "stop" and self.calls:  # a call came after the stop reason
                finish.reason = "tool_calls"
            out.append(finish)
            self.pending = None

    def _usage(self, metrics: Any) -> tuple[ir.Usage | None, list[Any] | None]:
        """``metrics`` -> Usage, and the residue the complete record needs."""
        read = r.read_metrics(metrics)
        if read is None:
            return None, None
        counts, residue = read
        extra = {LS: {"metrics": residue}} if residue is not None else {}
        total = counts.get("total")
        return ir.Usage(counts.get("input"), counts.get("output"), total, extra=extra), residue

    def _open_message(self, out: list[ir.Event]) -> None:
        if not self.message:
            self.message = True
            out.append(ir.ItemStart(0, "message"))

    def _close_message(self, out: list[ir.Event]) -> None:
        if self.message:
            self.message = False
            out.append(ir.ItemEnd(0, "message"))


def _tool_record(event: dict[str, Any]) -> bool:
    """Whether ``event`` is a ``progress`` tool-call record (the calls go on)."""
    delta = event.get("delta")
    return (
        event.get("event_type") == "progress"
        and isinstance(delta, dict)
        and delta.get("type") == "tool_call"
    )
