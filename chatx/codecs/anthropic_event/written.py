"""What the anthropic encoder has written that its parts share: the content block
being written (:class:`OpenBlock`) and the message's counts (:class:`Written`), apart
from :mod:`.content` so that :mod:`.citations` and :mod:`.searches`, which it uses, can
name them without importing it back."""

from __future__ import annotations

from dataclasses import dataclass

from chatx.pieces import Pieces


class OpenBlock:
    """The content block being written. A ``thinking`` block is ``started`` only once
    it has something to say."""

    __slots__ = ("index", "kind", "call", "args", "started", "part", "start", "cited")

    def __init__(self, index: int, kind: str, call: int | None = None) -> None:
        self.index = index
        self.kind = kind  # text, thinking, tool_use
        self.call = call
        self.args = Pieces()
        self.started = kind != "thinking"
        self.part: int | None = None  # the reasoning part the thinking came from
        self.start = 0  # where in its message item's text a text block starts
        self.cited = False  # a citation came after its text: the next text is a new block


@dataclass(slots=True)
class Written:
    """What the content blocks of the message being written share with its citations
    and web searches (:mod:`.citations`, :mod:`.searches`)."""

    index: int = 0  # content_block_start events written in this message
    said: int = 0  # characters of the open message item's text written
    cited: bool = False  # a citation was written in the open message item
