"""What an :class:`~chatx.collect.assembler.Assembler` builds from a stream: per lane (chat
choice) the items in output order (:class:`Item`: message text and refusal, reasoning, a
tool call's :class:`CollectedCall`, other items the IR has no words for), with what a
message cites (:class:`Cited`) and what a web search found (``Item.search``).

Format-free, as the Assembler is: the codecs' final-object builders read these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from chatx import ir
from chatx.pieces import Pieces

__all__ = [
    "Cited",
    "Item",
    "Lane",
    "OtherItem",
    "OtherItems",
    "PartKind",
    "CollectedCall",
    "joined",
]

PartKind = Literal["summary", "text"]


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
    item ``key`` names, whose ``input`` keeps the pieces. ``lane`` is the lane the item
    is of (a Gemini candidate's code part; Responses and Anthropic have lane 0 only)."""

    key: Any
    item: dict[str, Any]
    done: bool
    fragment: str | None = None
    lane: int = 0


# What a passthrough event adds to the output items, if anything.
OtherItems = Callable[[ir.Passthrough], OtherItem | None]


@dataclass(slots=True, eq=False)
class CollectedCall:
    """One function call: ``call`` numbers it within the lane from 0."""

    call: int
    call_id: str | None = None
    name: str | None = None
    item_id: str | None = None
    fragments: Pieces = field(default_factory=Pieces)

    @property
    def arguments(self) -> str:
        return joined(self.fragments)


@dataclass(frozen=True, slots=True)
class Cited:
    """A citation of a message item's text, where it came: ``citation`` is what another
    format may write of it (None: nothing, as a document Anthropic cites without a file
    id), ``extra`` the source record's residue (the same format's own citation), ``at``
    the characters of the item's text said before it."""

    citation: ir.Citation | None
    extra: dict[str, Any]
    at: int


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
    call: CollectedCall | None = None
    data: Any = None
    done: bool = False
    patch: dict[str, Any] = field(default_factory=dict)
    # The residue of the record that opened it: the source format's own fields of the
    # item as it began (an Anthropic text block's "citations": []).
    opened: dict[str, Any] = field(default_factory=dict)
    # The source codec's own note on the record that opened it (see ir.Own): what that
    # codec's final builder may read, no field of the item.
    own: ir.Own | None = None
    # The residue of the record that ended it, but the done item's own fields (``patch``).
    closed: dict[str, Any] = field(default_factory=dict)
    format: str | None = None
    # A reasoning item's closing token (see ir.ItemEnd): its signature, or its content
    # withheld (encrypted).
    signature: str | None = None
    encrypted: str | None = None
    # An other item's input as its call streamed it (see OtherItem.fragment).
    input: Pieces | None = None
    # A message's citations, in the order they came.
    citations: list[Cited] = field(default_factory=list)
    # A web search's steps merged (ir.WebSearch: its query, and the pages once it
    # ended), on the item its call opened; ``result_of`` is that item, on an item
    # that only brought its results (Anthropic's web_search_tool_result block).
    search: ir.WebSearch | None = None
    result_of: Item | None = None
    began: bool = False  # the search's call was seen opening (not only its results)
    # When the search ended: how many items the lane had opened then, and how many
    # searches had ended before (concurrent searches may end in another order).
    ended: tuple[int, int] | None = None
    # An other item that came while a message item was open (a Gemini code part between
    # two texts, which the IR says as one message): that item, and the characters of
    # its text said before this one.
    inside: tuple[Item, int] | None = None

    def reasoning_text(self) -> str:
        return "".join(joined(parts) for parts in self.reasoning.values())


@dataclass(slots=True, eq=False)
class Lane:
    """One chat choice (Responses and Llama Stack have lane 0 only)."""

    index: int
    role: str = "assistant"
    items: list[Item] = field(default_factory=list)
    tool_calls: dict[int, CollectedCall] = field(default_factory=dict)
    finish: str | None = None  # chat vocabulary, see ir.FINISH_REASONS
    raw_finish: str | None = None  # the source's own word when it differs
    stop_sequence: str | None = None  # the stop sequence matched (see ir.Finish)
    # The finish came after the stream's error (a Responses response.failed): a format
    # whose error ends its stream (chat, Anthropic, Llama Stack) says nothing of it.
    after_error: bool = False
    started: bool = False  # the choice was opened (its role said): a choice, if empty
    reasoning_field: str | None = None  # chat: reasoning_content or reasoning
    # The lane's residue (chat: a choice's own fields, and its deltas'), gathered as
    # chatx.collect.residue says.
    residue: dict[str, Any] = field(default_factory=dict)
    delta: dict[str, Any] = field(default_factory=dict)
    # The residue of the records that said its finish (Anthropic's message_delta: its
    # delta's container and stop_details), the last non-empty value of each field winning.
    finish_extra: dict[str, Any] = field(default_factory=dict)
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
    def calls(self) -> list[CollectedCall]:
        return [self.tool_calls[n] for n in sorted(self.tool_calls)]

    def others(self) -> list[Item]:
        return [i for i in self.items if i.kind == "other"]

    def is_empty(self) -> bool:
        """True when the lane says nothing, not even that it opened: a client's
        accumulator keeps a choice whose first chunk came (a stream that failed before
        its first word), not a lane only a record's residue named."""
        return not self.items and self.finish is None and not self.started
