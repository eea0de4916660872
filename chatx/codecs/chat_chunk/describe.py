"""What ``chatx show`` says of a chat chunk: what it carries and a glimpse of its text.

A chat chunk has no tag of its own, so this is the description of any JSON object no
other format claims (``rank`` 0, asked last).
"""

from __future__ import annotations

from typing import Any

_REASONING_FIELDS = ("reasoning_content", "reasoning")


def _list(value: Any) -> list[Any]:
    # A malformed stream may put any JSON value where a list belongs: show what is there.
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    # The same where an object belongs.
    return value if isinstance(value, dict) else {}


def kinds(data: dict[str, Any]) -> list[str]:
    """What the chunk carries, per choice (``role``, ``content``, ``finish``…), usage
    and error: a chunk can carry several."""
    found: list[str] = []
    for choice in _list(data.get("choices")):
        if not isinstance(choice, dict):
            continue
        delta = _dict(choice.get("delta"))
        for key in ("role", "content", "refusal", "tool_calls", *_REASONING_FIELDS):
            name = "reasoning" if key in _REASONING_FIELDS else key
            if delta.get(key) and name not in found:
                found.append(name)
        if choice.get("finish_reason") and "finish" not in found:
            found.append("finish")
    for key in ("usage", "error"):
        if data.get(key):
            found.append(key)
    return found or ["empty chunk"]


def preview(data: dict[str, Any]) -> str:
    """The text the chunk's choices carry, its calls and finish, its error message."""
    pieces: list[str] = []
    for choice in _list(data.get("choices")):
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        for key in ("content", "refusal", *_REASONING_FIELDS):
            if isinstance(delta.get(key), str) and delta[key]:
                pieces.append(repr(delta[key]))
        for call in _list(delta.get("tool_calls")):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                pieces.append(
                    str(function.get("name") or "") + repr(function.get("arguments") or "")
                )
        if choice.get("finish_reason"):
            pieces.append(f"finish={choice['finish_reason']}")
    if isinstance(data.get("error"), dict):
        pieces.append(str(data["error"].get("message")))
    return " ".join(pieces)
