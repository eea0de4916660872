"""What the Llama Stack encoder and its parts share of the generation being written
(:class:`Generation`): one slotted state, made by the encoder and handed to each part.

A Llama Stack stream is one generation: one lane, its text and tool calls, one stop
reason and one ``complete`` event. The state also says the losses that are said once
(a second lane, a refusal written as text) and puts this codec's own residue back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.base import first_lane, lost_once
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .special_tokens import TokenScanner

LS = r.LS


class OpenCall:
    """A tool call written as ``started`` and its fragments so far."""

    __slots__ = ("id", "name", "fragments")

    def __init__(self, call_id: str, name: str | None) -> None:
        self.id = call_id
        self.name = name
        self.fragments: list[str] = []


# What a stream holds, said of a lane left out.
_HOLDS = "Llama Stack events hold one choice (choose one with --choice)"


@dataclass(slots=True, eq=False)
class Generation:
    """The generation being written, as the encoder and its parts share it."""

    notes: Notes
    own: bool  # the source is Llama Stack: its residue is put back, another's said lost
    open: bool = False  # a stream started and not yet ended
    batch: list[ir.Event] = field(default_factory=list)  # the batch being encoded
    noted: set[str] = field(default_factory=set)  # losses said once, over every stream
    id: str = ""
    lane: int | None = None  # the one lane written; another is said lost
    stop: str | None = None  # from Finish
    token_stop: str | None = None  # from <|eot_id|> / <|eom_id|>
    reason: str | None = None  # the IR finish reason
    usage: ir.Usage | None = None
    calls: dict[int | None, OpenCall] = field(default_factory=dict)  # started, not ended
    count: int = 0  # calls written, for derived call ids
    raw: list[str] = field(default_factory=list)  # in_progress fragments since the last started
    scanner: TokenScanner = field(default_factory=TokenScanner)
    python: list[str] | None = None  # the text after <|python_tag|>
    logprobs: list[Any] | None = None  # of text the scanner still holds
    failed: bool = False  # an error frame was written
    completed: bool = False  # the complete event was written

    def restart(self, stream: str) -> None:
        """A new generation begins (``noted`` stays: a loss is said once per input)."""
        self.id = stream
        self.lane = None
        self.stop = self.token_stop = self.reason = None
        self.usage = None
        self.calls = {}
        self.count = 0
        self.raw = []
        self.scanner = TokenScanner()
        self.python = None
        self.logprobs = None
        self.failed = self.completed = False

    def stop_word(self) -> str | None:
        """The stop reason a record that ends the generation says."""
        return self.token_stop or self.stop

    def said_ending(self) -> bool:
        """Whether the source says how the generation ended (a finish reason, usage)."""
        return self.usage is not None or self.reason not in (None, "error")

    def residue(
        self, extra: dict[str, Any], prefix: str, own: ir.Own | None = None
    ) -> dict[str, Any]:
        """This codec's residue from ``extra`` (the stop reason ``own`` carries taken);
        from another format, ``extra`` is reported lost and nothing is put back."""
        if self.own:
            self.record_stop(own)
            return extra.get(LS, {})
        if extra:
            report(extra, self.notes, prefix)
        return {}

    def record_stop(self, own: ir.Own | None) -> None:
        """Own note: a tool record whose ``Finish`` the decoder said later carries its
        stop reason all the same (``stop``), as do the records after it."""
        if type(own) is r.LlamaStackOwn and own.stop is not None:
            self.stop = own.stop

    def lane_ok(self, lane: int) -> bool:
        """Whether ``lane`` is the generation's; another is said lost, once."""
        return lane == self.lane or first_lane(self, lane, _HOLDS)

    def note_once(self, key: str, message: str) -> None:
        lost_once(self, key, message)


def patch(out: list[Any], ls: dict[str, Any]) -> None:
    """Apply own residue to the record just written."""
    if not ls or not out or not isinstance(out[-1], dict):
        return
    if "patch" in ls:
        merge(out[-1], ls["patch"])
