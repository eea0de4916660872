"""The Anthropic encoder's runs (:class:`~chatx.codecs.template.DeltaRun`): records
that each say more of the open block, written in one loop.

From another format, unless the block the run's kind needs is open already, the run's
first record with text goes the long way (``feed``): it opens that block, takes the
lane, and says whatever note is due. What follows says nothing new to the block, so each record is one
``content_block_delta`` at that block's index, the written-text count
(:class:`~chatx.codecs.anthropic_event.written.Written`) and the lost fields moved as
``feed`` moves them. Anything else (a citation beside the text, an error written, a
held tool call, residue of the encoder's own format) takes ``feed`` record by record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.byte_template import Kept
from chatx.codecs.call_order import CallQueue
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, NullResidue

from .written import Written


@dataclass(slots=True, eq=False)
class AnthropicRuns:
    """The anthropic encoder's loop for runs. ``written`` is the message it shares with
    the content blocks, ``queue`` the tool calls held open, ``feed`` the encoder's, which
    writes a record the long way."""

    written: Written
    notes: Notes
    queue: CallQueue
    lost_meta: MetaReport
    feed: Callable[[list[ir.Event]], list[Any]]  # the encoder's
    # The byte template of the last run's deltas, kept for the runs of the same block.
    kept: Kept = field(default_factory=Kept)

    def encode(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches, notes said at each record's own line."""
        out: list[Any] = []
        texts = run.texts
        count = len(texts)
        k = 0
        if not self.written.own and not self._plain(run):
            # The block the run's kind needs is not open yet (or not at this lane): the
            # first record with text opens it, the long way. A run that goes on in the
            # block open (a read's end cut it, a live stream's records come one by one)
            # is all deltas.
            while k < count:
                k += 1
                self._replay(run, k - 1, k, out)
                if texts[k - 1]:
                    break
        if k < count:
            if self.written.own and self._own_plain(run):
                self._own_loop(run, k, out)
            elif not self.written.own and self._plain(run):
                self._loop(run, k, out)
            else:
                self._replay(run, k, count, out)
        return out

    def _replay(self, run: DeltaRun, start: int, stop: int, out: list[Any]) -> None:
        notes, feed, lines = self.notes, self.feed, run.lines
        for k in range(start, stop):
            notes.line = lines[k]
            out += feed(run.batch(k))

    def _plain(self, run: DeltaRun) -> bool:
        """Whether ``feed`` would write each record of ``run`` as one delta of the open
        block, saying nothing but lost fields."""
        written = self.written
        proto, block = run.proto, written.block
        if (
            proto.extra
            or written.failed
            or self.queue.held is not None
            or written.lane != run.lane
            or block is None
            or not block.started
        ):
            return False
        for meta in run.shared:
            if meta.meaning is not None:
                return False  # a citation: it may close the block
        kind = type(proto)
        if kind is ir.TextDelta:
            return block.kind == "text" and not block.cited
        if kind is ir.ReasoningDelta:
            return block.kind == "thinking" and block.part == proto.part  # type: ignore[union-attr]
        if kind is ir.ToolArgsDelta:
            return block.kind == "tool_use" and block.call == proto.call  # type: ignore[union-attr]
        return False

    def _loop(self, run: DeltaRun, k: int, out: list[Any]) -> None:
        written = self.written
        block = written.block
        assert block is not None  # _plain said so
        texts = run.texts[k:]
        records = len(texts)
        for meta in run.shared:
            if type(meta.extra) is not NullResidue:
                self.lost_meta(meta, records)
        obfuscated = records - run.obfuscations[k:].count(None)
        if obfuscated:
            self.notes.lost_fields["obfuscation"] += obfuscated
        if "" in texts:  # an empty text writes nothing
            texts = [text for text in texts if text]
        index, kind = block.index, type(run.proto)
        if kind is ir.TextDelta:
            written.said += sum(map(len, texts))
            out += self._deltas(index, "text_delta", "text", texts)
        elif kind is ir.ReasoningDelta:
            out += self._deltas(index, "thinking_delta", "thinking", texts)
        else:
            block.args.extend(texts)
            out += self._deltas(index, "input_json_delta", "partial_json", texts)
        self.notes.line = run.lines[-1]

    def _own_plain(self, run: DeltaRun) -> bool:
        """Whether each record of ``run``, from this format's decoder, is the canonical
        delta record with nothing of its own to merge back."""
        return (
            not run.proto.extra
            and run.before is None
            and run.after is None
            and run.tail is None
            and not self.written.delta_due
            and self.queue.held is None
            and type(run.proto) in _OWN
        )

    def _own_loop(self, run: DeltaRun, k: int, out: list[Any]) -> None:
        written = self.written
        block = written.block
        index = block.index if block is not None else written.index - 1
        dtype, field = _OWN[type(run.proto)]
        out += self._deltas(index, dtype, field, run.texts[k:])
        self.notes.line = run.lines[-1]

    def _deltas(self, index: int, dtype: str, field: str, texts: list[str]) -> list[Any]:
        """One ``content_block_delta`` per text, as ``records.block_delta`` writes it: a
        long run's from a byte template of them."""
        return self.kept.records(
            (index, dtype, field), _Delta(index, dtype, field), texts, name=_DELTA
        )


# Each delta kind's content_block_delta type and the field that holds its text.
_OWN = {
    ir.TextDelta: ("text_delta", "text"),
    ir.ReasoningDelta: ("thinking_delta", "thinking"),
    ir.ToolArgsDelta: ("input_json_delta", "partial_json"),
}


_DELTA = "content_block_delta"


class _Delta:
    """A ``content_block_delta`` of a text at the block ``index``."""

    __slots__ = ("field", "index", "kind")

    def __init__(self, index: int, kind: str, field: str) -> None:
        self.index = index
        self.kind = kind
        self.field = field

    def __call__(self, text: str, obfuscation: Any = None, number: Any = None) -> dict[str, Any]:
        return {"type": _DELTA, "index": self.index, "delta": {"type": self.kind, self.field: text}}
