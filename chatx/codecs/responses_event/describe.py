"""What ``chatx show`` says of a Responses event: its ``type`` and a glimpse of it.

Any object with a string ``type`` is described so (``rank`` 2: asked before the formats
whose shape is looser); a format whose events also have a string ``type`` ranks above.
"""

from __future__ import annotations

from typing import Any


def kinds(data: dict[str, Any]) -> list[str] | None:
    kind = data.get("type")
    return [kind] if isinstance(kind, str) else None


def preview(data: dict[str, Any]) -> str | None:
    """The delta's text, the item's type, name and status, the response's status, or
    the error message."""
    if not isinstance(data.get("type"), str):
        return None
    if isinstance(data.get("delta"), str):
        return repr(data["delta"])
    item = data.get("item")
    if isinstance(item, dict):
        return " ".join(str(item[k]) for k in ("type", "name", "status") if item.get(k))
    response = data.get("response")
    if isinstance(response, dict):
        return str(response.get("status") or "")
    return str(data.get("message") or "")


def item(data: dict[str, Any]) -> str:
    """An output item the IR has no words for: its type, server, name and status, and
    what a web search looked for."""
    words = [str(data[k]) for k in ("type", "server_label", "name", "status") if data.get(k)]
    action = data.get("action")
    if isinstance(action, dict) and action.get("query"):
        words.append(f"query {action['query']!r}")
    return " ".join(words)
