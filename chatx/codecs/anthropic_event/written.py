"""What the anthropic encoder and its parts share of the message being written
(:class:`Written`, one slotted state the encoder makes and hands to each part) and the
content block being written (:class:`OpenBlock`), apart from :mod:`.content` so that
:mod:`.citations`, :mod:`.searches` and :mod:`.runs` can name them without importing
it back."""

from __future__ import annotations

from dataclasses import dataclass, field

from chatx import ir
from chatx.codecs.base import first_lane, lost_once
from chatx.notes import Notes
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


# What a message holds, said of a lane left out.
_HOLDS = "an Anthropic message holds one (choose with --choice)"


@dataclass(slots=True, eq=False)
class Written:
    """The message being written, as the encoder and its parts (content blocks, runs,
    citations, web searches, the ending) share it."""

    notes: Notes
    own: bool  # the source is Anthropic: its residue is merged back, another's said lost
    id: str = ""  # the message's id
    open: bool = False  # message_start written, message_stop not yet
    failed: bool = False  # an error event was written: nothing follows it
    block: OpenBlock | None = None  # the content block being written
    index: int = 0  # content_block_start events written in this message
    said: int = 0  # characters of the open message item's text written
    cited: bool = False  # a citation was written in the open message item
    lane: int | None = None  # the one lane written; another is said lost
    started_calls: set[int | None] = field(default_factory=set)  # tool calls opened
    called: bool = False  # a tool call was written (the stop reason without a finish)
    finish: ir.Finish | None = None  # the finish its message_delta says
    usage: ir.Usage | None = None  # the usage its message_delta says
    start_usage: dict[str, int] = field(default_factory=dict)  # own: message_start's counts
    delta_due: bool = False  # own: a message_delta to write at the end of the batch
    delta_written: bool = False  # the message_delta is written
    noted: set[str] = field(default_factory=set)  # losses said once, over every message

    def restart(self, mid: str) -> None:
        """A new message begins (``noted`` stays: a loss is said once per input)."""
        self.id = mid
        self.index = self.said = 0
        self.cited = False
        self.block = None
        self.failed = False
        self.lane = None
        self.started_calls = set()
        self.called = False
        self.finish = self.usage = None
        self.start_usage = {}
        self.delta_due = self.delta_written = False

    def lane_ok(self, lane: int) -> bool:
        """Whether ``lane`` is the message's; another is said lost, once."""
        return lane == self.lane or first_lane(self, lane, _HOLDS)

    def note_once(self, key: str, message: str) -> None:
        lost_once(self, key, message)
