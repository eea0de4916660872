"""Semantic mode: what a client reconstructs from each side (:mod:`chatx.collect.streams`).

Per choice the text, reasoning, refusal, tool calls (arguments as JSON values when both
parse) and finish reason; per stream usage, errors and built-in items — however the
deltas were split. Across formats it also evens out what the formats cannot tell apart.
"""

from __future__ import annotations

from typing import Any

import orjson

from chatx.collect.assembler import Assembler
from chatx.collect.items import Lane
from chatx.collect.streams import streams_of
from chatx.containers.payload import nests_too_deep
from chatx.diffing.values import Difference, DiffResult, FieldFilter, compare
from chatx.reading.framing import Side


def semantic_diff(
    a: Side, b: Side, *, normalize: bool = True, ignore: tuple[str, ...] = ()
) -> DiffResult:
    """Compare what a client reconstructs from each side."""
    cross = normalize and a.format != b.format
    # Both read before either is viewed: an assembled text is held as UTF-8 until viewed,
    # a quarter of the str it joins into when an emoji is in it.
    streams_a, streams_b = streams_of(a), streams_of(b)
    views_a = [view(s, cross) for s in streams_a]
    views_b = [view(s, cross) for s in streams_b]
    fields = FieldFilter(frozenset(), ignore)
    result = DiffResult("semantic", a, b, [])
    if len(views_a) != len(views_b):
        result.differences.append(Difference("streams", len(views_a), len(views_b)))
    several = max(len(views_a), len(views_b)) > 1
    for number, (x, y) in enumerate(zip(views_a, views_b, strict=False)):
        _parse_arguments(x, y)
        x, y = fields.apply(x), fields.apply(y)
        if cross:
            _drop_empty_failed(x)
            _drop_empty_failed(y)
        prefix = f"streams[{number}]" if several else ""
        compare(x, y, prefix, result.differences)
    return result


def _drop_empty_failed(view: dict[str, Any]) -> None:
    """A failed Responses stream has a lane with nothing in it; a chat error frame has
    none. Such lanes (after --ignore) are left out across formats."""
    choices = view.get("choices")
    if not isinstance(choices, dict):
        return
    for index, lane in list(choices.items()):
        said = {k: v for k, v in lane.items() if k != "finish_reason" and v not in ("", [])}
        if not said and lane.get("finish_reason", "error") == "error":
            del choices[index]


def view(stream: Assembler, cross: bool = False) -> dict[str, Any]:
    """The comparable reconstruction of one stream.

    ``cross`` evens out what two formats cannot tell apart (see :func:`_cross_finish`),
    and counts a format leaves out are written as 0 by the other.
    """
    failed = bool(stream.errors)
    choices = {lane.index: _lane_view(lane, cross, failed) for lane in stream.choices}
    # Error types are left out across formats: an encoder may have to name one the
    # source did not give (Responses error events carry a type).
    errors = [
        {"message": e.message, "code": _code(e.code)}
        if cross
        else {"message": e.message, "code": _code(e.code), "type": e.type}
        for e in stream.errors
    ]
    items = [str((i.data or {}).get("type")) for lane in stream.choices for i in lane.others()]
    return {
        "choices": choices,
        "usage": _usage_view(stream, cross),
        "errors": errors,
        "items": items,
    }


def _lane_view(lane: Lane, cross: bool, failed: bool) -> dict[str, Any]:
    calls = [
        {"name": c.name or "", "call_id": c.call_id or "", "arguments": c.arguments}
        for c in lane.calls
    ]
    finish = _cross_finish(lane.finish, bool(calls), failed) if cross else lane.finish
    return {
        "text": lane.text,
        "reasoning": lane.reasoning,
        "refusal": lane.refusal,
        "tool_calls": calls,
        "finish_reason": finish,
    }


def _cross_finish(finish: str | None, calls: bool, failed: bool) -> str | None:
    """Finish reasons as every format can say them.

    A stream with an error ends ``failed`` in Responses whatever the chat choice said
    before (OpenRouter sends ``length`` then an error frame). Responses and Llama Stack
    derive "tool calls" from the items, so ``stop`` after a tool call (older Ollama) is
    ``tool_calls`` there; and a chat stream that ends without a finish reason becomes a
    completed response.
    """
    if failed:
        return "error"
    if finish in (None, "stop", "tool_calls", "function_call"):
        return "tool_calls" if calls else "stop"
    return finish


def _usage_view(stream: Assembler, cross: bool) -> dict[str, Any] | None:
    usage = stream.usage
    if usage is None:
        return None
    counts = {"input": usage.input, "output": usage.output, "total": usage.total}
    if cross:
        filled = {k: v or 0 for k, v in counts.items()}
        if usage.total is None:
            filled["total"] = filled["input"] + filled["output"]
        return filled
    return counts


def _code(code: Any) -> Any:
    # Responses error codes are strings; chat providers also send numbers (400).
    return str(code) if code is not None and not isinstance(code, str) else code


def _parse_arguments(x: dict[str, Any], y: dict[str, Any]) -> None:
    """Tool arguments that parse on both sides are compared as JSON values."""
    for index, lane in x["choices"].items():
        other = y["choices"].get(index)
        if other is None:
            continue
        for call_a, call_b in zip(lane["tool_calls"], other["tool_calls"], strict=False):
            # Compared as text when nested past MAX_DEPTH: == on the values would recurse.
            if nests_too_deep(call_a["arguments"]) or nests_too_deep(call_b["arguments"]):
                continue
            try:
                parsed = (orjson.loads(call_a["arguments"]), orjson.loads(call_b["arguments"]))
            except orjson.JSONDecodeError:
                continue
            call_a["arguments"], call_b["arguments"] = parsed
