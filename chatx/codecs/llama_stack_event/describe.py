"""What ``chatx show`` says of a Llama Stack event: its event and delta type (and a
tool call's parse status), and a glimpse of its text, call or stop reason."""

from __future__ import annotations

from typing import Any


def _dict(value: Any) -> dict[str, Any]:
    # A malformed stream may put any JSON value where an object belongs.
    return value if isinstance(value, dict) else {}


def kinds(data: dict[str, Any]) -> list[str] | None:
    """``progress text``, ``progress tool_call (in_progress)``…: for an ``event`` object
    with an ``event_type``."""
    event = data.get("event")
    if not isinstance(event, dict) or "event_type" not in event:
        return None
    delta = _dict(event.get("delta"))
    kind = f"{event.get('event_type')} {delta.get('type', '')}".strip()
    status = delta.get("parse_status")
    return [f"{kind} ({status})" if status else kind]


def preview(data: dict[str, Any]) -> str | None:
    """For any ``event`` object."""
    event = data.get("event")
    if not isinstance(event, dict):
        return None
    delta = _dict(event.get("delta"))
    if isinstance(delta.get("text"), str) and delta["text"]:
        return repr(delta["text"])
    call = delta.get("tool_call")
    if isinstance(call, dict):
        return str(call.get("tool_name") or "")
    return repr(call) if call else str(event.get("stop_reason") or "")
