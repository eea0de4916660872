"""The Llama Stack run hook: a long stream is mostly ``progress`` events of more text,
the same but for that text (:class:`~chatx.codecs.template.DeltaTemplate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatx import ir
from chatx.codecs.llama_stack_event.decode import LlamaStackDecoder
from chatx.codecs.template import TEXT, DeltaRun, DeltaTemplate, parsed, worth_making
from chatx.record import Record

_PROTO = ir.TextDelta(0, "")


class LlamaStackRunHook:
    """The Llama Stack :class:`~chatx.codecs.template.RunHook`, made with the decoder.
    Any record decoded drops the template; more plain text, said where the next record
    of more text would be that too, makes the next. A run moves the decoder's ``line``
    to its last record."""

    __slots__ = ("decoder", "made", "template", "used")

    parse = staticmethod(parsed)

    def __init__(self, decoder: LlamaStackDecoder) -> None:
        self.decoder = decoder
        self.template: DeltaTemplate | None = None
        self.made = self.used = 0  # text templates made and records they knew

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        if template is None:
            return None
        run = template.run(records, start)
        if run is None:
            return None
        self.decoder.line = run.lines[-1]
        self.used += len(run.texts)
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """Decoded, and a template made of the record when it was more plain text."""
        self.template = None
        out = self.decoder.feed(record)
        if raw and self._plain_text(out) and worth_making(self.made, self.used):
            self.made += 1
            self.template = _template(record.data)
        return out

    def _plain_text(self, out: list[ir.Event]) -> bool:
        """Whether ``out`` is one plain delta of more text, in the state where the next
        record of more text would be that too (the message open, nothing held)."""
        if len(out) != 1 or type(out[0]) is not ir.TextDelta:
            return False
        delta, decoder = out[0], self.decoder
        return (
            not delta.extra
            and delta.logprobs is None
            and bool(delta.text)
            and decoder.open
            and decoder.message
            and decoder.hold is None
            and not decoder.may_hold
        )


def _template(data: Any) -> DeltaTemplate | None:
    event = dict(data["event"])
    event["delta"] = {**event["delta"], "text": TEXT}
    return DeltaTemplate.make({**data, "event": event}, _PROTO)
