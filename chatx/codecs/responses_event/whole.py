"""A Responses ``response`` object (the answer without ``stream: true``) as its events.

``response.created`` and ``response.in_progress`` carry the object as it was before any
output (status ``in_progress``, no output, usage or error yet); then each output item
goes ``output_item.added`` → its parts, each added, said in one delta and done →
``output_item.done``, as a server streams it; then ``error`` when the response failed
with one, and the terminal event for its status with the object itself. Sequence
numbers count from 0. ``collect`` of the stream gives back the object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.probe import is_response as is_response
from chatx.notes import Notes

Emit = Callable[[dict[str, Any]], None]

# What a response says before any output: the fields a server fills in at the end.
_BEFORE: dict[str, Any] = {
    "status": "in_progress",
    "output": [],
    "usage": None,
    "error": None,
    "incomplete_details": None,
    "completed_at": None,
}
_TEXT_PARTS = {"output_text": "output_text", "refusal": "refusal"}


def describe(data: Any) -> str | None:
    """``"a Responses response object"`` when ``data`` is one."""
    return "a Responses response object" if type(data) is dict and is_response(data) else None


def events(response: dict[str, Any], notes: Notes) -> list[dict[str, Any]]:
    """The events a server streams for ``response``."""
    out: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        out.append({**event, "sequence_number": len(out)})

    before = {k: _BEFORE.get(k, v) for k, v in response.items()}
    before["status"] = "in_progress"
    emit({"type": "response.created", "response": before})
    emit({"type": "response.in_progress", "response": before})
    output = response.get("output")
    for index, item in enumerate(output if type(output) is list else ()):
        _item(emit, index, item if type(item) is dict else {})
    status = response.get("status")
    error = response.get("error")
    if status == "failed" and type(error) is dict:
        emit(shapes.error_event(error.get("code"), error.get("message"), None, None, None))
    terminal = shapes.TERMINAL_EVENT.get(status) if type(status) is str else None
    if terminal is None:
        notes.warning(f"a response with status {status!r}: its stream has no terminal event")
    else:
        emit({"type": terminal, "response": response})
    return out


def _item(emit: Emit, index: int, item: dict[str, Any]) -> None:
    kind = item.get("type")
    iid: Any = item.get("id")  # a JSON value, passed on as it is
    at = {"item_id": iid, "output_index": index}
    added = dict(item)
    if "status" in item or kind in ("message", "function_call"):
        added["status"] = "in_progress"
    if kind == "message":
        added["content"] = []
    elif kind == "function_call":
        added["arguments"] = ""
    elif kind == "reasoning":
        added["summary"] = []
        added.pop("content", None)
    # A built-in tool's item goes added (in progress), then done as it ended.
    emit({"type": "response.output_item.added", "item": added, "output_index": index})
    if kind == "message":
        _message(emit, index, iid, item.get("content"))
    elif kind == "function_call":
        arguments = shapes.as_str(item.get("arguments"))
        if arguments:
            emit({"type": "response.function_call_arguments.delta", **at, "delta": arguments})
        emit(shapes.arguments_done(iid, index, arguments, item.get("name")))
    elif kind == "reasoning":
        _reasoning(emit, index, iid, item)
    emit({"type": "response.output_item.done", "item": item, "output_index": index})


def _message(emit: Emit, index: int, iid: Any, content: Any) -> None:
    for number, part in enumerate(content if type(content) is list else ()):
        kind = part.get("type") if type(part) is dict else None
        ptype = _TEXT_PARTS.get(kind) if type(kind) is str else None
        if ptype is None:
            continue
        text = shapes.as_str(part.get("text" if ptype == "output_text" else "refusal"))
        logprobs = part.get("logprobs") if ptype == "output_text" else None
        lps = logprobs if type(logprobs) is list else []
        emit(shapes.part_added(iid, index, number, ptype))
        at = {"item_id": iid, "output_index": index, "content_index": number}
        if text and ptype == "output_text":
            emit({"type": "response.output_text.delta", **at, "delta": text, "logprobs": lps})
        elif text:
            emit({"type": "response.refusal.delta", **at, "delta": text})
        done, part_done = shapes.part_done(iid, index, number, ptype, text, lps)
        emit(done)
        emit({**part_done, "part": part})  # annotations and all, as the object has it


def _reasoning(emit: Emit, index: int, iid: Any, item: dict[str, Any]) -> None:
    families = (
        ("summary", "summary_text", "summary_index", "response.reasoning_summary_text.delta"),
        ("content", "reasoning_text", "content_index", "response.reasoning_text.delta"),
    )
    for field, ptype, key, delta in families:
        parts = item.get(field)
        for number, part in enumerate(parts if type(parts) is list else ()):
            text = shapes.as_str(part.get("text")) if type(part) is dict else ""
            emit(shapes.part_added(iid, index, number, ptype))
            if text:
                emit(
                    {
                        "type": delta,
                        "item_id": iid,
                        "output_index": index,
                        key: number,
                        "delta": text,
                    }
                )
            for done in shapes.part_done(iid, index, number, ptype, text, []):
                emit(done)
