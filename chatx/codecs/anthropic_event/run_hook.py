"""The Anthropic run hook: a long stream is mostly ``content_block_delta`` records of
more text for the block open (its text, its thinking, a tool call's arguments), the same
but for that text (:class:`~chatx.codecs.template.DeltaTemplate`).

A record is its ``data:`` payload and its SSE ``event:`` name: the decoder says a name
that differs from the type, so a run takes only records named ``content_block_delta``
or not named at all. A ``signature_delta`` closes its item and is never templated; a
delta with residue of its own (an ``"index": 1.0``, a field beside the usual ones) makes
no template, and a record that differs from the template by one byte is parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatx import ir
from chatx.codecs.anthropic_event.decode import AnthropicDecoder
from chatx.codecs.template import TEXT, Delta, DeltaRun, DeltaTemplate, parsed, worth_making
from chatx.record import Record

EVENT = "content_block_delta"
# The delta types templated, and the field that holds their text.
_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)


class AnthropicRunHook:
    """The Anthropic :class:`~chatx.codecs.template.RunHook`, made with the decoder. The
    template stands for a delta of the block open when it was made: any record decoded
    drops it (a delta may close the block: a signature), and a plain delta makes the
    next. A run moves the decoder's ``line`` to its last record."""

    __slots__ = ("decoder", "made", "template", "used")

    parse = staticmethod(parsed)

    def __init__(self, decoder: AnthropicDecoder) -> None:
        self.decoder = decoder
        self.template: DeltaTemplate | None = None
        self.made = self.used = 0  # delta templates made and records they knew

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        if template is None:
            return None
        run = template.run(records, start, None, EVENT)
        if run is None:
            return None
        self.decoder.line = run.lines[-1]
        self.used += len(run.texts)
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """Decoded, and a template made of the record when it was one plain delta of the
        open block, said without a note."""
        self.template = None
        decoder = self.decoder
        notes = decoder.notes.items
        said = len(notes)
        out = decoder.feed(record)
        delta = out[0] if len(out) == 1 else None
        if (
            isinstance(delta, _DELTAS)
            and not delta.extra
            and len(notes) == said
            and raw
            and worth_making(self.made, self.used)
        ):
            self.made += 1
            self.template = _template(record.data, delta)
        return out


def _template(data: Any, delta: Delta) -> DeltaTemplate | None:
    """The template of ``data``, a ``content_block_delta`` the decoder read into
    ``delta`` with no residue: the canonical record, its keys in any order."""
    if type(data) is not dict or type(inner := data.get("delta")) is not dict:
        return None
    dtype = inner.get("type")
    field = _FIELDS.get(dtype) if type(dtype) is str else None
    if field is None or type(inner.get(field)) is not str:
        return None
    return DeltaTemplate.make({**data, "delta": {**inner, field: TEXT}}, delta)
