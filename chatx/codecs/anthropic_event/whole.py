"""An Anthropic ``Message`` (the answer without ``stream: true``) as the event stream
that builds it.

``{"id", "type": "message", "role", "model", "content": [blocks], "stop_reason",
"stop_sequence", "usage"}`` becomes ``message_start`` (the message with no content and
no stop reason, its usage as it is); each block ``content_block_start`` → its deltas →
``content_block_stop``: text as one ``text_delta`` (its citations each a
``citations_delta`` before it, as the API streams them), thinking as one
``thinking_delta`` and its ``signature_delta``, a tool's input as one
``input_json_delta``, any other block whole in its start; then ``message_delta`` with the
stop reason, the stop sequence, the container and the output tokens, and
``message_stop``. ``collect --as anthropic`` of the stream gives back the message.
"""

from __future__ import annotations

from typing import Any

import orjson

from chatx.notes import Notes

from . import records as r
from .probe import is_message as is_message

# Message fields the stream says in message_delta rather than message_start.
_AT_END = ("stop_reason", "stop_sequence", "container", "context_management")
_TOOLS = ("tool_use", "server_tool_use", "mcp_tool_use")


def describe(data: Any) -> str | None:
    """Names a whole Anthropic message when ``data`` is one."""
    if type(data) is dict and is_message(data):
        return "an Anthropic Message object"
    return None


def events(message: dict[str, Any], notes: Notes) -> list[dict[str, Any]]:
    """The events the Messages API streams for ``message``."""
    if message.get("role", "assistant") != "assistant":
        notes.lost(f"message role {message.get('role')!r}: the stream is the assistant's")
    usage = message.get("usage")
    start = {k: v for k, v in message.items() if k not in _AT_END}
    start["content"] = []
    start["stop_reason"] = start["stop_sequence"] = None
    out: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if type(block) is dict:
            out.extend(_block(index, block))
        else:
            notes.lost(f"content entry {index} is not a block: left out")
    delta: dict[str, Any] = {
        "stop_reason": message.get("stop_reason"),
        "stop_sequence": message.get("stop_sequence"),
    }
    if "container" in message:
        delta["container"] = message["container"]
    end: dict[str, Any] = {"type": "message_delta", "delta": delta}
    if type(usage) is dict and r.OUTPUT in usage:
        end["usage"] = {r.OUTPUT: usage[r.OUTPUT]}
    if "context_management" in message:
        end["context_management"] = message["context_management"]
    out.append(end)
    out.append(r.message_stop())
    return out


def _block(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    btype = block.get("type")
    deltas: list[dict[str, Any]] = []
    if btype == "text":
        head = {k: v for k, v in block.items() if k not in ("text", "citations")}
        head["text"] = ""
        citations = block.get("citations")
        if type(citations) is list and citations:
            head["citations"] = []
            deltas += [{"type": "citations_delta", "citation": c} for c in citations]
        if type(block.get("text")) is str and block["text"]:
            deltas.append(r.text_delta(block["text"]))
    elif btype == "thinking":
        head = {**block, "thinking": "", "signature": ""}
        if type(block.get("thinking")) is str and block["thinking"]:
            deltas.append(r.thinking_delta(block["thinking"]))
        if type(block.get("signature")) is str and block["signature"]:
            deltas.append(r.signature_delta(block["signature"]))
    elif btype in _TOOLS and type(block.get("input")) is dict:
        head = {**block, "input": {}}
        if block["input"]:
            deltas.append(r.json_delta(orjson.dumps(block["input"]).decode()))
    else:
        head = block
    return [
        r.block_start(index, head),
        *(r.block_delta(index, delta) for delta in deltas),
        r.block_stop(index),
    ]
