"""Hand-made Anthropic Messages streams: the events of one message, block by block."""

from __future__ import annotations

import json
from typing import Any

ANTHROPIC = "anthropic-event"
PING = {"type": "ping"}


def message_start(
    mid: str = "msg_test01",
    model: str = "claude-test-1",
    usage: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 1},
    }
    message.update(fields)
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(
    stop: str | None = "end_turn", usage: dict[str, Any] | None = None, **delta: Any
) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None, **delta},
        "usage": usage if usage is not None else {"output_tokens": 5},
    }


MESSAGE_STOP = {"type": "message_stop"}


def text(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def thinking(index: int, *pieces: str, signature: str | None = "c2lnbmF0dXJl") -> list[Any]:
    out = [block_start(index, {"type": "thinking", "thinking": "", "signature": ""})]
    out += [block_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces]
    if signature is not None:
        out.append(block_delta(index, {"type": "signature_delta", "signature": signature}))
    return [*out, block_stop(index)]


def tool_use(index: int, call_id: str, name: str, *fragments: str) -> list[dict[str, Any]]:
    return [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        block_delta(index, {"type": "input_json_delta", "partial_json": ""}),
        *(block_delta(index, {"type": "input_json_delta", "partial_json": f}) for f in fragments),
        block_stop(index),
    ]


def stream(*blocks: list[dict[str, Any]], stop: str = "end_turn", **start: Any) -> list[Any]:
    """A whole message: ``message_start``, the blocks, ``message_delta``, ``message_stop``."""
    events: list[Any] = [message_start(**start)]
    for block in blocks:
        events += block
    return [*events, message_delta(stop), MESSAGE_STOP]


def sse_events(events: list[Any]) -> bytes:
    """SSE as the API writes it: an ``event:`` line naming each event's type."""
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
    ).encode()


# Each block type: its content_block_start block, its delta type, the delta's text field.
DELTA_KINDS: dict[str, tuple[dict[str, Any], str, str]] = {
    "text": ({"type": "text", "text": ""}, "text_delta", "text"),
    "thinking": (
        {"type": "thinking", "thinking": "", "signature": ""},
        "thinking_delta",
        "thinking",
    ),  # fmt: skip
    "tool_use": (
        {"type": "tool_use", "id": "toolu_k1", "name": "look", "input": {}},
        "input_json_delta",
        "partial_json",
    ),  # fmt: skip
}
