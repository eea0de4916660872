"""The Responses decoder's fast path: the event a stream is mostly made of.

An ``output_text.delta`` in sequence that adds to the open part of a message, with no
field beside the usual ones. Decoding it without the general checks is most of the
decoder's speed on long streams; anything else returns ``None`` and goes the long way,
which says what is wrong. Given the records raw, the decoder knows most such events by
their bytes (:class:`DeltaTemplate`) and parses none of them.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.template import (
    NUMBER,
    ByteTemplate,
    KnownRecords,
    hole,
    parsed,
    parsed_around,
    worth_making,
)
from chatx.containers.payload import LONG_PAYLOAD
from chatx.record import Record

_TEXT = hole("text")
_OBFUSCATION = hole("obfuscation")
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


class DeltaTemplate:
    """The bytes of a delta event around its sequence number, text and obfuscation, the
    delta it decodes to, and the text the decoder keeps for its part (or call)."""

    __slots__ = ("bytes", "obfuscation_at", "proto", "sink", "text_at")

    def __init__(self, template: ByteTemplate, proto: Any, sink: Any) -> None:
        self.bytes = template
        self.text_at = template.at[1]  # see make(): [NUMBER, text, obfuscation]
        self.obfuscation_at = template.at[2] if len(template.at) == 3 else None
        self.proto = ir.DeltaRun.prototype(proto)
        self.sink = sink  # the Pieces each delta's text is added to

    @classmethod
    def make(cls, data: dict[str, Any], event: Any, sink: Any) -> DeltaTemplate | None:
        """The template of a delta event the decoder read into ``event`` with nothing
        beside it (no residue, no logprobs, no note)."""
        if (
            type(data.get("sequence_number")) is not int
            or type(data.get("delta")) is not str
            or event.extra
            or getattr(event, "logprobs", None) is not None
        ):
            return None
        payload = dict(data)
        payload["sequence_number"] = NUMBER
        payload["delta"] = _TEXT
        stand_ins = [NUMBER, _TEXT]
        if event.obfuscation is not None:
            payload["obfuscation"] = _OBFUSCATION
            stand_ins.append(_OBFUSCATION)
        template = ByteTemplate.make(payload, stand_ins)
        return cls(template, event, sink) if template is not None else None


class FastText(KnownRecords):
    """Mixed into :class:`~chatx.codecs.responses_event.decode.ResponsesDecoder`."""

    started: bool
    ended: bool
    expected_seq: int | None
    items: dict[Any, Any]
    notes: Any
    delta_template: DeltaTemplate | None

    def _known_run(self, records: list[Record], start: int) -> ir.DeltaRun | None:
        """The raw records from ``start`` on that the delta template knows, as one
        :class:`~chatx.ir.DeltaRun`; ``None`` when the first is not one."""
        template = self.delta_template
        if template is None:
            return None
        seq = self.expected_seq
        texts, obfuscations, lines = template.bytes.read(
            records, start, template.text_at, template.obfuscation_at, seq
        )
        if not texts:
            return None
        self.expected_seq = seq + len(texts)  # type: ignore[operator]
        template.sink.extend(texts)
        self.used += len(texts)
        return ir.DeltaRun(template.proto, texts, obfuscations, lines)

    def _decode_parsed(self, record: Record) -> list[ir.Event]:
        """A raw record the template did not know, parsed: decoded, and a template made
        of it when it was a delta read plainly."""
        data = record.data
        if type(data) is dict and data.get("type") == "response.output_text.delta":
            out = self._text_fast(data)
            if out is not None:
                self._make_template(data, out)
                return out
        said = len(self.notes.items)
        out = self._general(record)
        if len(out) == 1 and type(out[0]) in _DELTAS and len(self.notes.items) == said:
            self._make_template(data, out)
        return out

    def _parse_raw(self, record: Record) -> Record:
        """A long payload (the done events and the terminal one, which repeat each part's
        text) is parsed around the texts the decoder holds already."""
        raw = record.raw
        if raw is not None and len(raw) > LONG_PAYLOAD:
            texts = [
                pieces.text()
                for state in self.items.values()
                for pieces in (state.args, *(part[0] for part in state.parts.values()))
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
        self.delta_template = DeltaTemplate.make(data, out[0], sink) if sink else None

    def _sink(self, data: dict[str, Any], event: ir.Event) -> Any:
        """The text the decoder keeps that a delta like ``data`` adds to, if any."""
        state = self.items.get(data.get("output_index"))
        if state is None:
            return None
        if type(event) is ir.ToolArgsDelta:
            return state.args
        family = _FAMILIES.get(data.get("type", ""))
        index = data.get("summary_index" if family == "summary_text" else "content_index", 0)
        part = state.parts.get((family, index))
        return part[0] if part is not None else None

    def _text_fast(self, data: dict[str, Any]) -> list[ir.Event] | None:
        """The event almost every stream is made of, decoded without the general checks:
        more text for the open part of a message, in sequence, with nothing else beside
        it. ``None`` sends it the long way, which says what is wrong."""
        seq = data.get("sequence_number")
        if (
            not self.started
            or self.ended
            or seq != self.expected_seq
            or type(seq) is not int
            or not data.keys() <= _FAST_TEXT_KEYS
        ):
            return None
        output_index = data.get("output_index")
        state = self.items.get(output_index) if type(output_index) is int else None
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
        self.expected_seq = seq + 1
        part[0].append(delta)
        if lps:
            part[1].extend(lps)
        return [ir.TextDelta(0, delta, lps or None, {}, obfuscation)]
