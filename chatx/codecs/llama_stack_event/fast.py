"""The Llama Stack decoder's records known by their bytes: a long stream is mostly
``progress`` events of more text, the same but for that text
(:class:`~chatx.codecs.template.DeltaTemplate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from chatx import ir
from chatx.codecs.template import TEXT, DeltaRun, DeltaTemplate, worth_making
from chatx.record import Record

_PROTO = ir.TextDelta(0, "")


class Stream(Protocol):
    """What the hook reads of the decoder (:class:`LlamaStackDecoder`), and the line of
    the last record it read, which it moves on."""

    line: int
    open: bool
    message: bool
    hold: str | None
    may_hold: bool

    def _general(self, record: Record) -> list[ir.Event]: ...


class FastText:
    """The Llama Stack hook of :class:`~chatx.codecs.template.KnownRecords`, held by
    :class:`~chatx.codecs.llama_stack_event.decode.LlamaStackDecoder`."""

    __slots__ = ("made", "stream", "template", "used")

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.template: DeltaTemplate | None = None
        self.made = self.used = 0  # text templates made and records they knew

    def known_run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        if template is None:
            return None
        run = template.run(records, start)
        if run is None:
            return None
        self.stream.line = run.lines[-1]
        self.used += len(run.texts)
        return run

    def decode_parsed(self, record: Record) -> list[ir.Event]:
        """A raw record the template did not know, parsed: decoded, and a template made
        of it when it was more plain text."""
        out = self.stream._general(record)
        if self._plain_text(out) and worth_making(self.made, self.used):
            self.made += 1
            self.template = _template(record.data)
        return out

    def _plain_text(self, out: list[ir.Event]) -> bool:
        """Whether ``out`` is one plain delta of more text, in the state where the next
        record of more text would be that too (the message open, nothing held)."""
        if len(out) != 1 or type(out[0]) is not ir.TextDelta:
            return False
        delta, stream = out[0], self.stream
        return (
            not delta.extra
            and delta.logprobs is None
            and bool(delta.text)
            and stream.open
            and stream.message
            and stream.hold is None
            and not stream.may_hold
        )


def _template(data: Any) -> DeltaTemplate | None:
    event = dict(data["event"])
    event["delta"] = {**event["delta"], "text": TEXT}
    return DeltaTemplate.make({**data, "event": event}, _PROTO)
