"""Accumulate IR batches into what a client reconstructs from a stream.

An :class:`Assembler` is fed the IR batches of one stream and keeps, per lane (chat
choice), the items in output order (:mod:`chatx.collect.items`) — message text and refusal,
reasoning, tool calls (name, call id, argument fragments), other items a stream carries
that the IR has no words for (a Responses web search), as they came — plus the logprobs
and the finish reason; per stream the id, model, created time, usage, errors and how
many IR events of each type it saw. What a passthrough record or a Meta says in words
formats share (``meaning``) is kept on the item it is about: a web search's steps on
the item its call opened, a citation on the message item whose text it cites.

Memory grows with the text, not with the number of events: pieces are kept in
:class:`~chatx.pieces.Pieces` (folded as they come, joined once at the end), empty pieces
are not kept, and bookkeeping events (``Meta``) are counted, not stored (but for a
message's citations). :func:`assemble` splits input that holds several streams (vercel
fixtures concatenate turns) into one Assembler per stream.

This module knows no format: the codecs' final-object builders read it, so it imports
neither the registry nor the decoders. Which passthrough payloads carry output items is
the format's to say (``Codec.other_item``); :mod:`chatx.collect.streams` hands that on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from chatx import ir
from chatx.collect.items import Cited, CollectedCall, Item, Lane, OtherItem, OtherItems
from chatx.collect.residue import accumulate, settle
from chatx.errors import UsageError
from chatx.pieces import Pieces
from chatx.residue import lost_paths, reported

if TYPE_CHECKING:  # the codecs' package is the registry, which this module does not import
    from chatx.codecs.template import DeltaRun

# Record-level fields a client keeps on the final object (the openai SDK copies them).
_KEPT_META = ("system_fingerprint", "service_tier")


class Assembler:
    """Feed it the IR batches of one stream; read the reconstruction off its fields.

    ``other_items`` says which passthrough events add or finish an output item (without
    it, passthrough events are only counted)."""

    def __init__(self, other_items: OtherItems | None = None) -> None:
        self.other_items = other_items
        self.id: str | None = None
        self.model: str | None = None
        self.created: int | None = None
        # The request that produced the stream, when known (recorded beside it): what a
        # final object echoes of it (a Responses envelope), as convert's encoder does.
        self.request: dict[str, Any] | None = None
        self.start_extra: dict[str, Any] = {}
        self.end_extra: dict[str, Any] = {}
        # The source codec's own notes (see ir.Own) on the stream's start and end, and
        # those said beside the stream (a record's Meta), in order: what its own final
        # builder may read (Responses: the envelope as it came, the derived events'
        # patches), no field of the final object.
        self.start_own: ir.Own | None = None
        self.end_own: ir.Own | None = None
        self.owns: list[ir.Own] = []
        self.meta: dict[str, Any] = {}
        # The residue of the stream's records, of each record as a whole (chat: a chunk's
        # own fields), gathered as chatx.collect.residue says; a lane's, per lane.
        self.residue: dict[str, Any] = {}
        self._settled: Any = None
        # The residue of text, reasoning and argument deltas: the paths of its fields,
        # counted (a final object has no place for a delta's own fields; its builder says
        # them lost).
        self.delta_residue: Counter[str] = Counter()
        self.lanes: dict[int, Lane] = {}
        self.usage: ir.Usage | None = None
        # The last usage said before the stream's error: what a format whose error ends
        # its stream (chat, Anthropic, Llama Stack) says, when a source says more after.
        self.usage_before_error: ir.Usage | None = None
        self.errors: list[ir.Error] = []
        self.counts: Counter[str] = Counter()
        self.passthrough: Counter[str] = Counter()
        self.started = False
        self.ended = False
        self._others: dict[Any, Item] = {}  # items the IR has no words for, by key
        self._searches: dict[str, Item] = {}  # web searches, by their call's id
        self._ends = 0  # web searches ended

    # -- feeding -------------------------------------------------------------------

    def feed(self, batch: Iterable[ir.Event]) -> None:
        """Take one IR batch (the events of one source record)."""
        for event in batch:
            self.counts[type(event).__name__] += 1
            handler = _HANDLERS.get(type(event))
            if handler is not None:
                handler(self, event)

    def feed_run(self, run: DeltaRun) -> None:
        """Take a run's batches (:meth:`DeltaRun.batch` of each of its records, in order).

        The first record's batch is fed as any other. Each record after it says the same
        shared events and a delta like the first but for its text; when those events each
        settle a dict no other one of them writes (:func:`_settles_once`), taking them again
        changes nothing (a settle of the same values, the same kept fields), and the
        delta goes to the item the first opened: the records after the first only add their
        texts (and their counts). Otherwise each record's batch is fed."""
        self.feed(run.batch(0))
        rest = run.texts[1:]
        if not rest:
            return
        shared = run.shared
        if not _settles_once(shared):
            for k in range(1, len(run.texts)):
                self.feed(run.batch(k))
            return
        proto = run.proto
        self.counts[type(proto).__name__] += len(rest)
        if shared:
            self.counts["Meta"] += len(rest) * len(shared)
        if isinstance(proto, ir.TextDelta):
            self._current(proto.lane, "message").text.extend(rest)
        elif isinstance(proto, ir.ReasoningDelta):
            item = self._current(proto.lane, "reasoning")
            item.reasoning[(proto.kind, proto.part)].extend(rest)
        else:
            self.lane(proto.lane).tool_calls[proto.call].fragments.extend(rest)

    def lane(self, number: int) -> Lane:
        lane = self.lanes.get(number)
        if lane is None:
            lane = self.lanes[number] = Lane(number)
        return lane

    @property
    def choices(self) -> list[Lane]:
        """The lanes in index order, leaving out lanes that say nothing."""
        return [self.lanes[n] for n in sorted(self.lanes) if not self.lanes[n].is_empty()]

    def one_lane(self, choice: int | None, what: str) -> Lane:
        """The lane a one-choice object (``what``: "a response") is built from: choice
        ``choice``, or the only one; a UsageError when there is none or several."""
        lanes = self.choices or [self.lane(0)]
        if choice is not None:
            if choice not in self.lanes:
                raise UsageError(
                    f"no choice {choice} in the stream "
                    f"(choices: {', '.join(map(str, sorted(self.lanes)))})"
                )
            return self.lanes[choice]
        if len(lanes) > 1:
            raise UsageError(
                f"the stream has {len(lanes)} choices and {what} holds one: pass --choice N"
            )
        return lanes[0]

    def said_after_error(self) -> bool:
        """The stream said usage, or a finish reason but the error's own, after its error
        (a Responses response.failed): a format whose error ends its stream has no place
        for it."""
        if self.usage is not self.usage_before_error:
            return True
        return self.finished_after_error()

    def finished_after_error(self) -> bool:
        """A finish reason but the error's own came after the stream's error."""
        return any(lane.after_error and lane.finish != "error" for lane in self.lanes.values())

    def _start(self, event: ir.StreamStart) -> None:
        self.started = True
        self.id, self.model, self.created = event.id, event.model, event.created
        self.start_extra = event.extra
        self.start_own = event.own

    def _end(self, event: ir.StreamEnd) -> None:
        self.ended = True
        self.end_extra = event.extra
        self.end_own = event.own
        for lane in self.lanes.values():
            lane.open = None

    def _stream_meta(self, extra: dict[str, Any]) -> None:
        """A record's own fields, not of a lane (chat: a chunk's)."""
        for key in _KEPT_META:
            # Snowflake sends service_tier "" on every chunk: no value, not kept.
            if extra.get(key):
                self.meta[key] = extra[key]
        if extra is not self._settled:  # a decoder shares one between records
            self._settled = extra
            settle(self.residue, extra)

    def _meta(self, event: ir.Meta) -> None:
        if event.lane is None:
            self._stream_meta(event.extra)
            if event.own is not None:
                self.owns.append(event.own)
            return
        if event.meaning is None:
            lane = self.lane(event.lane)
            if event.extra:
                settle(lane.residue, event.extra)
            if event.delta:
                accumulate(lane.delta, event.delta)
        if event.meaning is not None or "citations" in event.extra:
            # A citation of the lane's message text (Anthropic's citations_delta): what
            # another format writes of it, and the record's residue, which gives the
            # same format its own (a document cited without a file id says no more).
            item = self.lane(event.lane).open
            if event.meaning is not None:
                item = self._current(event.lane, "message")
            if item is not None and item.kind == "message":
                item.citations.append(Cited(event.meaning, event.extra, item.text.size()))

    def _lane_start(self, event: ir.LaneStart) -> None:
        lane = self.lane(event.lane)
        lane.role, lane.started = event.role, True

    def _item_start(self, event: ir.ItemStart) -> None:
        lane = self.lane(event.lane)
        item = Item(event.kind, event.id)
        if event.extra:
            item.opened = event.extra
        item.own = event.own
        if event.kind == "tool_call":
            call = event.call if event.call is not None else len(lane.tool_calls)
            item.call = lane.tool_calls[call] = CollectedCall(
                call, event.call_id, event.name, event.id
            )
        lane.items.append(item)
        lane.open = item

    def _item_end(self, event: ir.ItemEnd) -> None:
        lane = self.lane(event.lane)
        item = lane.open
        if item is not None:
            item.done = True
            patch = event.extra.get("item")
            if isinstance(patch, dict):
                item.patch = patch
            if event.extra:
                item.closed = {k: v for k, v in reported(event.extra).items() if k != "item"}
            item.signature, item.encrypted = event.signature, event.encrypted
        lane.open = None

    def _current(self, number: int, kind: str) -> Item:
        """The open item of ``kind``; one is opened when a decoder sent none."""
        lane = self.lane(number)
        item = lane.open
        if item is None or item.kind != kind:
            item = Item(kind)
            lane.items.append(item)
            lane.open = item
        return item

    def _message(self, event: ir.TextDelta | ir.RefusalDelta) -> None:
        """A piece of the message's text, or of its refusal: the same fields, kept apart."""
        if event.extra:
            self.delta_residue.update(lost_paths(reported(event.extra)))
        item = self._current(event.lane, "message")
        if type(event) is ir.TextDelta:
            pieces, logprobs = item.text, item.logprobs
        else:
            pieces, logprobs = item.refusal, item.refusal_logprobs
        if event.text:
            pieces.append(event.text)
        if event.logprobs:
            logprobs.extend(event.logprobs)

    def _delta_lane(self, event: ir.ReasoningDelta | ir.ToolArgsDelta) -> Lane:
        """The lane a piece goes to; the piece's own fields are noted as lost, as no
        collected object has a place for them."""
        if event.extra:
            self.delta_residue.update(lost_paths(reported(event.extra)))
        return self.lane(event.lane)

    def _reasoning(self, event: ir.ReasoningDelta) -> None:
        lane = self._delta_lane(event)
        if event.source_field and lane.reasoning_field is None:
            lane.reasoning_field = event.source_field
        item = self._current(event.lane, "reasoning")
        parts = item.reasoning.get((event.kind, event.part))
        if parts is None:
            parts = item.reasoning[(event.kind, event.part)] = Pieces()
        if event.text:
            parts.append(event.text)

    def _args(self, event: ir.ToolArgsDelta) -> None:
        lane = self._delta_lane(event)
        call = lane.tool_calls.get(event.call)
        if call is None:  # a fragment for a call never opened: keep it all the same
            item = Item("tool_call")
            item.call = call = lane.tool_calls[event.call] = CollectedCall(event.call)
            lane.items.append(item)
        if event.fragment:
            call.fragments.append(event.fragment)

    def _usage(self, event: ir.Usage) -> None:
        # Perplexity and Groq repeat usage; the last one is the final count.
        self.usage = event
        if not self.errors:
            self.usage_before_error = event

    def _finish(self, event: ir.Finish) -> None:
        lane = self.lane(event.lane)
        lane.finish, lane.raw_finish = event.reason, event.raw
        lane.stop_sequence = event.stop_sequence
        if event.extra:
            settle(lane.finish_extra, event.extra)
        lane.after_error = bool(self.errors)
        lane.open = None

    def _error(self, event: ir.Error) -> None:
        self.errors.append(event)

    def _passthrough(self, event: ir.Passthrough) -> None:
        data = event.data
        kind = data.get("type") if isinstance(data, dict) else None
        self.passthrough[str(event.event or kind or "?")] += 1
        found = self.other_items(event) if self.other_items is not None else None
        item = self._other(found, event) if found is not None else None
        meaning = event.meaning
        if type(meaning) is ir.WebSearch:
            self._search(meaning, item)
        elif type(meaning) is ir.Citation or (
            meaning is None and found is None and type(kind) is str and "annotation" in kind
        ):
            # A Responses annotation, of the open message: one no other format has words
            # for (a file_citation) is kept without them, for another format's final
            # object to say it lost, as convert's encoders say the record.
            message = self._current(0, "message")
            message.citations.append(Cited(meaning, {}, message.text.size()))

    def _other(self, found: OtherItem, event: ir.Passthrough) -> Item | None:
        """The item the IR has no words for that a passthrough payload adds, finishes or
        streams the input of (None for a piece of input); kept whole, in output order."""
        if found.fragment is not None:
            known = self._others.get(found.key)
            if known is not None:
                if known.input is None:
                    known.input = Pieces()
                known.input.append(found.fragment)
            return None
        if not found.done:
            other = self._others[found.key] = Item(
                "other", found.item.get("id"), data=found.item, format=event.format
            )
            self._add_other(found.lane, other)
            return other
        item = self._others.get(found.key)
        if item is None:
            item = self._others[found.key] = Item(
                "other", found.item.get("id"), format=event.format
            )
            self._add_other(found.lane, item)
        item.data, item.done = found.item, True
        return item

    def _add_other(self, number: int, item: Item) -> None:
        lane = self.lane(number)
        opened = lane.open
        if opened is not None and opened.kind == "message":
            item.inside = (opened, opened.text.size())
        lane.items.append(item)

    def _search(self, step: ir.WebSearch, item: Item | None) -> None:
        """A web search's step, merged on the item its call opened; an item that brings
        only its results (Anthropic's result block) is ``result_of`` that one."""
        opened = self._searches.get(step.id)
        if opened is None:
            if item is None:
                return
            opened = self._searches[step.id] = item
            item.search = ir.WebSearch(step.id, step.step, action=step.action)
            item.began = step.step == "begin"
        elif item is not None and item is not opened:
            item.result_of = opened
        search = opened.search
        assert search is not None
        if step.query is not None:
            search.query = step.query
        if search.step != "end":
            search.step = step.step
        if step.step == "end":
            search.sources, search.failed = step.sources, step.failed
            search.action, search.extra = step.action, step.extra
            if opened.ended is None:
                opened.ended = (len(self.lane(0).items), self._ends)
                self._ends += 1


_HANDLERS: dict[type, Any] = {
    ir.StreamStart: Assembler._start,
    ir.StreamEnd: Assembler._end,
    ir.Meta: Assembler._meta,
    ir.LaneStart: Assembler._lane_start,
    ir.ItemStart: Assembler._item_start,
    ir.ItemEnd: Assembler._item_end,
    ir.TextDelta: Assembler._message,
    ir.RefusalDelta: Assembler._message,
    ir.ReasoningDelta: Assembler._reasoning,
    ir.ToolArgsDelta: Assembler._args,
    ir.Usage: Assembler._usage,
    ir.Finish: Assembler._finish,
    ir.Error: Assembler._error,
    ir.Passthrough: Assembler._passthrough,
}


def _settles_once(shared: tuple[ir.Meta, ...]) -> bool:
    """Whether feeding a run's shared events again after its first record changes
    nothing: each settles the residue of the stream (no lane) or of one lane, no two the
    same one, and none says more (a citation, a delta's fields to add up, a codec's own
    note: those go on a list or add up, record after record)."""
    settled: set[int | None] = set()
    for meta in shared:
        if meta.meaning is not None or meta.own is not None or meta.delta:
            return False
        if "citations" in meta.extra or meta.lane in settled:
            return False
        settled.add(meta.lane)
    return True


def assemble(
    batches: Iterable[list[ir.Event] | DeltaRun], other_items: OtherItems | None = None
) -> list[Assembler]:
    """One Assembler per stream in the input (a second ``StreamStart`` begins the next);
    a :class:`~chatx.codecs.template.DeltaRun` among the batches (which has no
    ``StreamStart``) is its records' batches, taken at once."""
    streams = [Assembler(other_items)]
    for batch in batches:
        if not isinstance(batch, list):
            streams[-1].feed_run(batch)
            continue
        start = 0
        for position, event in enumerate(batch):
            if type(event) is ir.StreamStart and streams[-1].started:
                streams[-1].feed(batch[start:position])
                streams.append(Assembler(other_items))
                start = position
        streams[-1].feed(batch[start:] if start else batch)
    return streams
