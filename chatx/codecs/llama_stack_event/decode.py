"""Decode Llama Stack legacy inference streams into IR events.

One record gives one batch. ``start`` opens the stream and lane 0; text deltas become
``TextDelta``; a ``succeeded`` tool call becomes one complete IR call (``ItemStart`` with
its ``call_id`` and name, one ``ToolArgsDelta`` with the arguments JSON, ``ItemEnd``);
``complete`` carries the metrics (``Usage``) and ends the stream. The first record with a
``stop_reason`` gives the ``Finish`` (Llama Stack repeats it on ``complete``); on a tool
call's ``succeeded``/``failed`` it waits until the calls end (parallel calls each carry
one), and the Llama encoder is told the record's stop reason (its own note's ``stop``).

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
record a held-back record becomes, when it is no IR content, is a ``Meta(0)`` whose own
note (:class:`~chatx.codecs.llama_stack_event.records.LlamaStackOwn`) names its kind
(``held``: ``text``, ``started``, ``in_progress``, ``failed``) and holds its raw text
(``value``); a released ``in_progress`` fragment is a ``TextDelta`` whose note is
``IN_PROGRESS``. Other encoders never read the note: the raw text of a call says nothing
the call does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.base import object_payload
from chatx.codecs.whole import expand
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record

from . import records as r
from . import whole
from .held import Held
from .read_stream import LS, ReadStream, Stops
from .tool_calls import ToolCalls

# What reads a record of the stream: (the record, its event, the events it gives).
_Handler = Callable[[dict[str, Any], dict[str, Any], list[ir.Event]], None]


# What is said of a record that is no Llama Stack event: of [DONE], of a value that is no
# object, and the shape expected (object_payload).
_PAYLOAD = (
    "[DONE] is not part of a Llama Stack stream: ignored",
    "a Llama Stack event must be a JSON object",
    '{"event": {"event_type": …, "delta": …}}',
)


class LlamaStackDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one record.

    Its parts share the :class:`~chatx.codecs.llama_stack_event.read_stream.ReadStream`
    (``read``): ``stops`` reads stop reasons into the turn's ``Finish``, ``held`` reads
    text and holds what may be a call, ``calls`` reads tool-call records. ``handlers`` is
    the table from a record's ``event_type`` to what reads it; the stream's start, end
    and errors are the decoder's own."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.read = read = ReadStream()
        self.stops = stops = Stops(read, notes)
        self.held = held = Held(read, stops)
        self.calls = ToolCalls(read, notes, held, stops, self._passthrough)
        # What reads a record of the stream, by its event_type (``start`` is read before
        # the others, which begin a stream that has none).
        self.handlers: dict[str, _Handler] = {
            "progress": self._progress,
            "complete": self._complete,
        }

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one record (an event or an ``{"error": …}`` frame)."""
        read = self.read
        read.line = record.line
        data = self._payload(record)
        if data is None:
            return []
        out: list[ir.Event] = []
        event = data.get("event")
        if not isinstance(event, dict):
            return self._not_an_event(data, record, out)
        kind = event.get("event_type")
        if read.pending is not None and kind != "complete" and not _tool_record(event):
            self.held.release(out)
            self.stops.settle(out)
        if kind == "start":
            self._start(data, out)
            return out
        if not read.open:
            self.notes.warning("the stream has no start event")
            self._start(data, out, implicit=True)
        handler = self.handlers.get(kind) if type(kind) is str else None
        if handler is not None:
            handler(data, event, out)
        else:
            self._passthrough(data, f"event_type {kind!r}", out)
        return out

    def finish(self) -> list[ir.Event]:
        """End of input: release what is held and close the message. A stream without its
        ``complete`` event is left unended (no ``StreamEnd``): nothing is invented."""
        out: list[ir.Event] = []
        read = self.read
        if read.open:
            self.held.release(out)
            read.close_message(out)
            self.stops.settle(out)
            if not read.failed:
                self.notes.warning("the stream ends without a complete event")
            read.open = False
        return out

    def _payload(self, record: Record) -> dict[str, Any] | None:
        return object_payload(record, self.notes, *_PAYLOAD)

    def _not_an_event(
        self, data: dict[str, Any], record: Record, out: list[ir.Event]
    ) -> list[ir.Event]:
        """A record with no ``event``: a whole completion, or an error frame."""
        if not self.read.open and whole.is_completion(data):
            return expand(self.feed, whole.events(data, self.notes), record.line)
        if isinstance(data.get("error"), dict):
            self._error(data, out)
            return out
        raise InputError(
            'a Llama Stack event needs an "event" object',
            line=record.line,
            expected='{"event": {"event_type": …, "delta": …}}',
        )

    # --- records ------------------------------------------------------------------------

    def _start(self, data: dict[str, Any], out: list[ir.Event], implicit: bool = False) -> None:
        read = self.read
        if read.open:
            self.notes.warning("a start event inside a stream: a new stream begins")
            self.held.release(out)
            read.close_message(out)
        read.turn()
        read.open = True
        read.id = r.stream_id(data)
        ls = {"implicit": None} if implicit else r.residue(data, r.event("start", r.text_delta("")))
        out.append(ir.StreamStart(read.id, extra={LS: ls} if ls else {}))
        out.append(ir.LaneStart(0))

    def _progress(self, data: dict[str, Any], event: dict[str, Any], out: list[ir.Event]) -> None:
        value = event.get("delta")
        delta: dict[str, Any] = value if isinstance(value, dict) else {}
        kind = delta.get("type")
        if kind == "text" and isinstance(delta.get("text"), str):
            self.held.text(data, event, delta["text"], out)
        elif kind == "tool_call":
            self.calls.feed(data, event, delta, out)
        else:  # an image delta, or a shape this decoder does not know
            self._passthrough(data, f"{kind or 'untyped'} delta", out)

    def _complete(self, data: dict[str, Any], event: dict[str, Any], out: list[ir.Event]) -> None:
        read = self.read
        self.held.release(out)
        read.close_message(out)
        self.stops.settle(out)
        self.stops.stop(event, out)
        usage, metrics = _usage(data.get("metrics"))
        if usage is not None:
            out.append(usage)
        counts = (
            {"input": usage.input, "output": usage.output, "total": usage.total} if usage else {}
        )
        canonical = r.event(
            "complete",
            r.text_delta(""),
            None,
            read.stop,
            r.render_metrics(counts, metrics) if usage else None,
        )
        ls = r.residue(data, canonical)
        out.append(ir.StreamEnd({LS: ls} if ls else {}))
        read.open = False

    def _error(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        """``{"error": {…}}``: what Llama Stack's server sends when generation fails."""
        self.held.release(out)
        self.stops.settle(out)
        self.read.failed = True
        out.append(r.read_error(data["error"]))
        rest = {k: v for k, v in data.items() if k != "error"}
        if rest:
            out.append(ir.Meta(None, {LS: {"patch": rest}}))

    def _passthrough(self, data: dict[str, Any], what: str, out: list[ir.Event]) -> None:
        self.held.release(out)
        self.notes.warning(f"{what}: kept as it is, no IR meaning")
        out.append(ir.Passthrough(r.NAME, data, None, self.read.line))


def _usage(metrics: Any) -> tuple[ir.Usage | None, list[Any] | None]:
    """``metrics`` -> Usage, and the residue the complete record needs."""
    read = r.read_metrics(metrics)
    if read is None:
        return None, None
    counts, residue = read
    extra = {LS: {"metrics": residue}} if residue is not None else {}
    total = counts.get("total")
    return ir.Usage(counts.get("input"), counts.get("output"), total, extra=extra), residue


def _tool_record(event: dict[str, Any]) -> bool:
    """Whether ``event`` is a ``progress`` tool-call record (the calls go on)."""
    delta = event.get("delta")
    return (
        event.get("event_type") == "progress"
        and isinstance(delta, dict)
        and delta.get("type") == "tool_call"
    )
