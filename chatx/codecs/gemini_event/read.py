"""What the Gemini decoder's parts share: the response being read and each candidate's
state."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes

from .grounding_read import Spans


class Streamed:
    """A call whose arguments Vertex streams: its name, id and the arguments so far."""

    __slots__ = ("name", "id", "args", "bad")

    def __init__(self, name: Any, call_id: Any) -> None:
        self.name = name
        self.id = call_id
        self.args: dict[str, Any] = {}
        self.bad = False


class ReadLane:
    """One candidate being read: the IR item open (message or reasoning), its calls, the
    last ``finishReason`` with no content after it, a call whose arguments stream
    (Vertex), whether it called a tool, and its answer text (for citations' spans)."""

    __slots__ = ("item", "calls", "finish", "streamed", "called", "spans")

    def __init__(self) -> None:
        self.item: str | None = None
        self.calls = 0
        self.finish: str | None = None
        self.streamed: Streamed | None = None
        self.called = False
        self.spans = Spans()

    def close(self, lane: int, out: list[ir.Event]) -> None:
        """End the open item."""
        if self.item is not None:
            out.append(ir.ItemEnd(lane, self.item))  # type: ignore[arg-type]
            if self.item == "message":
                self.spans.item_from = -1
            self.item = None

    def open(self, lane: int, kind: str, out: list[ir.Event]) -> None:
        """Open an item of ``kind`` unless one is open."""
        if self.item != kind:
            self.close(lane, out)
            out.append(ir.ItemStart(lane, kind))  # type: ignore[arg-type]
            self.item = kind
            if kind == "message":
                self.spans.item_from = self.spans.texts.size()


class GeminiRead:
    """The response being read: its id, model and time, its candidates, the last usage,
    whether it failed, the line of the chunk being read and its candidates' citations."""

    __slots__ = (
        "notes", "open", "id", "model", "create", "lanes", "usage", "failed", "line", "cited",
    )  # fmt: skip

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.open = False
        self.id = ""
        self.model: str | None = None
        self.create: Any = None
        self.lanes: dict[int, ReadLane] = {}
        self.usage: dict[str, Any] | None = None
        self.failed = False
        self.line = 0
        # The chunk's candidates' citationMetadata (see records.GeminiOwn), said on its Meta.
        self.cited: list[tuple[int, Any]] = []
