"""The chat run hook: a long stream is mostly plain chunks (:mod:`.plain`), the same but
for their text and ``obfuscation`` (:class:`~chatx.codecs.template.DeltaTemplate`), and
none of a run of them is parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatx import ir
from chatx.codecs.byte_template import OBFUSCATION, TEXT
from chatx.codecs.chat_chunk.decode import ChatChunkDecoder
from chatx.codecs.template import DeltaRun, DeltaTemplate, parsed, worth_making
from chatx.record import Record
from chatx.residue import NullResidue

_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)


class ChatRunHook:
    """The chat :class:`~chatx.codecs.template.RunHook`, made with the decoder. A plain
    chunk (the decoder's ``plain`` part) makes the template; a chunk the general path
    decodes drops it. A run of text adds to what its lane has said (a citation's span
    counts it)."""

    __slots__ = ("decoder", "lanes", "made", "plain", "template", "used")

    parse = staticmethod(parsed)

    def __init__(self, decoder: ChatChunkDecoder) -> None:
        self.decoder = decoder
        self.plain = decoder.plain
        self.lanes = decoder.lanes
        self.template: DeltaTemplate | None = None
        # Templates made and records they knew: a stream whose chunks never repeat one
        # (a new "created" each time) stops paying for them.
        self.made = self.used = 0

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        if template is None:
            return None
        run = template.run(records, start)
        if run is not None:
            self.used += len(run.texts)
            if type(run.proto) is ir.TextDelta:
                self.lanes[run.lane].said += sum(map(len, run.texts))
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        """Decoded, and a template made of the record when it was a plain chunk. (The
        decoder's own check that the stream has not ended is not needed here: once it
        ends, no lane has an item open, and no chunk is plain.)"""
        data = record.data
        if type(data) is dict:
            events = self.plain.chunk(data)
            if events is not None:
                if raw:
                    self._make_template(data, events)
                return events
        self.template = None  # the general path may change what a template stands for
        return self.decoder.general(record)

    def _make_template(self, data: dict[str, Any], events: list[ir.Event]) -> None:
        if not worth_making(self.made, self.used):
            return
        self.made += 1
        template = chunk_template(data, events)
        envelope = self.plain.envelope
        if (
            template is None
            or envelope is None  # the chunk's residue is not shared between chunks
            or template.before is not envelope.meta
        ):
            template = None
        self.template = template


def chunk_template(data: dict[str, Any], events: list[ir.Event]) -> DeltaTemplate | None:
    """The template of a plain chunk the decoder read into ``events``, or ``None`` when
    those events are not all shared residue around one plain text delta."""
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
        entry["function"] = {"arguments": TEXT}
        choice["delta"] = {"tool_calls": [entry]}
    else:
        choice["delta"] = {reasoning or "content": TEXT}
    chunk = dict(data)
    chunk["choices"] = [choice]
    if delta.obfuscation is not None:
        chunk["obfuscation"] = OBFUSCATION
    return DeltaTemplate.make(chunk, delta, before, after)
