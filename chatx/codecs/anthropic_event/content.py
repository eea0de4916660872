"""Content blocks in the encoder: opened one at a time, their deltas, and their stops.

A ``thinking`` block opens once it has something to say (its first text, or the token
that closes it); a tool call's block stays open past its ``ItemEnd`` while its arguments
may still grow (:mod:`chatx.codecs.call_order`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.base import refusal_as_text
from chatx.codecs.call_order import CallQueue
from chatx.codecs.cited import without_cited_parts
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .written import OpenBlock, Written


@dataclass(slots=True, eq=False)
class Content:
    """Writes the message's content blocks and their deltas. ``step`` is the encoder's,
    for the queue of tool calls held open (:attr:`queue`)."""

    written: Written
    notes: Notes
    step: Callable[[ir.Event, list[Any]], None]  # the encoder's, for the queue
    queue: CallQueue = field(init=False)

    def __post_init__(self) -> None:
        self.queue = CallQueue(self.step, self.call_text, self.end_call_now)

    def item_start(self, event: ir.ItemStart, out: list[Any]) -> None:
        extra = event.extra
        if self.written.own:
            own = r.own_of(event)
            if own.prefill:
                return
            if event.kind == "message":
                block = r.text_block()
            elif event.kind == "reasoning":
                block = r.redacted_block(own.data) if own.redacted else r.thinking_block()
            else:
                block = r.tool_block(event.call_id, event.name)
            if own.seed is not None:
                block[{"message": "text", "reasoning": "thinking"}.get(event.kind, "input")] = (
                    own.seed
                )
            self._open(event.kind, event.call, out, block, extra)
            return
        written = self.written
        if not written.lane_ok(event.lane):
            return
        if extra:
            report(extra, self.notes, "item.")
        if event.kind == "message":
            written.said, written.cited = 0, False
            self.open_text(out)
        elif event.kind == "reasoning":
            self.close_block(out)
            written.block = OpenBlock(written.index, "thinking")
        else:
            self._open_call(event.call, event.call_id, event.name, out)

    def _open(
        self,
        kind: str,
        call: int | None,
        out: list[Any],
        block: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> OpenBlock:
        self.close_block(out)
        written = self.written
        name = {"message": "text", "reasoning": "thinking", "tool_call": "tool_use"}[kind]
        opened = written.block = OpenBlock(written.index, name, call)
        opened.started = True
        opened.start = written.said
        record = r.block_start(written.index, block)
        out.append(merged(record, extra) if extra else record)
        written.index += 1
        return opened

    def open_text(self, out: list[Any]) -> OpenBlock:
        """A text block, the one open closed."""
        return self._open("message", None, out, r.text_block())

    def _open_call(
        self, call: int | None, call_id: str | None, name: str | None, out: list[Any]
    ) -> OpenBlock:
        written = self.written
        written.called = True
        written.started_calls.add(call)
        if call_id is None:
            mid = written.id
            base = mid[4:] if mid.startswith("msg_") else mid
            call_id = f"toolu_{base}_{len(written.started_calls) - 1}"
        if name is None:
            self.notes.repaired("a tool call without a name: name '' written")
        return self._open("tool_call", call, out, r.tool_block(call_id, name or ""))

    def item_end(self, event: ir.ItemEnd, out: list[Any]) -> None:
        if self.written.own:
            self._own_item_end(event, out)
            return
        written = self.written
        if not written.lane_ok(event.lane):
            return
        if event.extra:
            extra = event.extra
            if event.kind == "message" and written.cited:
                extra = without_cited_parts(extra)  # the annotations its citations said
            report(extra, self.notes, "item.")
        block = written.block
        if event.kind == "tool_call":
            mine = block is not None and block.kind == "tool_use" and block.call == event.call
            if mine and not self.queue.defer(event.call):
                self.close_block(out)
            return
        if event.kind == "reasoning" and block is not None and block.kind == "thinking":
            self._close_thinking(block, event, out)
        elif event.kind == "message" and block is not None and block.kind == "text":
            self.close_block(out)

    def _own_item_end(self, event: ir.ItemEnd, out: list[Any]) -> None:
        own = r.own_of(event)
        if own.prefill:
            return
        if own.cut:
            return  # the input ended in the block: it stays open (--finish closes it)
        written = self.written
        block, written.block = written.block, None
        index = block.index if block is not None else written.index - 1
        out.append(merged(r.block_stop(index), event.extra))

    def _close_thinking(self, block: OpenBlock, event: ir.ItemEnd, out: list[Any]) -> None:
        """A thinking block ends with its signature; reasoning withheld, nothing shown,
        is a redacted_thinking block."""
        encrypted, signature = event.encrypted, event.signature
        if not block.started and encrypted is not None:
            # Reasoning withheld, nothing shown: what redacted_thinking says.
            block.started = True
            out.append(r.block_start(block.index, r.redacted_block(encrypted)))
            self.written.index += 1
            encrypted = None
            if signature is not None:
                self.notes.lost_field("reasoning.signature")
                signature = None
        if not block.started and signature is not None:
            self._start_thinking(block, out)
        if signature is not None:
            out.append(r.block_delta(block.index, r.signature_delta(signature)))
        if encrypted is not None:
            self.notes.lost_field("reasoning.encrypted_content")
        self.close_block(out)

    def close_block(self, out: list[Any]) -> None:
        """The open block's ``content_block_stop``, when it was started."""
        written = self.written
        block, written.block = written.block, None
        if block is not None and block.started:
            out.append(r.block_stop(block.index))

    def _start_thinking(self, block: OpenBlock, out: list[Any]) -> None:
        block.started = True
        out.append(r.block_start(block.index, r.thinking_block()))
        self.written.index += 1

    # --- deltas ---------------------------------------------------------------------------

    def text(self, event: ir.TextDelta, out: list[Any]) -> None:
        if self.written.own:
            if event.own is not r.AGAIN:
                self._own_delta(r.text_delta(event.text), event.extra, out)
            return
        if not self.written.lane_ok(event.lane):
            return
        self._foreign_text(event.text, event.logprobs, out)
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if event.extra:
            report(event.extra, self.notes, "delta.")

    def refusal(self, event: ir.RefusalDelta, out: list[Any]) -> None:
        if not refusal_as_text(self.written, event.lane, "Anthropic messages have no refusal"):
            return
        self._foreign_text(event.text, event.logprobs, out)
        if event.extra:
            report(event.extra, self.notes, "refusal.")

    def _foreign_text(self, text: str, logprobs: Any, out: list[Any]) -> None:
        if logprobs:
            self.notes.lost_field("logprobs")
        if not text:
            return
        written = self.written
        block = written.block
        if block is None or block.kind != "text" or block.cited:
            block = self.open_text(out)
        written.said += len(text)
        out.append(r.block_delta(block.index, r.text_delta(text)))

    def reasoning(self, event: ir.ReasoningDelta, out: list[Any]) -> None:
        if not self._takes(event, r.thinking_delta, event.text, "reasoning.", out):
            return
        written = self.written
        if not event.text:
            return
        block = written.block
        if block is None or block.kind != "thinking":
            self.close_block(out)
            block = written.block = OpenBlock(written.index, "thinking")
        if not block.started:
            self._start_thinking(block, out)
        if block.part is not None and block.part != event.part:
            written.note_once(
                "parts", "reasoning parts are joined in one thinking block: their bounds are lost"
            )
        block.part = event.part
        out.append(r.block_delta(block.index, r.thinking_delta(event.text)))

    def args(self, event: ir.ToolArgsDelta, out: list[Any]) -> None:
        if not self._takes(event, r.json_delta, event.fragment, "tool_call.", out):
            return
        written = self.written
        block = written.block
        if block is None or block.kind != "tool_use" or block.call != event.call:
            if event.call in written.started_calls:
                self.notes.lost("an argument fragment came after its tool call was written")
                return
            self.notes.repaired(f"arguments for tool call {event.call} before its start")
            block = self._open_call(event.call, None, "", out)
        if event.fragment:
            block.args.append(event.fragment)
            out.append(r.block_delta(block.index, r.json_delta(event.fragment)))

    def _takes(
        self,
        event: ir.ReasoningDelta | ir.ToolArgsDelta,
        delta: Callable[[str], dict[str, Any]],
        value: str,
        where: str,
        out: list[Any],
    ) -> bool:
        """Whether ``event`` goes on to be written into its block: an Anthropic source's
        own delta is written as it came (``delta(value)``, once) and one of a lane not
        written is dropped; of another format's, its obfuscation and the fields it had
        besides (at ``where``) are said lost."""
        if self.written.own:
            if event.own is not r.AGAIN:
                self._own_delta(delta(value), event.extra, out)
            return False
        if not self.written.lane_ok(event.lane):
            return False
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if event.extra:
            report(event.extra, self.notes, where)
        return True

    def _own_delta(self, delta: dict[str, Any], extra: dict[str, Any], out: list[Any]) -> None:
        written = self.written
        index = written.block.index if written.block is not None else written.index - 1
        out.append(merged(r.block_delta(index, delta), extra))

    # --- the call queue's hooks (chatx.codecs.call_order) -------------------------------

    def call_text(self, call: int | None) -> str | None:
        """The arguments so far of call ``call`` when its block is open (for the queue)."""
        block = self.written.block
        if block is None or block.kind != "tool_use" or block.call != call:
            return None
        return block.args.text()

    def end_call_now(self, call: int | None, out: list[Any]) -> None:
        self.close_block(out)


def merged(record: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """Own residue: the source record's difference from ``record``, merged in."""
    if extra:
        merge(record, extra)
    return record
