"""A Llama Stack ``ChatCompletionResponse`` (the answer without ``stream: true``) as the
inference stream that builds it.

``{"completion_message": {"role": "assistant", "content", "stop_reason", "tool_calls"},
"logprobs", "metrics"}`` becomes ``start``; the content as ``progress`` text (each text
item of a list its own event, with the response's ``logprobs`` on the first); each call
``started`` → one ``in_progress`` with its JSON arguments → ``succeeded`` with the
``ToolCall`` as the object has it, the last one with the stop reason, as the encoder
writes calls; then ``complete`` with the stop reason and the metrics as they are.
Fields of the object no record holds are said lost. ``collect`` of the stream gives
back the object.
"""

from __future__ import annotations

from typing import Any

from chatx.notes import Notes

from . import records as r
from .probe import is_completion as is_completion

_MESSAGE = frozenset(("role", "content", "stop_reason", "tool_calls"))
_TOP = frozenset(("completion_message", "logprobs", "metrics"))


def describe(data: Any) -> str | None:
    """Names a whole Llama Stack completion when ``data`` is one."""
    if type(data) is dict and is_completion(data):
        return "a Llama Stack ChatCompletionResponse (completion_message)"
    return None


def events(response: dict[str, Any], notes: Notes) -> list[dict[str, Any]]:
    """The records a Llama Stack server streams for ``response``."""
    message = response["completion_message"]
    for key in (
        *(k for k in response if k not in _TOP),
        *(k for k in message if k not in _MESSAGE),
    ):
        notes.lost_field(key)
    if message.get("role", "assistant") != "assistant":
        notes.lost(
            f"completion_message role {message.get('role')!r}: the stream is the assistant's"
        )
    stop = message.get("stop_reason")
    logprobs = response.get("logprobs")
    out = [r.event("start", r.text_delta(""))]
    for delta in _content(message.get("content"), notes):
        out.append(r.event("progress", delta, logprobs if delta["type"] == "text" else None))
        if delta["type"] == "text":
            logprobs = None  # said once, with the first text
    calls = message.get("tool_calls")
    calls = [call for call in calls if type(call) is dict] if type(calls) is list else []
    for number, call in enumerate(calls):
        arguments, _ = r.arguments_text(call)
        out.append(r.event("progress", r.tool_delta("started", "")))
        if arguments:
            out.append(r.event("progress", r.tool_delta("in_progress", arguments)))
        last = number == len(calls) - 1
        out.append(
            r.event("progress", r.tool_delta("succeeded", call), None, stop if last else None)
        )
    out.append(r.event("complete", r.text_delta(""), logprobs, stop, response.get("metrics")))
    return out


def _content(content: Any, notes: Notes) -> list[dict[str, Any]]:
    """``InterleavedContent`` (a string, an item, or a list of items) as deltas."""
    if type(content) is str:
        return [r.text_delta(content)] if content else []
    if type(content) is dict:
        content = [content]
    out: list[dict[str, Any]] = []
    for item in content if type(content) is list else ():
        kind = item.get("type") if type(item) is dict else None
        if kind == "text" and type(item.get("text")) is str:
            if item["text"]:
                out.append(r.text_delta(item["text"]))
        elif kind == "image":
            out.append({"type": "image", "image": item.get("image")})
        elif item is not None:
            notes.lost(f"completion_message content item {kind or item!r}: not a stream delta")
    return out
