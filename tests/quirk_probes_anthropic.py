"""Probes for the Anthropic quirks of ``tests/test_fixture_coverage.py`` (see
``tests/quirk_probes.py``, which takes these in): each a predicate on a whole stream, true
when it shows one quirk's shape, by fields and framing only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Probe = Callable[[Any], bool]


def _of(s: Any, kind: str) -> list[dict[str, Any]]:
    return [p for p in s.payloads if p.get("type") == kind]


def _blocks(s: Any) -> list[dict[str, Any]]:
    return [
        p["content_block"]
        for p in _of(s, "content_block_start")
        if isinstance(p.get("content_block"), dict)
    ]


def _deltas(s: Any) -> list[dict[str, Any]]:
    return [p["delta"] for p in _of(s, "content_block_delta") if isinstance(p.get("delta"), dict)]


def _start_usage(s: Any) -> list[dict[str, Any]]:
    messages = [p.get("message") for p in _of(s, "message_start")]
    return [
        m["usage"] for m in messages if isinstance(m, dict) and isinstance(m.get("usage"), dict)
    ]


def _delta_usage(s: Any) -> list[dict[str, Any]]:
    return [p["usage"] for p in _of(s, "message_delta") if isinstance(p.get("usage"), dict)]


def padded(s: Any) -> bool:
    """Spaces before the closing brace of a ``data:`` object."""
    return re.search(rb"data: \{.*[^ ] +\}\r?\n", s.raw) is not None


def ping_after_first_block(s: Any) -> bool:
    types = s.types
    return (
        "content_block_start" in types and types[types.index("content_block_start") + 1] == "ping"
    )


def empty_thinking_before_signature(s: Any) -> bool:
    deltas = _deltas(s)
    return any(
        a.get("type") == "thinking_delta"
        and a.get("thinking") == ""
        and b.get("type") == "signature_delta"
        for a, b in zip(deltas, deltas[1:], strict=False)
    )


def tool_without_arguments(s: Any) -> bool:
    """A tool block whose only delta is the empty ``partial_json``."""
    open_tool, fragments = False, []
    for p in s.payloads:
        kind = p.get("type")
        if kind == "content_block_start":
            open_tool = (p.get("content_block") or {}).get("type") == "tool_use"
            fragments = []
        elif kind == "content_block_delta" and open_tool:
            fragments.append((p.get("delta") or {}).get("partial_json"))
        elif kind == "content_block_stop" and open_tool and fragments == [""]:
            return True
    return False


def citation_before_text(s: Any) -> bool:
    deltas = _deltas(s)
    return any(
        a.get("type") == "citations_delta" and b.get("type") == "text_delta"
        for a, b in zip(deltas, deltas[1:], strict=False)
    )


def result_whole_in_start(s: Any) -> bool:
    """A server tool's result block started and stopped with no delta between."""
    return any(
        (a.get("content_block") or {}).get("type", "").endswith("_tool_result")
        and b.get("type") == "content_block_stop"
        for a, b in zip(s.payloads, s.payloads[1:], strict=False)
        if a.get("type") == "content_block_start"
    )


def unstopped_block(s: Any) -> bool:
    """A ``message_delta`` while a block is open."""
    open_block = False
    for kind in s.types:
        if kind == "content_block_start":
            open_block = True
        elif kind == "content_block_stop":
            open_block = False
        elif kind == "message_delta" and open_block:
            return True
    return False


def prefilled_turn(s: Any) -> bool:
    """A ``message_start`` holding its content and stop reason, then ``message_stop``."""
    types = s.types
    for n, p in enumerate(s.payloads[:-1]):
        message = p.get("message") if p.get("type") == "message_start" else None
        said = isinstance(message, dict) and message.get("content") and message.get("stop_reason")
        if said and types[n + 1] == "message_stop":
            return True
    return False


ANTHROPIC_PROBES: dict[str, Probe] = {
    "anthropic-json-padding": padded,
    "anthropic-ping-after-first-block": ping_after_first_block,
    "anthropic-delta-input-tokens": lambda s: any("input_tokens" in u for u in _delta_usage(s)),
    "anthropic-cache-creation-object": lambda s: any(
        isinstance(u.get("cache_creation"), dict) for u in _start_usage(s)
    ),
    "anthropic-signature": lambda s: any(d.get("type") == "signature_delta" for d in _deltas(s)),
    "anthropic-empty-thinking-delta": empty_thinking_before_signature,
    "anthropic-redacted-thinking": lambda s: any(
        b.get("type") == "redacted_thinking" and b.get("data") for b in _blocks(s)
    ),
    "anthropic-empty-first-input-json": lambda s: any(
        d.get("type") == "input_json_delta" and d.get("partial_json") == "" for d in _deltas(s)
    ),
    "anthropic-tool-without-arguments": tool_without_arguments,
    "anthropic-server-result-whole": result_whole_in_start,
    "anthropic-citation-before-text": citation_before_text,
    "anthropic-char-location": lambda s: any(
        (d.get("citation") or {}).get("type") == "char_location" for d in _deltas(s)
    ),
    "anthropic-pause-turn": lambda s: any(
        (p.get("delta") or {}).get("stop_reason") == "pause_turn" for p in _of(s, "message_delta")
    ),
    "anthropic-stop-sequence": lambda s: any(
        (p.get("delta") or {}).get("stop_sequence") for p in _of(s, "message_delta")
    ),
    "anthropic-unstopped-block": unstopped_block,
    "anthropic-no-cache-fields": lambda s: (
        bool(_start_usage(s)) and all("cache_read_input_tokens" not in u for u in _start_usage(s))
    ),
    "bedrock-invocation-metrics": lambda s: any(
        "amazon-bedrock-invocationMetrics" in p for p in _of(s, "message_stop")
    ),
    "bedrock-ids": lambda s: any(
        str((p.get("message") or {}).get("id", "")).startswith("msg_bdrk_")
        for p in _of(s, "message_start")
    ),
    "anthropic-prefilled-turn": prefilled_turn,
    "anthropic-concatenated": lambda s: len(_of(s, "message_start")) > 1,
}
