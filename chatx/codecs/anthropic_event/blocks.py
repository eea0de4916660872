"""Content blocks in the decoder: each one an IR item, or a passthrough item.

See :mod:`.decode` for the residue each record keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from chatx import ir
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.residue import exact_diff

from . import records as r
from . import searches
from .citations import citation_of
from .read_message import Block, ReadMessage

NAME = r.NAME


class Blocks:
    """The Anthropic decoder's part that reads content blocks: start, deltas and stop,
    into the :class:`~chatx.codecs.anthropic_event.read_message.ReadMessage` it shares
    with the decoder. ``implicit`` is the decoder's: the message read as begun when a
    block comes before any ``message_start``."""

    __slots__ = ("implicit", "notes", "read")

    def __init__(
        self, read: ReadMessage, notes: Notes, implicit: Callable[[list[ir.Event]], None]
    ) -> None:
        self.read = read
        self.notes = notes
        self.implicit = implicit

    def start(self, data: dict[str, Any]) -> list[ir.Event]:
        """``content_block_start``: an IR item opens, or a passthrough item."""
        out: list[ir.Event] = []
        self.implicit(out)
        read = self.read
        if read.block is not None:
            self.notes.repaired(
                f"content block {read.block.index} was not stopped before the next one "
                "started: stopped there"
            )
            self.close(out)
        block = data.get("content_block")
        if type(block) is not dict:
            raise InputError(
                "content_block_start needs a content_block object",
                line=read.line,
                expected='{"type": "content_block_start", "index": 0, "content_block": {…}}',
            )
        btype = block.get("type")
        index, read.index = read.index, read.index + 1
        kind = r.BLOCK_KINDS.get(btype) if type(btype) is str else None
        if kind is None:
            out.append(self._passed_start(data, block, index))
            return out
        state = read.block = Block(index, kind)
        if kind == "tool_call":
            start, canonical, seeded = self._call_start(block, state)
        else:
            start, canonical, seeded = _content_start(block, state)
        start.extra = exact_diff(data, r.block_start(index, canonical))
        out.append(start)
        if seeded is not None:
            out.append(seeded)
        return out

    def _passed_start(self, data: dict[str, Any], block: dict[str, Any], index: int) -> ir.Event:
        """The start of a block the IR has no item for (a server tool's): it passes
        through, with what it means for a web search."""
        btype = block.get("type")
        state = self.read.block = Block(index, None)
        item = btype if type(btype) is str else "untyped"
        passed = ir.Passthrough(NAME, data, "content_block_start", self.read.line, item)
        if btype == searches.RESULT:
            query = self.read.queries.get(str(block.get("tool_use_id")))
            passed.meaning = searches.result(block, query)
            return passed
        passed.meaning = searches.begin(block)
        if passed.meaning is not None:
            state.search, state.input = passed.meaning.id, Pieces()
            seed = block.get("input")
            if type(seed) is dict and seed:  # an input said whole, not streamed
                state.input.append(orjson.dumps(seed).decode())
        return passed

    def _call_start(self, block: dict[str, Any], state: Block) -> _Opened:
        """A ``tool_use`` block's start: the call numbered, its input said when the
        block holds it already (its note's ``seed``)."""
        read = self.read
        call = state.call = read.calls
        read.calls += 1
        call_id, name = block.get("id"), block.get("name")
        call_id = call_id if type(call_id) is str else None
        name = name if type(name) is str else None
        start = ir.ItemStart(0, "tool_call", None, call, call_id, name)
        canonical = r.tool_block(call_id, name)
        seed = block.get("input")
        if type(seed) is dict and seed:
            state.args = True
            canonical["input"] = seed
            start.own = r.AnthropicOwn(seed=seed)
            seeded = ir.ToolArgsDelta(0, call, orjson.dumps(seed).decode(), {}, None, r.AGAIN)
            return start, canonical, seeded
        return start, canonical, None

    def delta(self, data: dict[str, Any]) -> list[ir.Event]:
        """``content_block_delta``: more of the open block's content, or a record the IR
        keeps as residue (a signature, a citation, a delta it has no words for)."""
        block = self.read.block
        if block is None:
            self.notes.warning("content_block_delta with no content block open: kept as it is")
            return [kept(data)]
        delta = data.get("delta")
        if block.kind is None:
            return [self._passed_delta(data, delta, block)]
        delta = delta if type(delta) is dict else {}
        dtype = delta.get("type")
        # Nearly every record of a stream: an if chain costs less than a table here.
        if dtype == "text_delta" and block.kind == "message":
            return self._piece(data, block, "text", r.text_delta)
        if dtype == "thinking_delta" and block.kind == "reasoning":
            return self._piece(data, block, "thinking", r.thinking_delta)
        if dtype == "input_json_delta" and block.kind == "tool_call":
            return self._piece(data, block, "partial_json", r.json_delta)
        return [_residue(data, delta, dtype, block)]

    def _passed_delta(self, data: dict[str, Any], delta: Any, block: Block) -> ir.Event:
        """A delta of a block that passes through; a web search's input streams in it."""
        if block.input is not None and type(delta) is dict:
            fragment = delta.get("partial_json")
            if type(fragment) is str:
                block.input.append(fragment)
        return ir.Passthrough(NAME, data, "content_block_delta", self.read.line, "")

    def _piece(self, data: dict[str, Any], block: Block, field: str, make: Any) -> list[ir.Event]:
        delta = data["delta"]
        text = delta.get(field)
        if type(text) is not str or not text:
            return [kept(data, 0)]
        if len(data) == 3 and len(delta) == 2 and data.get("index") == block.index:
            # The canonical record (type, index, delta of type and text): nearly every
            # delta of a stream, so it is told without building and diffing it.
            patch: dict[str, Any] = {} if type(data["index"]) is int else {"index": data["index"]}
        else:
            patch = exact_diff(data, r.block_delta(block.index, make(text)))
        if block.kind == "message":
            return [ir.TextDelta(0, text, None, patch)]
        if block.kind == "reasoning":
            return [ir.ReasoningDelta(0, text, "text", 0, patch)]
        block.args = True
        return [ir.ToolArgsDelta(0, block.call or 0, text, patch)]

    def stop(self, data: dict[str, Any]) -> list[ir.Event]:
        """``content_block_stop``: the open block's item ends."""
        read = self.read
        block = read.block
        if block is None:
            self.notes.warning("content_block_stop with no content block open: kept as it is")
            return [kept(data)]
        read.block = None
        if block.kind is None:
            passed = ir.Passthrough(NAME, data, "content_block_stop", read.line, "")
            if block.search is not None and block.input is not None:
                query = read.queries[block.search] = searches.query_of(block.input.text())
                passed.meaning = ir.WebSearch(block.search, "query", query)
            return [passed]
        out: list[ir.Event] = []
        self._end_block(block, exact_diff(data, r.block_stop(block.index)), out)
        return out

    def close(self, out: list[ir.Event], cut: bool = False) -> None:
        """Close the open block where the source did not (repaired in anthropic output,
        or left as it came when the input ``cut`` it)."""
        read = self.read
        block, read.block = read.block, None
        if block is None:
            return
        if block.kind is None:
            if not cut:
                out.append(
                    ir.Passthrough(
                        NAME, r.block_stop(block.index), "content_block_stop", read.line, ""
                    )
                )
            return
        self._end_block(block, {}, out, r.CUT if cut else None)

    def _end_block(
        self,
        block: Block,
        extra: dict[str, Any],
        out: list[ir.Event],
        own: r.AnthropicOwn | None = None,
    ) -> None:
        assert block.kind is not None
        if block.kind == "tool_call" and not block.args:
            # A call without arguments streams none (or only ""): its input is {}.
            out.append(ir.ToolArgsDelta(0, block.call or 0, "{}", {}, None, r.AGAIN))
        end = ir.ItemEnd(0, block.kind, block.call, extra, None, None, own)
        end.signature, end.encrypted = block.signature, block.encrypted
        out.append(end)


# What opens an IR item: its start (its own note says the content the block holds
# already), the canonical block and the delta of that content.
_Opened = tuple[ir.ItemStart, dict[str, Any], ir.Event | None]


def _content_start(block: dict[str, Any], state: Block) -> _Opened:
    """A text, thinking or redacted thinking block's start; the text or thinking it
    holds already is said (its note's ``seed``), the redacted data kept (``data``)."""
    kind = state.kind
    assert kind is not None
    start = ir.ItemStart(0, kind)
    if block.get("type") == "redacted_thinking":
        data = block.get("data")
        state.encrypted = data if type(data) is str else None
        start.own = r.AnthropicOwn(redacted=True, data=data)
        return start, r.redacted_block(data), None
    field = "text" if kind == "message" else "thinking"
    canonical = r.text_block() if kind == "message" else r.thinking_block()
    seed = block.get(field)
    if type(seed) is not str or not seed:
        return start, canonical, None
    canonical[field] = seed
    start.own = r.AnthropicOwn(seed=seed)
    seeded = (
        ir.TextDelta(0, seed, None, {}, None, r.AGAIN)
        if kind == "message"
        else ir.ReasoningDelta(0, seed, "text", 0, {}, None, None, r.AGAIN)
    )
    return start, canonical, seeded


def _residue(data: dict[str, Any], delta: dict[str, Any], dtype: Any, block: Block) -> ir.Meta:
    """A delta that says no more content of ``block``: a signature (it closes a
    thinking block), a citation, or a delta the IR has no words for (compaction_delta),
    or one of another block's kind, kept for anthropic output and reported by others
    under its type."""
    if dtype == "signature_delta" and block.kind == "reasoning":
        signature = delta.get("signature")
        if type(signature) is str:
            block.signature = (block.signature or "") + signature
        return kept(data, 0)
    own = r.AnthropicOwn(record=data)
    if dtype == "citations_delta":
        cite = citation_of(delta.get("citation")) if block.kind == "message" else None
        return ir.Meta(0, {"citations": [delta.get("citation")]}, None, cite, own)
    rest = {k: v for k, v in delta.items() if k != "type"}
    return ir.Meta(0, {str(dtype or "delta"): rest or delta}, None, None, own)


def kept(data: dict[str, Any], lane: int | None = None) -> ir.Meta:
    """A record the IR has no words for, kept whole for anthropic output (its note's
    ``record``); other formats hear nothing of it."""
    return ir.Meta(lane, {}, None, None, r.AnthropicOwn(record=data))
