"""The Responses run hook: a long stream is mostly delta events in sequence (of a
message's text, a reasoning text, a call's arguments), the same but for their text and
sequence number (a :class:`~chatx.codecs.template.DeltaTemplate` with the sequence
number as a hole), and none of a run of them is parsed. A long payload (a done event,
the terminal one) is parsed around the texts the decoder holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatx import ir
from chatx.codecs.around import parsed_around
from chatx.codecs.byte_template import NUMBER, OBFUSCATION, TEXT
from chatx.codecs.responses_event.decode import ResponsesDecoder
from chatx.codecs.template import DeltaRun, DeltaTemplate, parsed, worth_making
from chatx.containers.payload import LONG_PAYLOAD
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


class ResponsesRunHook:
    """The Responses :class:`~chatx.codecs.template.RunHook`, made with the decoder. An
    event the decoder's general path reads drops the template; a delta read plainly, or
    read by the general path with nothing beside it and no note, makes the next. A run
    moves the decoder's sequence number on and adds its texts to the part they add to
    (the ``sink``), as the decoder would."""

    __slots__ = ("decoder", "made", "read", "sink", "template", "used")

    def __init__(self, decoder: ResponsesDecoder) -> None:
        self.decoder = decoder
        self.read = decoder.read  # the response being read, which a run moves on
        self.template: DeltaTemplate | None = None
        self.sink: Pieces | None = None  # the text the decoder keeps that they add to
        self.made = self.used = 0  # delta templates made and records they knew

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template, read = self.template, self.read
        if template is None:
            return None
        seq = read.expected_seq
        run = template.run(records, start, seq)
        if run is None:
            return None
        texts = run.texts
        read.expected_seq = seq + len(texts)  # type: ignore[operator]
        self.sink.extend(texts)  # type: ignore[union-attr]
        self.used += len(texts)
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """Decoded, and a template made of the record when it was a delta read plainly,
        or one delta said without a note."""
        data, decoder = record.data, self.decoder
        if type(data) is dict and data.get("type") == "response.output_text.delta":
            out = decoder.plain_text(data)
            if out is not None:
                if raw:
                    self._make_template(data, out)
                return out
        self.template = None  # the general path may change what a template stands for
        notes = decoder.notes.items
        said = len(notes)
        out = decoder.general(record)
        if raw and len(out) == 1 and type(out[0]) in _DELTAS and len(notes) == said:
            self._make_template(data, out)
        return out

    def parse(self, record: Record) -> Record:
        """A long payload (the done events and the terminal one, which repeat each part's
        text) is parsed around the texts the decoder holds already."""
        raw = record.raw
        if raw is not None and len(raw) > LONG_PAYLOAD:
            texts = [
                pieces.text()
                for state in self.read.items.values()
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
        state = self.read.items.get(data.get("output_index"))
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
