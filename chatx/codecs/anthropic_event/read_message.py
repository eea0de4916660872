"""What the Anthropic decoder and its parts share of the message being read
(:class:`ReadMessage`, one slotted state the decoder makes and hands to each part) and
of the content block open in it (:class:`Block`)."""

from __future__ import annotations

from chatx import ir
from chatx.pieces import Pieces


class Block:
    """The content block open in the decoder. ``kind`` is None for a block that passes
    through (a server tool's, or one the IR has no words for)."""

    __slots__ = ("index", "kind", "call", "args", "signature", "encrypted", "search", "input")

    def __init__(self, index: int, kind: ir.ItemKind | None, call: int | None = None) -> None:
        self.index = index
        self.kind = kind
        self.call = call
        self.args = False  # a non-empty argument fragment came
        self.signature: str | None = None
        self.encrypted: str | None = None
        self.search: str | None = None  # a web search call's id (see .searches)
        self.input: Pieces | None = None  # that call's input as its deltas stream it


class ReadMessage:
    """The message being read, as the decoder and its part that reads content blocks
    share it, and the input line of the record read last (a run moves it on)."""

    __slots__ = ("line", "open", "index", "block", "calls", "queries", "start", "counted")

    def __init__(self) -> None:
        self.line = 0
        self.restart()

    def restart(self) -> None:
        """No message is open; the next starts afresh."""
        self.open = False  # a message started and has not stopped
        self.index = 0  # content_block_start records in this message
        self.block: Block | None = None
        self.calls = 0
        self.queries: dict[str, str | None] = {}  # each web search call's query, by its id
        self.start: dict[str, int] = {}  # message_start's usage counts
        self.counted = False  # a Usage was said for this message
