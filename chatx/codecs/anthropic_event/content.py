"""Content blocks in the encoder: opened one at a time, their deltas, and their stops.

A ``thinking`` block opens once it has something to say (its first text, or the token
that closes it); a tool call's block stays open past its ``ItemEnd`` while its arguments
may still grow (:mod:`chatx.codecs.call_order`).
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.call_order import CallQueue
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .citations import Citations
from .written import OpenBlock, Written

# IR events the encoder of this format does not write again (see the decoder).
_SKIP = ("~prefill", "~seed", "~empty")


class ContentEncoding:
    """The content block half of :class:`~chatx.codecs.anthropic_event.encode.AnthropicEncoder`."""

    notes: Notes
    own: bool
    id: str
    written: Written
    citations: Citations
    queue: CallQueue
    block: OpenBlock | None
    lane: int | None
    noted: set[str]
    started_calls: set[int | None]
    called: bool

    def _item_start(self, event: ir.ItemStart, out: list[Any]) -> None:
        extra = event.extra
        if self.own:
            if "~prefill" in extra:
                return
            if event.kind == "message":
                block = r.text_block()
            elif event.kind == "reasoning":
                block = r.redacted_block(extra["~data"]) if "~data" in extra else r.thinking_block()
            else:
                block = r.tool_block(event.call_id, event.name)
            if "~seed" in extra:
                block[{"message": "text", "reasoning": "thinking"}.get(event.kind, "input")] = (
                    extra["~seed"]
                )
            self._open(event.kind, event.call, out, block, extra)
            return
        if not self._lane_ok(event.lane):
            return
        if extra:
            report(extra, self.notes, "item.")
        if event.kind == "message":
            self.written.said, self.written.cited = 0, False
            self._open_text(out)
        elif event.kind == "reasoning":
            self._close_block(out)
            self.block = OpenBlock(self.written.index, "thinking")
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
        self._close_block(out)
        written = self.written
        name = {"message": "text", "reasoning": "thinking", "tool_call": "tool_use"}[kind]
        opened = self.block = OpenBlock(written.index, name, call)
        opened.started = True
        opened.start = written.said
        record = r.block_start(written.index, block)
        out.append(self._merged(record, extra) if extra else record)
        written.index += 1
        return opened

    def _open_text(self, out: list[Any]) -> OpenBlock:
        """A text block, the one open closed."""
        return self._open("message", None, out, r.text_block())

    def _open_call(
        self, call: int | None, call_id: str | None, name: str | None, out: list[Any]
    ) -> OpenBlock:
        self.called = True
        self.started_calls.add(call)
        if call_id is None:
            base = self.id[4:] if self.id.startswith("msg_") else self.id
            call_id = f"toolu_{base}_{len(self.started_calls) - 1}"
        if name is None:
            self.notes.repaired("a tool call without a name: name '' written")
        return self._open("tool_call", call, out, r.tool_block(call_id, name or ""))

    def _item_end(self, event: ir.ItemEnd, out: list[Any]) -> None:
        if self.own:
            self._own_item_end(event.extra, out)
            return
        if not self._lane_ok(event.lane):
            return
        if event.extra:
            extra = (
                self.citations.end_extra(event.extra) if event.kind == "message" else event.extra
            )
            report(extra, self.notes, "item.")
        block = self.block
        if event.kind == "tool_call":
            mine = block is not None and block.kind == "tool_use" and block.call == event.call
            if mine and not self.queue.defer(event.call):
                self._close_block(out)
            return
        if event.kind == "reasoning" and block is not None and block.kind == "thinking":
            self._close_thinking(block, event, out)
        elif event.kind == "message" and block is not None and block.kind == "text":
            self._close_block(out)

    def _own_item_end(self, extra: dict[str, Any], out: list[Any]) -> None:
        if "~prefill" in extra:
            return
        if "~cut" in extra:
            return  # the input ended in the block: it stays open (--finish closes it)
        block, self.block = self.block, None
        index = block.index if block is not None else self.written.index - 1
        out.append(self._merged(r.block_stop(index), extra))

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
        self._close_block(out)

    def _close_block(self, out: list[Any]) -> None:
        block, self.block = self.block, None
        if block is not None and block.started:
            out.append(r.block_stop(block.index))

    def _start_thinking(self, block: OpenBlock, out: list[Any]) -> None:
        block.started = True
        out.append(r.block_start(block.index, r.thinking_block()))
        self.written.index += 1

    # --- deltas ---------------------------------------------------------------------------

    def _text(self, event: ir.TextDelta, out: list[Any]) -> None:
        if self.own:
            if not _skipped(event.extra):
                self._own_delta_record(r.text_delta(event.text), event.extra, out)
            return
        if not self._lane_ok(event.lane):
            return
        self._foreign_text(event.text, event.logprobs, out)
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if event.extra:
            report(event.extra, self.notes, "delta.")

    def _refusal(self, event: ir.RefusalDelta, out: list[Any]) -> None:
        if not self._lane_ok(event.lane):
            return
        self._note_once(
            "refusal", "a refusal is written as message text: Anthropic messages have no refusal"
        )
        self._foreign_text(event.text, event.logprobs, out)
        if event.extra:
            report(event.extra, self.notes, "refusal.")

    def _foreign_text(self, text: str, logprobs: Any, out: list[Any]) -> None:
        if logprobs:
            self.notes.lost_field("logprobs")
        if not text:
            return
        block = self.block
        if block is None or block.kind != "text" or block.cited:
            block = self._open_text(out)
        self.written.said += len(text)
        out.append(r.block_delta(block.index, r.text_delta(text)))

    def _reasoning(self, event: ir.ReasoningDelta, out: list[Any]) -> None:
        if self.own:
            if not _skipped(event.extra):
                self._own_delta_record(r.thinking_delta(event.text), event.extra, out)
            return
        if not self._lane_ok(event.lane):
            return
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if event.extra:
            report(event.extra, self.notes, "reasoning.")
        if not event.text:
            return
        block = self.block
        if block is None or block.kind != "thinking":
            self._close_block(out)
            block = self.block = OpenBlock(self.written.index, "thinking")
        if not block.started:
            self._start_thinking(block, out)
        if block.part is not None and block.part != event.part:
            self._note_once(
                "parts", "reasoning parts are joined in one thinking block: their bounds are lost"
            )
        block.part = event.part
        out.append(r.block_delta(block.index, r.thinking_delta(event.text)))

    def _args(self, event: ir.ToolArgsDelta, out: list[Any]) -> None:
        if self.own:
            if not _skipped(event.extra):
                self._own_delta_record(r.json_delta(event.fragment), event.extra, out)
            return
        if not self._lane_ok(event.lane):
            return
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if event.extra:
            report(event.extra, self.notes, "tool_call.")
        block = self.block
        if block is None or block.kind != "tool_use" or block.call != event.call:
            if event.call in self.started_calls:
                self.notes.lost("an argument fragment came after its tool call was written")
                return
            self.notes.repaired(f"arguments for tool call {event.call} before its start")
            block = self._open_call(event.call, None, "", out)
        if event.fragment:
            block.args.append(event.fragment)
            out.append(r.block_delta(block.index, r.json_delta(event.fragment)))

    def _own_delta_record(
        self, delta: dict[str, Any], extra: dict[str, Any], out: list[Any]
    ) -> None:
        index = self.block.index if self.block is not None else self.written.index - 1
        out.append(self._merged(r.block_delta(index, delta), extra))

    # --- the call queue's hooks (chatx.codecs.call_order) -------------------------------

    def _call_text(self, call: int | None) -> str | None:
        block = self.block
        if block is None or block.kind != "tool_use" or block.call != call:
            return None
        return block.args.text()

    def _end_call_now(self, call: int | None, out: list[Any]) -> None:
        self._close_block(out)

    # --- helpers ------------------------------------------------------------------------

    def _merged(self, record: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
        """Own residue: the source record's difference from ``record``, merged in."""
        if extra:
            patch = {k: v for k, v in extra.items() if k[:1] != "~"}
            if patch:
                merge(record, patch)
        return record

    def _lane_ok(self, lane: int) -> bool:
        if self.lane is None:
            self.lane = lane
        if lane == self.lane:
            return True
        self._note_once(
            f"lane {lane}",
            f"choice {lane} left out: an Anthropic message holds one (choose with --choice)",
        )
        return False

    def _note_once(self, key: str, message: str) -> None:
        if key not in self.noted:
            self.noted.add(key)
            self.notes.lost(message)


def _skipped(extra: dict[str, Any]) -> bool:
    """An event this codec's decoder made for other formats only."""
    return bool(extra) and any(key in extra for key in _SKIP)
