"""What the Responses decoder and its parts share of the response being read
(:class:`ReadResponse`, one slotted state the decoder makes and hands to each part) and
of each output item (:class:`ItemState`, :class:`PartState`), apart from the parts so
that each can name them without importing another."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.pieces import Pieces

NAME = "responses-event"


@dataclass(slots=True)
class PartState:
    """What the decoder keeps of one part of an item: its text and its logprobs."""

    texts: Pieces = field(default_factory=Pieces)
    logprobs: list[Any] = field(default_factory=list)


class ItemState:
    """What the decoder knows of one output item while it streams."""

    __slots__ = ("kind", "id", "call", "call_id", "name", "parts", "args", "seen", "done", "kept")

    def __init__(self, kind: str, iid: str) -> None:
        self.kind = kind
        self.id = iid
        self.call: int | None = None
        self.call_id: str | None = None
        self.name: str | None = None
        # (family, index as the events say it) → the part's text and logprobs
        self.parts: dict[tuple[str, Any], PartState] = {}
        self.args = Pieces()
        self.seen: set[str] = set()  # derived event types the source sent for this item
        self.done = False
        self.kept = False  # a done event's text differed from the deltas, which were kept


class ReadResponse:
    """The response being read, as the decoder and its parts (items, deltas) share it.
    :meth:`reset` gives every container a new one: an event said of the last stream may
    still hold the old (the terminal event's patch holds ``output``)."""

    __slots__ = (
        "notes",
        "started",
        "ended",
        "items",
        "unfinished",
        "calls",
        "output",
        "opening",
        "usage",
        "error",
        "expected_seq",
        "renumbered",
        "noted",
    )

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.reset()

    def reset(self) -> None:
        """A new stream."""
        self.started = False  # response.created (or what stands for it) was read
        self.ended = False  # its terminal event was read
        self.items: dict[Any, ItemState] = {}  # by output_index
        # The output_index of each item in ``items`` not done yet: no scan of every item
        # each time one is added (a stream of thousands of calls).
        self.unfinished: set[Any] = set()
        self.calls = 0  # function calls added
        self.output: list[Any] = []  # the done items, for the terminal event's response
        self.opening: dict[str, Any] = {}  # the response object the stream opened with
        self.usage: ir.Usage | None = None
        self.error: dict[str, Any] | None = None  # an error event's, for the terminal one
        self.expected_seq: int | None = None  # the sequence_number due next
        self.renumbered = False  # a sequence_number out of order was said
        self.noted: set[str] = set()  # repairs said in this stream

    def repaired(self, message: str) -> None:
        """Say a repair once per stream, not once per event."""
        if message not in self.noted:
            self.noted.add(message)
            self.notes.repaired(message)
