"""The chat run hook: a long stream is mostly plain chunks (:mod:`.plain`), the same but
for their text and ``obfuscation`` (:class:`~chatx.codecs.template.DeltaTemplate`), and
none of a run of them is parsed.

A stream changes between reasoning, text and tool calls, and each change ends a run:
the record that opens the next item goes the long way, and the template of the next
plain chunk is not the last one. The hook keeps the template it made for each kind of
item of each lane (:class:`KindTemplate`; a tool call's with a hole for the call's index,
:class:`CallTemplates`), so that when a kind comes back, or the next call of a lane
opens, its first plain chunk is known by its bytes too and no template is made. A kept
template is tried only where what it stands for holds now, the state the plain path
itself reads (:meth:`KindTemplate.holds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

from chatx import ir
from chatx.codecs.byte_template import OBFUSCATION, TEXT, ByteTemplate, hole
from chatx.codecs.chat_chunk.decode import ChatChunkDecoder
from chatx.codecs.chat_chunk.plain import ChoiceState, Envelope, PlainChunks
from chatx.codecs.template import DeltaRun, DeltaTemplate, parsed, worth_making
from chatx.containers import exact
from chatx.record import Record
from chatx.residue import NullResidue

_DELTAS = (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta)
_ITEMS = {ir.TextDelta: "message", ir.ReasoningDelta: "reasoning", ir.ToolArgsDelta: "tool_call"}
CALL = hole("call")
"""Stand-in for a tool call's index while a lane's call template is made."""
_LOW, _HIGH = exact.INT64  # the indexes orjson writes (and reads back without a note)
KEPT_TRIED = 6  # kept templates tried where the one of the moment knows no run


class ChatRunHook:
    """The chat :class:`~chatx.codecs.template.RunHook`, made with the decoder. A plain
    chunk (the decoder's ``plain`` part) makes the template; a chunk the general path
    decodes drops it. A run of text adds to what its lane has said (a citation's span
    counts it). Each template made is kept for its lane and kind of item (``kept``);
    where the one of the moment does not know a record, a kept one that still holds
    may (``reused`` counts the runs found so)."""

    __slots__ = ("decoder", "kept", "lanes", "made", "plain", "reused", "template", "used")

    parse = staticmethod(parsed)

    def __init__(self, decoder: ChatChunkDecoder) -> None:
        self.decoder = decoder
        self.plain = decoder.plain
        self.lanes = decoder.lanes
        self.template: DeltaTemplate | None = None
        self.kept: dict[tuple[int, str], KindTemplate] = {}
        # Templates made and records they knew: a stream whose chunks never repeat one
        # (a new "created" each time) stops paying for them.
        self.made = self.used = 0
        self.reused = 0

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        template = self.template
        run = template.run(records, start) if template is not None else None
        if run is None:
            run = self._kept_run(records, start) if self.kept else None
            if run is None:
                return None
        self.used += len(run.texts)
        if type(run.proto) is ir.TextDelta:
            self.lanes[run.lane].said += sum(map(len, run.texts))
        return run

    def _kept_run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        """The run a kept template that holds now (not the one of the moment) knows from
        ``start`` on; that template is the one of the moment from then on. Only the
        templates last made or used are tried (:data:`KEPT_TRIED`, the newest first): a
        stream of many choices in turn would have every one tried at every record, a
        time that grows with the choices (a run is only speed: a record no template
        is tried on is decoded the long way)."""
        if self.decoder.ended:
            return None
        plain, kept, lanes = self.plain, self.kept, self.lanes
        for key in islice(reversed(kept), KEPT_TRIED):
            number, item = key
            lane = lanes.get(number)
            entry = kept[key]
            if lane is None or lane.open != item or not entry.holds(lane, plain):
                continue
            template = entry.of(lane.open_call)
            if template is None or template is self.template:
                continue
            run = template.run(records, start)
            if run is not None:
                self.template = template
                self.reused += 1
                kept[key] = kept.pop(key)  # the newest again
                return run
        return None

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
        made = _made(data, events)
        envelope = self.plain.envelope
        template = None
        if (
            made is not None
            and envelope is not None  # the chunk's residue is shared between chunks
            and made.before is envelope.meta
        ):
            proto = made.proto
            template = made.of(proto.call if type(proto) is ir.ToolArgsDelta else None)
            key = (proto.lane, _ITEMS[type(proto)])
            self.kept.pop(key, None)  # the newest: tried first (_kept_run)
            self.kept[key] = KindTemplate(made, self.plain.expect, envelope)
        self.template = template


class CallTemplates:
    """The template of a lane's tool call chunk for any call: made once with
    :data:`CALL` in place of the entry's ``index`` and cut there, so that the template
    of call ``k`` is the bytes around that hole joined by ``k``'s digits. orjson writes
    an integer as its digits and every other value of the chunk alone, so those are the
    bytes it writes for the chunk of call ``k``: the template is the one made of that
    chunk, without its making."""

    __slots__ = ("after", "before", "call", "head", "joins", "order", "proto", "rest", "template")

    def __init__(
        self, base: ByteTemplate, proto: ir.ToolArgsDelta, before: Any, after: Any
    ) -> None:
        at, rest = base.at, base.rest
        place = at[-1]  # the call's hole among the holes, in byte order (see make())
        # The digits join the bytes before the call's hole and those after it (which
        # end the payload or not). Before it: the head, or the bytes after the hole
        # before it, whose entry of ``rest`` the joined bytes then stand in.
        _, trail, last = rest[place]
        self.head = base.head
        self.rest = rest[place + 1 :]
        self.joins: tuple[bytes, bytes, list[tuple[bool, bytes, bool]] | None, bool, bool]
        if place == 0:
            self.joins = (base.head, trail, None, False, last)
        else:
            number, lead, _ = rest[place - 1]
            self.joins = (lead, trail, rest[: place - 1], number, last)
        self.order = [k - (k > place) for k in at[:-1]]
        self.proto, self.before, self.after = proto, before, after
        self.call: int | None = None  # the last call's template: asked for at each run
        self.template: DeltaTemplate | None = None

    @classmethod
    def make(
        cls, chunk: dict[str, Any], proto: ir.ToolArgsDelta, before: Any, after: Any
    ) -> CallTemplates | None:
        """Of ``chunk``, a call's chunk with :data:`TEXT` for its arguments (and
        :data:`OBFUSCATION`) and :data:`CALL` for its index."""
        stand_ins = [TEXT, OBFUSCATION, CALL] if proto.obfuscation is not None else [TEXT, CALL]
        base = ByteTemplate.make(chunk, stand_ins)
        return cls(base, proto, before, after) if base is not None else None

    def of(self, call: int | None) -> DeltaTemplate | None:
        """The template of call ``call``'s chunks; none for an index orjson does not
        write as it reads (beyond 64 bits: reading it says a note)."""
        if type(call) is not int:
            return None
        if call == self.call:
            return self.template
        if not _LOW <= call < _HIGH:
            return None
        lead, trail, prior, number, last = self.joins
        joined = lead + b"%d" % call + trail
        if prior is None:
            template = ByteTemplate(joined, self.rest, self.order)
        else:
            template = ByteTemplate(
                self.head, [*prior, (number, joined, last), *self.rest], self.order
            )
        proto = self.proto
        delta = ir.ToolArgsDelta(proto.lane, call, proto.fragment, {}, proto.obfuscation)
        self.call, self.template = call, DeltaTemplate(template, delta, self.before, self.after)
        return self.template


class OneTemplate:
    """The template of a lane's reasoning or message chunks: one, there is no call."""

    __slots__ = ("before", "proto", "template")

    def __init__(self, template: DeltaTemplate) -> None:
        self.template = template
        self.proto = template.proto
        self.before = template.before

    def of(self, call: int | None) -> DeltaTemplate | None:
        return self.template if call is None else None


class KindTemplate:
    """A template kept for a lane's kind of item, and what it stands for besides its
    bytes: the stream's own values (``expect``: a chunk's residue is what differs from
    them) and the envelope the plain path shared the chunk's residue through (its
    ``before`` event is that envelope's). The bytes say the rest: the lane, the kind,
    the call, no finish, no logprobs, no usage."""

    __slots__ = ("envelope", "expect", "made")

    def __init__(self, made: CallTemplates | OneTemplate, expect: Any, envelope: Envelope) -> None:
        self.made = made
        self.expect = expect
        self.envelope = envelope

    def holds(self, lane: ChoiceState, plain: PlainChunks) -> bool:
        """Whether a chunk of the template's bytes is still a plain chunk that decodes
        to its events: the lane's item of this kind is open (the key says the kind, the
        call is asked of ``made``), not finished, not sealed (more reasoning would open
        another item), in the same stream and envelope as when it was made (a new stream
        has new values and new shared events: ``reset`` drops the envelope)."""
        return (
            not lane.finished
            and lane.seal is None
            and self.expect is plain.expect
            and self.envelope is plain.envelope
        )

    def of(self, call: int | None) -> DeltaTemplate | None:
        return self.made.of(call)


def _made(data: dict[str, Any], events: list[ir.Event]) -> CallTemplates | OneTemplate | None:
    """The template of a plain chunk the decoder read into ``events`` (a tool call's for
    any call of its lane), or ``None`` when those events are not all shared residue
    around one plain delta."""
    found = _payload(data, events)
    if found is None:
        return None
    chunk, delta, before, after = found
    if type(delta) is ir.ToolArgsDelta:
        chunk["choices"][0]["delta"]["tool_calls"][0]["index"] = CALL
        return CallTemplates.make(chunk, delta, before, after)
    template = DeltaTemplate.make(chunk, delta, before, after)
    return OneTemplate(template) if template is not None else None


def chunk_template(data: dict[str, Any], events: list[ir.Event]) -> DeltaTemplate | None:
    """The template of a plain chunk the decoder read into ``events``, or ``None`` when
    those events are not all shared residue around one plain text delta."""
    made = _made(data, events)
    if made is None:
        return None
    proto = made.proto
    return made.of(proto.call if type(proto) is ir.ToolArgsDelta else None)


def _payload(
    data: dict[str, Any], events: list[ir.Event]
) -> tuple[dict[str, Any], Any, Any, Any] | None:
    """The chunk with stand-ins for its text (and obfuscation), its delta and the shared
    residue around it: (chunk, delta, before, after); ``None`` as for chunk_template."""
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
    return chunk, delta, before, after
