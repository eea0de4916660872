"""What ``collect`` builds from a stream as Llama Stack: a ``ChatCompletionResponse``
(``completion_message`` and ``metrics``)."""

from __future__ import annotations

from typing import Any

import orjson

from chatx.assembler import Assembler, Lane
from chatx.notes import Notes

from .records import NAME

_STOP = {
    "stop": "end_of_turn",
    "tool_calls": "end_of_message",
    "function_call": "end_of_message",
    "length": "out_of_tokens",
}
_WHAT = "a Llama Stack response"


def final(
    stream: Assembler, source: str | None, choice: int | None, notes: Notes
) -> dict[str, Any]:
    """The descriptor's ``final``: the response of the one choice (or of ``choice``)."""
    return to_llama_stack(stream, source, stream.one_lane(choice, _WHAT), notes)


def to_llama_stack(
    stream: Assembler,
    source: str | None = None,
    lane: Lane | None = None,
    notes: Notes | None = None,
) -> dict[str, Any]:
    """A Llama Stack ``ChatCompletionResponse``: ``completion_message`` and ``metrics``."""
    notes = notes if notes is not None else Notes()
    lane = lane if lane is not None else stream.one_lane(None, _WHAT)
    if lane.reasoning:
        notes.lost("reasoning has no place in a Llama Stack response: left out")
    if lane.refusal:
        notes.lost("the refusal is written as message content")
    if lane.stop_sequence is not None:
        notes.lost("the stop sequence has no place in a Llama Stack response")
    for item in lane.items:
        for cited in item.citations:  # none has a place: said as convert says each record
            notes.lost_field("citations" if "citations" in cited.extra else "annotations")
    stop = (
        lane.raw_finish
        if source == NAME and lane.raw_finish
        else _STOP.get(lane.finish or "", "end_of_turn" if lane.finish else None)
    )
    message = {
        "role": "assistant",
        "content": lane.text + lane.refusal,
        "stop_reason": stop,
        "tool_calls": [_call(call.call_id, call.name, call.arguments) for call in lane.calls],
    }
    return {
        "completion_message": message,
        "logprobs": None,
        "metrics": _metrics(stream, source == NAME),
    }


def _call(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    try:
        parsed: Any = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    return {
        "call_id": call_id or "",
        "tool_name": name or "",
        "arguments": parsed if isinstance(parsed, dict) else arguments,
        "arguments_json": arguments,
    }


def _metrics(stream: Assembler, own: bool) -> list[dict[str, Any]] | None:
    usage = stream.usage
    if usage is None:
        return None
    total = usage.total
    if usage.input is not None and usage.output is not None and (not own or total is None):
        # As the encoder writes it: Llama Stack's router computes the total as prompt +
        # completion, so a stream and its final object agree.
        total = usage.input + usage.output
    counts = (
        ("prompt_tokens", usage.input),
        ("completion_tokens", usage.output),
        ("total_tokens", total),
    )
    return [
        {"metric": name, "value": value, "unit": "tokens"}
        for name, value in counts
        if value is not None
    ]
