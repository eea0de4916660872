"""What ``chatx show`` says of an Anthropic event: its type (and its block's or delta's)
and a glimpse of it.

Responses events have a string ``type`` too, so this ranks above them (``rank`` 3) and
claims only the types of its own stream, and an ``error`` event in the Anthropic shape
(its message inside ``error``, none at the top level as Responses writes it).
"""

from __future__ import annotations

from typing import Any

from .records import EVENTS


def _ours(data: dict[str, Any]) -> str | None:
    kind = data.get("type")
    if type(kind) is not str:
        return None
    if kind in EVENTS or kind == "message":
        return kind
    if kind == "error" and isinstance(data.get("error"), dict) and "message" not in data:
        return kind
    return None


def kinds(data: dict[str, Any]) -> list[str] | None:
    """The event type, and the type of the block it starts or of its delta."""
    kind = _ours(data)
    if kind is None:
        return None
    inner = data.get("content_block") if kind == "content_block_start" else data.get("delta")
    sub = inner.get("type") if isinstance(inner, dict) else None
    return [kind, sub] if kind.startswith("content_block") and isinstance(sub, str) else [kind]


def preview(data: dict[str, Any]) -> str | None:
    """A delta's text, a block's type and name, the stop reason, or the error message."""
    kind = _ours(data)
    if kind is None:
        return None
    delta = data.get("delta")
    if isinstance(delta, dict):
        for key in ("text", "thinking", "partial_json"):
            if isinstance(delta.get(key), str):
                return repr(delta[key])
        if kind == "message_delta":
            return str(delta.get("stop_reason") or "")
        return str(delta.get("type") or "")
    block = data.get("content_block")
    if isinstance(block, dict):
        return item(block)
    error = data.get("error")
    if isinstance(error, dict):
        return " ".join(str(error[k]) for k in ("type", "message") if error.get(k))
    message = data.get("message")
    if isinstance(message, dict):
        return str(message.get("model") or "")
    return ""


def item(data: dict[str, Any]) -> str:
    """A content block the IR has no words for (a server tool's): its type and name,
    and what a web search looked for."""
    words = [str(data[k]) for k in ("type", "name", "server_name") if data.get(k)]
    query = data.get("input", {}).get("query") if isinstance(data.get("input"), dict) else None
    if query:
        words.append(f"query {query!r}")
    return " ".join(words)
