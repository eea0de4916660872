"""The Responses decoder's fast path: the event a stream is mostly made of.

An ``output_text.delta`` in sequence that adds to the open part of a message, with no
field beside the usual ones. Decoding it without the general checks is most of the
decoder's speed on long streams; anything else returns ``None`` and goes the long way,
which says what is wrong. Given the records raw, the decoder knows most such events by
their bytes (:class:`DeltaTemplate`) and parses none of them.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from chatx import ir
from chatx.codecs.template import NUMBER, ByteTemplate, hole, worth_making
from chatx.containers.payload import parse
from chatx.errors import InputError
from chatx.record import Record

_TEXT = hole("text")
_OBFUSCATION = hole("obfuscation")
_PROTO = ir.TextDelta(0, "")

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
    """The bytes of an ``output_text.delta`` around its sequence number, text and
    obfuscation, for the part it adds to."""

    __slots__ = ("bytes", "obfuscation_at", "part", "text_at")

    def __init__(self, template: ByteTemplate, part: list[Any]) -> None:
        self.bytes = template
        self.text_at = template.at[1]  # see make(): [NUMBER, text, obfuscation]
        self.obfuscation_at = template.at[2] if len(template.at) == 3 else None
        self.part = part  # [the part's text pieces, its logprobs]

    @classmethod
    def make(cls, data: dict[str, Any], part: list[Any]) -> DeltaTemplate | None:
        """The template of a delta the fast path read, when it had no logprobs."""
        if data.get("logprobs") != []:
            return None
        payload = dict(data)
        payload["sequence_number"] = NUMBER
        payload["delta"] = _TEXT
        stand_ins = [NUMBER, _TEXT]
        if type(data.get("obfuscation")) is str:
            payload["obfuscation"] = _OBFUSCATION
            stand_ins.append(_OBFUSCATION)
        template = ByteTemplate.make(payload, stand_ins)
        return cls(template, part) if template is not None else None


class FastText:
    """Mixed into :class:`~chatx.codecs.responses_event.decode.ResponsesDecoder`."""

    started: bool
    ended: bool
    expected_seq: int | None
    items: dict[Any, Any]
    delta_template: DeltaTemplate | None
    made: int
    used: int

    def _general(self, record: Record) -> list[ir.Event]:  # pragma: no cover
        raise NotImplementedError

    def run(self, records: list[Record], start: int) -> ir.DeltaRun | None:
        """The raw records from ``start`` on that the delta template knows, as one
        :class:`~chatx.ir.DeltaRun`; ``None`` when the first is not one."""
        template = self.delta_template
        if template is None:
            return None
        texts: list[str] = []
        obfuscations: list[str | None] = []
        lines: list[int] = []
        match = template.bytes.match
        text_at, at = template.text_at, template.obfuscation_at
        seq = self.expected_seq
        for record in islice(records, start, None):
            raw = record.raw
            found = match(raw, seq) if raw is not None else None
            if found is None:
                break
            seq += 1  # type: ignore[operator]
            texts.append(found[text_at])
            obfuscations.append(found[at] if at is not None else None)
            lines.append(record.line)
        if not texts:
            return None
        self.expected_seq = seq
        template.part[0].extend(texts)
        self.used += len(texts)
        return ir.DeltaRun(_PROTO, texts, obfuscations, lines)

    def _feed_raw(self, raw: bytes, record: Record) -> list[ir.Event]:
        """A record left unparsed: a delta the template knows, or parsed and decoded."""
        run = self.run([record], 0)
        if run is not None:
            return run.batch(0)
        record = parse(raw, record.event, record.line)
        if record.error is not None:
            raise InputError(record.error)
        data = record.data
        if type(data) is dict and data.get("type") == "response.output_text.delta":
            fast = self._text_fast(data)
            if fast is not None:
                if worth_making(self.made, self.used):
                    self.made += 1
                    part = self.items[data["output_index"]].parts[
                        ("output_text", data["content_index"])
                    ]
                    self.delta_template = DeltaTemplate.make(data, part)
                return fast
        return self._general(record)

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
