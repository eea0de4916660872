"""The Llama Stack decoder's records known by their bytes: a long stream is mostly
``progress`` events of more text, the same but for that text (:mod:`chatx.codecs.template`).
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.template import ByteTemplate, KnownRecords, hole, worth_making
from chatx.record import Record

_TEXT = hole("text")
_PROTO = ir.TextDelta(0, "")


class KnownText(KnownRecords):
    """Mixed into :class:`~chatx.codecs.llama_stack_event.decode.LlamaStackDecoder`."""

    line: int
    open: bool
    message: bool
    hold: str | None
    may_hold: bool
    text_template: ByteTemplate | None

    def _known_run(self, records: list[Record], start: int) -> ir.DeltaRun | None:
        """The raw records from ``start`` on that the text template knows, as one
        :class:`~chatx.ir.DeltaRun`; ``None`` when the first is not one."""
        template = self.text_template
        if template is None:
            return None
        texts, obfuscations, lines = template.read(records, start, 0)
        if not texts:
            return None
        self.line = lines[-1]
        self.used += len(texts)
        return ir.DeltaRun(_PROTO, texts, obfuscations, lines)

    def _decode_parsed(self, record: Record) -> list[ir.Event]:
        """A raw record the template did not know, parsed: decoded, and a template made
        of it when it was more plain text."""
        out = self._general(record)
        if self._plain_text(out) and worth_making(self.made, self.used):
            self.made += 1
            self.text_template = _template(record.data)
        return out

    def _plain_text(self, out: list[ir.Event]) -> bool:
        """Whether ``out`` is one plain delta of more text, in the state where the next
        record of more text would be that too (the message open, nothing held)."""
        if len(out) != 1 or type(out[0]) is not ir.TextDelta:
            return False
        delta = out[0]
        return (
            not delta.extra
            and delta.logprobs is None
            and bool(delta.text)
            and self.open
            and self.message
            and self.hold is None
            and not self.may_hold
        )


def _template(data: Any) -> ByteTemplate | None:
    event = dict(data["event"])
    event["delta"] = {**event["delta"], "text": _TEXT}
    return ByteTemplate.make({**data, "event": event}, [_TEXT])
