"""Content blocks in the decoder: each one an IR item, or a passthrough item.

See :mod:`.decode` for the residue each record keeps.
"""

from __future__ import annotations

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

NAME = r.NAME


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


class BlockDecoding:
    """The content block half of :class:`~chatx.codecs.anthropic_event.decode.AnthropicDecoder`."""

    notes: Notes
    line: int
    index: int
    calls: int
    block: Block | None
    queries: dict[str, str | None]  # each web search call's query, by its id

    def _implicit(self, out: list[ir.Event]) -> None:  # pragma: no cover - the decoder's
        raise NotImplementedError

    def _block_start(self, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        self._implicit(out)
        if self.block is not None:
            self.notes.repaired(
                f"content block {self.block.index} was not stopped before the next one "
                "started: stopped there"
            )
            self._close_block(out)
        block = data.get("content_block")
        if type(block) is not dict:
            raise InputError(
                "content_block_start needs a content_block object",
                line=self.line,
                expected='{"type": "content_block_start", "index": 0, "content_block": {…}}',
            )
        btype = block.get("type")
        index, self.index = self.index, self.index + 1
        kind = r.BLOCK_KINDS.get(btype) if type(btype) is str else None
        if kind is None:
            state = self.block = Block(index, None)
            item = btype if type(btype) is str else "untyped"
            passed = ir.Passthrough(NAME, data, "content_block_start", self.line, item)
            if btype == searches.RESULT:
                query = self.queries.get(str(block.get("tool_use_id")))
                passed.meaning = searches.result(block, query)
            else:
                passed.meaning = searches.begin(block)
                if passed.meaning is not None:
                    state.search, state.input = passed.meaning.id, Pieces()
                    seed = block.get("input")
                    if type(seed) is dict and seed:  # an input said whole, not streamed
                        state.input.append(orjson.dumps(seed).decode())
            out.append(passed)
            return out
        tilde: dict[str, Any] = {}
        seeded: ir.Event | None = None
        state = self.block = Block(index, kind)
        if kind == "tool_call":
            call = state.call = self.calls
            self.calls += 1
            call_id, name = block.get("id"), block.get("name")
            call_id = call_id if type(call_id) is str else None
            name = name if type(name) is str else None
            start = ir.ItemStart(0, kind, None, call, call_id, name)
            canonical = r.tool_block(call_id, name)
            seed = block.get("input")
            if type(seed) is dict and seed:
                tilde["~seed"] = canonical["input"] = seed
                state.args = True
                seeded = ir.ToolArgsDelta(0, call, orjson.dumps(seed).decode(), {"~seed": 1})
        else:
            start = ir.ItemStart(0, kind)
            if btype == "redacted_thinking":
                data_ = block.get("data")
                tilde["~data"] = data_
                canonical = r.redacted_block(data_)
                state.encrypted = data_ if type(data_) is str else None
            else:
                field = "text" if kind == "message" else "thinking"
                canonical = r.text_block() if kind == "message" else r.thinking_block()
                seed = block.get(field)
                if type(seed) is str and seed:
                    tilde["~seed"] = canonical[field] = seed
                    seeded = (
                        ir.TextDelta(0, seed, None, {"~seed": 1})
                        if kind == "message"
                        else ir.ReasoningDelta(0, seed, "text", 0, {"~seed": 1})
                    )
        start.extra = {**exact_diff(data, r.block_start(index, canonical)), **tilde}
        out.append(start)
        if seeded is not None:
            out.append(seeded)
        return out

    def _delta(self, data: dict[str, Any]) -> list[ir.Event]:
        block = self.block
        if block is None:
            self.notes.warning("content_block_delta with no content block open: kept as it is")
            return [ir.Meta(None, {"~record": data})]
        if block.kind is None:
            delta = data.get("delta")
            if block.input is not None and type(delta) is dict:
                fragment = delta.get("partial_json")
                if type(fragment) is str:
                    block.input.append(fragment)
            return [ir.Passthrough(NAME, data, "content_block_delta", self.line, "")]
        delta = data.get("delta")
        delta = delta if type(delta) is dict else {}
        dtype = delta.get("type")
        if dtype == "text_delta" and block.kind == "message":
            return self._piece(data, block, "text", r.text_delta)
        if dtype == "thinking_delta" and block.kind == "reasoning":
            return self._piece(data, block, "thinking", r.thinking_delta)
        if dtype == "input_json_delta" and block.kind == "tool_call":
            return self._piece(data, block, "partial_json", r.json_delta)
        if dtype == "signature_delta" and block.kind == "reasoning":
            signature = delta.get("signature")
            if type(signature) is str:
                block.signature = (block.signature or "") + signature
            return [ir.Meta(0, {"~record": data})]
        if dtype == "citations_delta":
            cite = citation_of(delta.get("citation")) if block.kind == "message" else None
            return [ir.Meta(0, {"~record": data, "citations": [delta.get("citation")]}, None, cite)]
        # A delta the IR has no words for (compaction_delta), or one of another block's
        # kind: kept for anthropic output, and reported by others under its type.
        rest = {k: v for k, v in delta.items() if k != "type"}
        return [ir.Meta(0, {"~record": data, str(dtype or "delta"): rest or delta})]

    def _piece(self, data: dict[str, Any], block: Block, field: str, make: Any) -> list[ir.Event]:
        delta = data["delta"]
        text = delta.get(field)
        if type(text) is not str or not text:
            return [ir.Meta(0, {"~record": data})]
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

    def _block_stop(self, data: dict[str, Any]) -> list[ir.Event]:
        block = self.block
        if block is None:
            self.notes.warning("content_block_stop with no content block open: kept as it is")
            return [ir.Meta(None, {"~record": data})]
        self.block = None
        if block.kind is None:
            passed = ir.Passthrough(NAME, data, "content_block_stop", self.line, "")
            if block.search is not None and block.input is not None:
                query = self.queries[block.search] = searches.query_of(block.input.text())
                passed.meaning = ir.WebSearch(block.search, "query", query)
            return [passed]
        out: list[ir.Event] = []
        self._end_block(block, exact_diff(data, r.block_stop(block.index)), out)
        return out

    def _close_block(self, out: list[ir.Event], mark: str | None = None) -> None:
        """Close the open block where the source did not (repaired in anthropic output,
        or left as it came with ``mark`` ``~cut``)."""
        block, self.block = self.block, None
        if block is None:
            return
        if block.kind is None:
            if mark is None:
                out.append(
                    ir.Passthrough(
                        NAME, r.block_stop(block.index), "content_block_stop", self.line, ""
                    )
                )
            return
        self._end_block(block, {mark: True} if mark else {}, out)

    def _end_block(self, block: Block, extra: dict[str, Any], out: list[ir.Event]) -> None:
        assert block.kind is not None
        if block.kind == "tool_call" and not block.args:
            # A call without arguments streams none (or only ""): its input is {}.
            out.append(ir.ToolArgsDelta(0, block.call or 0, "{}", {"~empty": True}))
        end = ir.ItemEnd(0, block.kind, block.call, extra)
        end.signature, end.encrypted = block.signature, block.encrypted
        out.append(end)
