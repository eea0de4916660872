"""The Responses decoder's fast path: the event a stream is mostly made of.

An ``output_text.delta`` in sequence that adds to the open part of a message, with no
field beside the usual ones. Decoding it without the general checks is most of the
decoder's speed on long streams; anything else returns ``None`` and goes the long way,
which says what is wrong. Given the records raw, the decoder knows most such events by
their bytes (a :class:`~chatx.codecs.template.DeltaTemplate` with the sequence number as
a hole) and parses none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from chatx import ir
from chatx.codecs.around import parsed_around
from chatx.codecs.responses_event.items import ItemState
from chatx.codecs.template import (
    NUMBER,
    OBFUSCATION,
    TEXT,
    DeltaRun,
    DeltaTemplate,
    parsed,
    worth_making,
)
from chatx.containers.payload import LONG_PAYLOAD
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.record import Record

_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)
# Payloads longer than LONG_PAYLOAD are parsed around the texts held that are this long.
_LONG_TEXT = 1 << 16
# The delta events of parts, and the family of part each adds to (see ResponsesDecoder).
_FAMILIES = {
    "response.output_text.delta": "output_text",
    "response.reasoning_summary_text.delta": "summary_text",
    "response.reasoning_text.delta": "reasoning_text",
    "response.reasoning.delta": "reasoning_text",
}

_FAST_TEXT_KEYS = frozenset(
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


class Stream(Protocol):
    """What the fast path reads of the decoder (:class:`ResponsesDecoder`), and the
    sequence number it moves on."""

    notes: Notes
    started: bool
    ended: bool
    expected_seq: int | None
    items: dict[Any, ItemState]

    def _general(self, record: Record) -> list[ir.Event]: ...


def _delta_template(data: dict[str, Any], event: Any) -> DeltaTemplate | None:
    """The template of a delta event the decoder read into ``event`` with nothing beside
    it (no residue, no logprobs, no note)."""
    if (
        type(data.get("sequence_number")) is not int
        or type(data.get("delta")) is not str
        or event.extra
        or getattr(event, "logprobs", None) is not None
    ):
        return None
    payload = dict(data)
    payload["sequence_number"] = NUMBER
    payload["delta"] = TEXT
    if event.obfuscation is not None:
        payload["obfuscation"] = OBFUSCATION
    return DeltaTemplate.make(payload, event, numbered=True)


class FastDeltas:
    """The fast path :class:`~chatx.codecs.responses_event.decode.ResponsesDecoder`
    holds: an in-sequence text delta decoded at once (:meth:`text`), and the Responses
    hook of :class:`~chatx.codecs.template.KnownRecords`."""

    __slots__ = ("made", "sink", "stream", "template", "used")

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.reset()

    def reset(self) -> None:
        """A new stream: no template, and none made yet."""
        self.template: DeltaTemplate | None = None
        self.sink: Pieces | None = None  # the text the decoder keeps that they add to
        self.made = self.used = 0  # delta templates made and records they knew

    # -- the hook of KnownRecords ----------------------------------------------------

    def known_run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template, stream = self.template, self.stream
        if template is None:
            return None
        seq = stream.expected_seq
        run = template.run(records, start, seq)
        if run is None:
            return None
        texts = run.texts
        stream.expected_seq = seq + len(texts)  # type: ignore[operator]
        self.sink.extend(texts)  # type: ignore[union-attr]
        self.used += len(texts)
        return run

    def decode_parsed(self, record: Record) -> list[ir.Event]:
        """A raw record the template did not know, parsed: decoded, and a template made
        of it when it was a delta read plainly."""
        data, stream = record.data, self.stream
        if type(data) is dict and data.get("type") == "response.output_text.delta":
            out = self.text(data)
            if out is not None:
                self._make_template(data, out)
                return out
        notes = stream.notes.items
        said = len(notes)
        out = stream._general(record)
        if len(out) == 1 and type(out[0]) in _DELTAS and len(notes) == said:
            self._make_template(data, out)
        return out

    def parse(self, record: Record) -> Record:
        """A long payload (the done events and the terminal one, which repeat each part's
        text) is parsed around the texts the decoder holds already."""
        raw = record.raw
        if raw is not None and len(raw) > LONG_PAYLOAD:
            texts = [
                pieces.text()
                for state in self.stream.items.values()
                for pieces in (state.args, *(part.texts for part in state.parts.values()))
                if pieces.size() > _LONG_TEXT
            ]
            if texts:
                known = parsed_around(record, texts)
                if known is not None:
                    return known
        return parsed(record)

    def _make_template(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        if not worth_making(self.made, self.used):
            return
        self.made += 1
        sink = self._sink(data, out[0])
        self.sink = sink
        self.template = _delta_template(data, out[0]) if sink else None

    def _sink(self, data: dict[str, Any], event: ir.Event) -> Pieces | None:
        """The text the decoder keeps that a delta like ``data`` adds to, if any."""
        state = self.stream.items.get(data.get("output_index"))
        if state is None:
            return None
        if type(event) is ir.ToolArgsDelta:
            return state.args
        family = _FAMILIES.get(data.get("type", ""))
        if family is None:
            return None
        index = data.get("summary_index" if family == "summary_text" else "content_index", 0)
        part = state.parts.get((family, index))
        return part.texts if part is not None else None

    # -- decoding --------------------------------------------------------------------

    def text(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The event almost every stream is made of, decoded without the general checks:
        more text for the open part of a message, in sequence, with nothing else beside
        it. ``None`` sends it the long way, which says what is wrong."""
        stream = self.stream
        seq = data.get("sequence_number")
        if (
            not stream.started
            or stream.ended
            or seq != stream.expected_seq
            or type(seq) is not int
            or not data.keys() <= _FAST_TEXT_KEYS
        ):
            return None
        output_index = data.get("output_index")
        state = stream.items.get(output_index) if type(output_index) is int else None
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
        stream.expected_seq = seq + 1
        part.texts.append(delta)
        if lps:
            part.logprobs.extend(lps)
        return [ir.TextDelta(0, delta, lps or None, {}, obfuscation)]
