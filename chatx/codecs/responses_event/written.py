"""What the Responses encoder and its parts share of the response being written
(:class:`ResponseState`, one slotted state the encoder makes and hands to each part),
the item and part being written (:class:`OpenItem`, :class:`OpenPart`), and the output
stage every payload goes through (:meth:`ResponseState.emit`: own residue merged back,
patches, the sequence number). Apart from the parts, so that :mod:`.citations` and
:mod:`.searches` can name them without importing a part back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from chatx import ir
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.residue import merge, report

from . import shapes
from .settle import Ids, Passing


class Emit(Protocol):
    """The encoder's output stage: ``payload`` (``extra``, its residue, merged or
    reported) numbered and appended to ``out``."""

    def __call__(
        self,
        out: list[dict[str, Any]],
        payload: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None: ...


@dataclass(slots=True)
class OpenPart:
    """A part of the open item: its type (``output_text``, ``refusal``, ``summary_text``
    or ``reasoning_text``), its text so far, its index among the item's content (or
    summary) parts, and the logprobs its deltas carried; another format's citations
    (``cites``: each with where in the text it came), said as ``annotations`` when the
    part closes (:mod:`.citations`)."""

    kind: str
    texts: Pieces
    number: int
    logprobs: list[Any] = field(default_factory=list)
    cites: list[tuple[ir.Citation, int]] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)


class OpenItem:
    """An open output item and the text it has streamed so far (joined once, at done)."""

    __slots__ = (
        "kind",
        "id",
        "index",
        "call",
        "call_id",
        "name",
        "extra",
        "parts",
        "part",
        "args",
        "summary_mode",
        "search",
    )

    def __init__(self, kind: str, iid: str, index: int) -> None:
        self.kind = kind
        self.id = iid
        self.index = index
        self.call: int | None = None
        self.call_id: str | None = None
        self.name: str | None = None
        self.extra: dict[str, Any] = {}
        self.parts: list[OpenPart] = []
        self.part: OpenPart | None = None
        self.args = Pieces()
        self.summary_mode = True
        self.search: Any = None  # a web search item's SearchState (.searches)

    def done(self) -> dict[str, Any]:
        """The item its ``output_item.done`` says, a message or a reasoning item, its
        parts' texts joined."""
        parts = self.parts
        if self.kind == "message":
            return shapes.message_item(self.id, "completed", [message_part(p) for p in parts])
        summary = [shapes.summary_part(p.texts.text()) for p in parts if p.kind == "summary_text"]
        content = [
            shapes.reasoning_text_part(p.texts.text()) for p in parts if p.kind == "reasoning_text"
        ]
        return shapes.reasoning_item(self.id, summary, content)


def message_part(part: OpenPart) -> dict[str, Any]:
    text = part.texts.text()
    if part.kind == "refusal":
        return shapes.refusal_part(text)
    said = shapes.text_part(text, part.logprobs)
    if part.annotations:
        said["annotations"] = list(part.annotations)
    return said


@dataclass(slots=True, eq=False)
class ResponseState:
    """The response being written, as the encoder and its parts share it."""

    notes: Notes
    own: bool  # the source is Responses: its residue is merged back, another's said lost
    active: bool = False  # response.created written, the terminal event not yet
    seq: int = 0  # the next event's sequence_number
    response: dict[str, Any] = field(default_factory=dict)  # the envelope
    output: list[Any] = field(default_factory=list)  # the items closed, in order
    closed: dict[int, Any] = field(default_factory=dict)  # output_index → its done item
    passing: Passing = field(default_factory=Passing)  # own items passed through
    ids: Ids = field(default_factory=Ids)
    item: OpenItem | None = None  # the open item (one at a time)
    next_index: int = 0  # the next item's output_index
    usage: ir.Usage | None = None
    reason: str | None = None  # the finish reason, for the terminal status
    error: dict[str, Any] | None = None  # the error that failed the response
    calls: set[int] = field(default_factory=set)  # tool calls opened
    # Own residue: fields of derived events (done events) the source said otherwise.
    patches: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)

    def restart(self) -> None:
        """A new response begins: nothing written of it yet."""
        self.seq = 0
        self.response = {}
        self.output = []
        self.closed = {}
        self.passing = Passing()
        self.ids = Ids()
        self.item = None
        self.next_index = 0
        self.usage = None
        self.reason = None
        self.error = None
        self.calls = set()
        self.patches = {}

    def emit(
        self,
        out: list[dict[str, Any]],
        payload: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Write ``payload``: ``extra`` (its residue) merged back or said lost, a patch
        for a derived event applied, numbered."""
        if extra:
            if self.own:
                merge(payload, extra)
                self.ids.keep(payload, self.notes)
            else:
                report(extra, self.notes, "")
        if self.patches and payload["type"] in shapes.DERIVED:
            patch = self.patches.pop(shapes.derived_key(payload), None)
            if patch:
                merge(payload, patch)
                self.ids.keep(payload, self.notes)
        payload["sequence_number"] = self.seq
        self.seq += 1
        out.append(payload)
