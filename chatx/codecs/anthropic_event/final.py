"""What ``collect`` builds from a stream as Anthropic: the ``Message`` object, as the
anthropic SDK's stream accumulator builds it.

It reads an :class:`~chatx.assembler.Assembler`: each item is one content block (a
message's text a ``text`` block, reasoning a ``thinking`` block with its signature, or a
``redacted_thinking`` block when the reasoning was withheld, a tool call a ``tool_use``
block with its input parsed), and the blocks the IR has no words for come back from the
passthrough records that carried them. From an Anthropic stream, the residue of its
``message_start`` (usage details, fields of the message) is merged back. What a message
has no place for is said in ``notes``.
"""

from __future__ import annotations

from typing import Any

import orjson

from chatx.assembler import Assembler, Item, OtherItem
from chatx.notes import Notes
from chatx.residue import copied, merge

from . import records as r
from .encode import message_id

NAME = r.NAME
_WHAT = "an Anthropic message"


def other_item(data: Any) -> OtherItem | None:
    """A content block the IR has no words for (a server tool's call or result), as its
    ``content_block_start`` carries it: kept in output order by ``collect`` and ``show``;
    the ``input_json_delta`` records of a server tool's call stream its input."""
    if type(data) is not dict:
        return None
    kind = data.get("type")
    if kind == "content_block_delta":
        delta = data.get("delta")
        if type(delta) is dict and delta.get("type") == "input_json_delta":
            fragment = delta.get("partial_json")
            if type(fragment) is str:
                return OtherItem(("block", data.get("index")), {}, False, fragment)
        return None
    if kind != "content_block_start":
        return None
    block = data.get("content_block")
    if type(block) is not dict:
        return None
    return OtherItem(("block", data.get("index")), block, False)


def final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The descriptor's ``final``: the message of the one choice (or of ``choice``)."""
    lane = stream.one_lane(choice, _WHAT)
    own = source == NAME
    content: list[dict[str, Any]] = []
    calls = 0
    for item in lane.items:
        block = _block(item, own, notes, stream.id or "", calls)
        calls += item.kind == "tool_call"
        if block is not None:
            content.append(block)
    word = None
    if lane.finish is not None:
        word = r.stop_word(lane.finish, lane.raw_finish)
        if word is None:
            notes.lost(f"finish reason {lane.finish!r} has no Anthropic stop reason: end_turn")
            word = "end_turn"
    message: dict[str, Any] = {
        "id": (stream.id or "") if own else message_id(stream.id or ""),
        "type": "message",
        "role": "assistant",
        "model": stream.model or "",
        "content": content,
        "stop_reason": word,
        "stop_sequence": lane.stop_sequence,
        "usage": _usage(stream, own),
    }
    if own:
        patch = stream.start_extra.get("message")
        if type(patch) is dict:
            # The message's own fields (a container, stop details) and usage details.
            rest = {k: v for k, v in patch.items() if k not in _SAID}
            merge(message, copied(rest))
    if stream.errors:
        notes.lost(f"{len(stream.errors)} error(s) in the stream have no place in a message")
    return message


# message_start fields a finished message says otherwise.
_SAID = frozenset(("content", "stop_reason", "stop_sequence"))


def _usage(stream: Assembler, own: bool) -> dict[str, Any]:
    usage = stream.usage
    if usage is None:
        return {r.INPUT: 0, r.OUTPUT: 0}
    if own:
        return r.usage_record(usage)
    return r.usage_object(usage, False)


def _block(
    item: Item, own: bool, notes: Notes, stream_id: str, calls: int
) -> dict[str, Any] | None:
    if item.kind == "message":
        text, refusal = item.text.text(), item.refusal.text()
        if refusal:
            notes.lost("a refusal is written as text: an Anthropic message has no refusal")
        return {"type": "text", "text": text + refusal}
    if item.kind == "reasoning":
        if item.encrypted is not None and not item.reasoning_text():
            return {"type": "redacted_thinking", "data": item.encrypted}
        return {
            "type": "thinking",
            "thinking": item.reasoning_text(),
            "signature": item.signature or "",
        }
    if item.kind == "tool_call" and item.call is not None:
        call = item.call
        call_id = call.call_id
        if call_id is None:
            base = message_id(stream_id)[4:]
            call_id = f"toolu_{base}_{calls}"
        return {
            "type": "tool_use",
            "id": call_id,
            "name": call.name or "",
            "input": _input(call.arguments, notes),
        }
    if item.format == NAME and type(item.data) is dict:
        block = dict(item.data)
        if item.input is not None and "input" in block:
            # A server tool's call: its input is what its input_json_delta records said,
            # as the SDK's accumulator joins and parses them.
            block["input"] = _input(item.input.text(), notes)
        return block
    kind = item.data.get("type") if type(item.data) is dict else item.kind
    notes.lost(f"{kind} item has no place in an Anthropic message")
    return None


def _input(arguments: str, notes: Notes) -> Any:
    """A call's arguments as the input object the accumulator parses them into."""
    if not arguments.strip():
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        notes.lost("tool call arguments that are not JSON: input {} written")
        return {}
    if type(value) is not dict:
        notes.lost("tool call arguments that are not a JSON object: input {} written")
        return {}
    return value
