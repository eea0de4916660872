"""Chat chunks known by their bytes (:mod:`chatx.codecs.template`): a long stream
repeats one chunk but for its text (message, reasoning or a call's arguments) and its
``obfuscation``."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.template import ByteTemplate, hole
from chatx.record import Record
from chatx.residue import NullResidue

_TEXT = hole("text")
_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)
_OBFUSCATION = hole("obfuscation")


class ChunkTemplate:
    """The bytes of a text chunk around its holes, and the events it decodes to."""

    __slots__ = ("after", "before", "bytes", "obfuscation_at", "proto", "text_at")

    def __init__(self, template: ByteTemplate, proto: Any, before: Any, after: Any) -> None:
        self.bytes = template
        self.text_at = template.at[0]
        self.obfuscation_at = template.at[1] if len(template.at) == 2 else None
        self.proto = ir.DeltaRun.prototype(proto)  # what the chunk it was made of said
        self.before: ir.Meta | None = before  # the chunk's shared residue event
        self.after: ir.Meta | None = after  # the choice's shared residue event

    @classmethod
    def make(cls, data: dict[str, Any], events: list[ir.Event]) -> ChunkTemplate | None:
        """The template of a chunk the fast path decoded into ``events``, or ``None``
        when those events are not all shared residue around one plain text delta."""
        before = after = None
        delta: Any = None
        for event in events:
            if type(event) in _DELTAS:
                delta = event
            elif type(event) is not ir.Meta:
                return None  # usage: not worth a template
            elif delta is None:
                before = event
            elif type(event.extra) is NullResidue:
                after = event
            else:
                return None  # the choice's residue is its own event each time
        if delta is None or delta.extra or getattr(delta, "logprobs", None) is not None:
            return None
        reasoning = delta.source_field if type(delta) is ir.ReasoningDelta else None
        choice = dict(data["choices"][0])
        if type(delta) is ir.ToolArgsDelta:
            entry = dict(choice["delta"]["tool_calls"][0])
            entry["function"] = {"arguments": _TEXT}
            choice["delta"] = {"tool_calls": [entry]}
        else:
            choice["delta"] = {reasoning or "content": _TEXT}
        chunk = dict(data)
        chunk["choices"] = [choice]
        stand_ins = [_TEXT]
        if delta.obfuscation is not None:
            chunk["obfuscation"] = _OBFUSCATION
            stand_ins.append(_OBFUSCATION)
        template = ByteTemplate.make(chunk, stand_ins)
        if template is None:
            return None
        return cls(template, delta, before, after)

    def run(self, records: list[Record], start: int) -> ir.DeltaRun | None:
        """The records from ``start`` on that this template knows, as one run (``None``
        when the first is not one of them)."""
        texts, obfuscations, lines = self.bytes.read(
            records, start, self.text_at, self.obfuscation_at
        )
        if not texts:
            return None
        return ir.DeltaRun(self.proto, texts, obfuscations, lines, self.before, self.after)
