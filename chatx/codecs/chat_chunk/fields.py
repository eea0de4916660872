"""Chat chunk fields the decoder reads apart from the delta: usage, logprobs, errors."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.residue import set_or_drop

_USAGE_KEYS = frozenset(("prompt_tokens", "completion_tokens", "total_tokens"))


# Tells a key that is absent from one present with a null value.
MISSING = object()


def count(value: Any) -> int | None:
    """A token count, or ``None`` for anything that is not an integer."""
    return value if type(value) is int else None


def decode_usage(usage: dict[str, Any]) -> ir.Usage:
    """Chat ``usage`` → IR Usage; the cached and reasoning counts come from the details."""
    # A count that is not an integer (a string, a float) is no count: it stays residue.
    extra = {k: v for k, v in usage.items() if k not in _USAGE_KEYS or type(v) is not int}
    cached = reasoning = None
    details = extra.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        cached = details["cached_tokens"]
        rest = {k: v for k, v in details.items() if k != "cached_tokens"}
        set_or_drop(extra, "prompt_tokens_details", rest)
    details = extra.get("completion_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
        reasoning = details["reasoning_tokens"]
        rest = {k: v for k, v in details.items() if k != "reasoning_tokens"}
        set_or_drop(extra, "completion_tokens_details", rest)
    return ir.Usage(
        count(usage.get("prompt_tokens")),
        count(usage.get("completion_tokens")),
        count(usage.get("total_tokens")),
        cached,
        reasoning,
        extra,
    )


def split_logprobs(logprobs: Any, extra: dict[str, Any]) -> tuple[Any, Any]:
    """Chat ``logprobs`` → (content entries, refusal entries); the rest is residue."""
    if logprobs is MISSING:
        return None, None
    if not isinstance(logprobs, dict):
        extra["logprobs"] = logprobs
        return None, None
    content = logprobs.get("content")
    refusal = logprobs.get("refusal")
    rest = {
        k: v
        for k, v in logprobs.items()
        if not (k in ("content", "refusal") and isinstance(v, list) and v)
    }
    if rest:
        extra["logprobs"] = rest
    return (
        content if isinstance(content, list) and content else None,
        refusal if isinstance(refusal, list) and refusal else None,
    )


def decode_error(error: dict[str, Any]) -> ir.Error:
    extra = {k: v for k, v in error.items() if k not in ("message", "code", "type", "param")}
    for key in ("message", "type", "param"):
        value = error.get(key, MISSING)
        if value is not MISSING and not isinstance(value, str):
            extra[key] = value
    if "code" in error and error["code"] is None:
        extra["code"] = None
    message = error.get("message")
    return ir.Error(
        message if isinstance(message, str) else None,
        error.get("code"),
        error.get("type") if isinstance(error.get("type"), str) else None,
        error.get("param") if isinstance(error.get("param"), str) else None,
        extra,
    )


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def kind_of(value: Any) -> str:
    return {
        list: "an array",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), type(value).__name__)
