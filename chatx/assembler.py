"""Accumulate IR batches into what a client reconstructs from a stream.

An :class:`Assembler` is fed the IR batches of one stream and keeps, per lane (chat
choice), the items in output order — message text and refusal, reasoning, tool calls
(name, call id, argument fragments), other items a stream carries that the IR has no
words for (a Responses web search), as they came — plus the logprobs and the finish
reason; per stream the id, model, created time, usage, errors and how many IR events of
each type it saw.

Memory grows with the text, not with the number of events: pieces are kept in
:class:`~chatx.pieces.Pieces` (folded as they come, joined once at the end), empty pieces
are not kept, and bookkeeping events (``Meta``) are counted, not stored. :func:`assemble`
splits input that holds several streams (vercel fixtures concatenate turns) into one
Assembler per stream.

This module knows no format: the codecs' final-object builders read it, so it imports
neither the registry nor the decoders. Which passthrough payloads carry output items is
the format's to say (``Codec.other_item``); :mod:`chatx.assemble` hands that on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from chatx import ir
from chatx.errors import UsageError
from chatx.pieces import Pieces

__all__ = ["Assembler", "Item", "Lane", "OtherItem", "ToolCall", "assemble", "joined"]

PartKind = Literal["summary", "text"]
# Record-level fields a client keeps on the final object (the openai SDK copies them).
_KEPT_META = ("system_fingerprint", "service_tier")


def joined(parts: Pieces) -> str:
    """The pieces as one string (joined once, then kept)."""
    return parts.text()


@dataclass(frozen=True, slots=True)
class OtherItem:
    """An output item the IR has no words for, as one passthrough payload carries it:
    ``key`` tells the item apart from the stream's others (Responses: its
    ``output_index``), ``done`` says the payload finishes it (else it adds it).
    ``fragment`` is a piece of the input the item's call streams (Anthropic's server
    tool blocks say theirs in ``input_json_delta`` records): the payload adds it to the
    item ``key`` names, whose ``input`` keeps the pieces."""

    key: Any
    item: dict[str, Any]
    done: bool
    fragment: str | None = None


# What a passthrough event adds to the output items, if anything.
OtherItems = Callable[[ir.Passthrough], OtherItem | None]


@dataclass(slots=True, eq=False)
class ToolCall:
    """One function call: ``call`` numbers it within the lane from 0."""

    call: int
    call_id: str | None = None
    name: str | None = None
    item_id: str | None = None
    fragments: Pieces = field(default_factory=Pieces)

    @property
    def arguments(self) -> str:
        return joined(self.fragments)


@dataclass(slots=True, eq=False)
class Item:
    """One output item of a lane, in the order the stream opened them.

    ``kind`` is ``message``, ``reasoning``, ``tool_call`` or ``other`` (an item the IR has
    no words for, e.g. a Responses ``web_search_call``: ``data`` is the item as it came,
    ``format`` the format that gave it).
    ``reasoning`` maps (``summary``|``text``, part number) to that part's pieces.
    ``patch`` is the source's own difference from the canonical item (Responses residue).
    """

    kind: str
    id: str | None = None
    text: Pieces = field(default_factory=Pieces)
    refusal: Pieces = field(default_factory=Pieces)
    reasoning: dict[tuple[PartKind, int], Pieces] = field(default_factory=dict)
    logprobs: list[Any] = field(default_factory=list)
    refusal_logprobs: list[Any] = field(default_factory=list)
    call: ToolCall | None = None
    data: Any = None
    done: bool = False
    patch: dict[str, Any] = field(default_factory=dict)
    format: str | None = None
    # A reasoning item's closing token (see ir.ItemEnd): its signature, or its content
    # withheld (encrypted).
    signature: str | None = None
    encrypted: str | None = None
    # An other item's input as its call streamed it (see OtherItem.fragment).
    input: Pieces | None = None

    def reasoning_text(self) -> str:
        return "".join(joined(parts) for parts in self.reasoning.values())


@dataclass(slots=True, eq=False)
class Lane:
    """One chat choice (Responses and Llama Stack have lane 0 only)."""

    index: int
    role: str = "assistant"
    items: list[Item] = field(default_factory=list)
    tool_calls: dict[int, ToolCall] = field(default_factory=dict)
    finish: str | None = None  # chat vocabulary, see ir.FINISH_REASONS
    raw_finish: str | None = None  # the source's own word when it differs
    stop_sequence: str | None = None  # the stop sequence matched (see ir.Finish)
    reasoning_field: str | None = None  # chat: reasoning_content or reasoning
    open: Item | None = None

    @property
    def text(self) -> str:
        return "".join(joined(i.text) for i in self.items if i.kind == "message")

    @property
    def refusal(self) -> str:
        return "".join(joined(i.refusal) for i in self.items if i.kind == "message")

    @property
    def reasoning(self) -> str:
        return "".join(i.reasoning_text() for i in self.items if i.kind == "reasoning")

    @property
    def logprobs(self) -> list[Any]:
        return [lp for i in self.items for lp in i.logprobs]

    @property
    def refusal_logprobs(self) -> list[Any]:
        return [lp for i in self.items for lp in i.refusal_logprobs]

    @property
    def calls(self) -> list[ToolCall]:
        return [self.tool_calls[n] for n in sorted(self.tool_calls)]

    def others(self) -> list[Item]:
        return [i for i in self.items if i.kind == "other"]

    def is_empty(self) -> bool:
        """True when the lane says nothing (Azure's filter-only chunk opens none)."""
        return not self.items and self.finish is None


class Assembler:
    """Feed it the IR batches of one stream; read the reconstruction off its fields.

    ``other_items`` says which passthrough events add or finish an output item (without
    it, passthrough events are only counted)."""

    def __init__(self, other_items: OtherItems | None = None) -> None:
        self.other_items = other_items
        self.id: str | None = None
        self.model: str | None = None
        self.created: int | None = None
        self.start_extra: dict[str, Any] = {}
        self.end_extra: dict[str, Any] = {}
        self.meta: dict[str, Any] = {}
        self.lanes: dict[int, Lane] = {}
        self.usage: ir.Usage | None = None
        self.errors: list[ir.Error] = []
        self.counts: Counter[str] = Counter()
        self.passthrough: Counter[str] = Counter()
        self.started = False
        self.ended = False
        self._others: dict[Any, Item] = {}  # items the IR has no words for, by key

    # -- feeding -------------------------------------------------------------------

    def feed(self, batch: Iterable[ir.Event]) -> None:
        """Take one IR batch (the events of one source record)."""
        for event in batch:
            self.counts[type(event).__name__] += 1
            handler = _HANDLERS.get(type(event))
            if handler is not None:
                handler(self, event)

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

    def _start(self, event: ir.StreamStart) -> None:
        self.started = True
        self.id, self.model, self.created = event.id, event.model, event.created
        self.start_extra = event.extra

    def _end(self, event: ir.StreamEnd) -> None:
        self.ended = True
        self.end_extra = event.extra
        for lane in self.lanes.values():
            lane.open = None

    def _meta(self, event: ir.Meta) -> None:
        if event.lane is None:
            for key in _KEPT_META:
                # Snowflake sends service_tier "" on every chunk: no value, not kept.
                if event.extra.get(key):
                    self.meta[key] = event.extra[key]

    def _lane_start(self, event: ir.LaneStart) -> None:
        self.lane(event.lane).role = event.role

    def _item_start(self, event: ir.ItemStart) -> None:
        lane = self.lane(event.lane)
        item = Item(event.kind, event.id)
        if event.kind == "tool_call":
            call = event.call if event.call is not None else len(lane.tool_calls)
            item.call = lane.tool_calls[call] = ToolCall(call, event.call_id, event.name, event.id)
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

    def _text(self, event: ir.TextDelta) -> None:
        item = self._current(event.lane, "message")
        if event.text:
            item.text.append(event.text)
        if event.logprobs:
            item.logprobs.extend(event.logprobs)

    def _refusal(self, event: ir.RefusalDelta) -> None:
        item = self._current(event.lane, "message")
        if event.text:
            item.refusal.append(event.text)
        if event.logprobs:
            item.refusal_logprobs.extend(event.logprobs)

    def _reasoning(self, event: ir.ReasoningDelta) -> None:
        lane = self.lane(event.lane)
        if event.source_field and lane.reasoning_field is None:
            lane.reasoning_field = event.source_field
        item = self._current(event.lane, "reasoning")
        parts = item.reasoning.get((event.kind, event.part))
        if parts is None:
            parts = item.reasoning[(event.kind, event.part)] = Pieces()
        if event.text:
            parts.append(event.text)

    def _args(self, event: ir.ToolArgsDelta) -> None:
        lane = self.lane(event.lane)
        call = lane.tool_calls.get(event.call)
        if call is None:  # a fragment for a call never opened: keep it all the same
            item = Item("tool_call")
            item.call = call = lane.tool_calls[event.call] = ToolCall(event.call)
            lane.items.append(item)
        if event.fragment:
            call.fragments.append(event.fragment)

    def _usage(self, event: ir.Usage) -> None:
        # Perplexity and Groq repeat usage; the last one is the final count.
        self.usage = event

    def _finish(self, event: ir.Finish) -> None:
        lane = self.lane(event.lane)
        lane.finish, lane.raw_finish = event.reason, event.raw
        lane.stop_sequence = event.stop_sequence
        lane.open = None

    def _error(self, event: ir.Error) -> None:
        self.errors.append(event)

    def _passthrough(self, event: ir.Passthrough) -> None:
        data = event.data
        kind = data.get("type") if isinstance(data, dict) else None
        self.passthrough[str(event.event or kind or "?")] += 1
        found = self.other_items(event) if self.other_items is not None else None
        if found is None:
            return
        if found.fragment is not None:
            known = self._others.get(found.key)
            if known is not None:
                if known.input is None:
                    known.input = Pieces()
                known.input.append(found.fragment)
            return
        # Items the IR has no words for: kept whole, in output order.
        if not found.done:
            other = self._others[found.key] = Item(
                "other", found.item.get("id"), data=found.item, format=event.format
            )
            self.lane(0).items.append(other)
            return
        item = self._others.get(found.key)
        if item is None:
            item = self._others[found.key] = Item(
                "other", found.item.get("id"), format=event.format
            )
            self.lane(0).items.append(item)
        item.data, item.done = found.item, True


_HANDLERS: dict[type, Any] = {
    ir.StreamStart: Assembler._start,
    ir.StreamEnd: Assembler._end,
    ir.Meta: Assembler._meta,
    ir.LaneStart: Assembler._lane_start,
    ir.ItemStart: Assembler._item_start,
    ir.ItemEnd: Assembler._item_end,
    ir.TextDelta: Assembler._text,
    ir.RefusalDelta: Assembler._refusal,
    ir.ReasoningDelta: Assembler._reasoning,
    ir.ToolArgsDelta: Assembler._args,
    ir.Usage: Assembler._usage,
    ir.Finish: Assembler._finish,
    ir.Error: Assembler._error,
    ir.Passthrough: Assembler._passthrough,
}


def assemble(
    batches: Iterable[list[ir.Event]], other_items: OtherItems | None = None
) -> list[Assembler]:
    """One Assembler per stream in the input (a second ``StreamStart`` begins the next)."""
    streams = [Assembler(other_items)]
    for batch in batches:
        start = 0
        for position, event in enumerate(batch):
            if type(event) is ir.StreamStart and streams[-1].started:
                streams[-1].feed(batch[start:position])
                streams.append(Assembler(other_items))
                start = position
        streams[-1].feed(batch[start:] if start else batch)
    return streams
