"""Probes for the provider quirks of ``tests/test_fixture_coverage.py``.

A probe is a predicate on a whole stream (its bytes and the records chatx reads from
them) that is true when the stream shows one quirk's shape. The probes look at fields
and framing only, never at text or ids of a particular capture, so the same probe can
be run on chatx's own fixtures and on the real captures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import chatx
from tests.quirk_probes_anthropic import ANTHROPIC_PROBES


@dataclass(frozen=True)
class Stream:
    raw: bytes
    records: list[Any]

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return [r.data for r in self.records if isinstance(r.data, dict)]

    @property
    def done(self) -> bool:
        return any(r.done for r in self.records)

    @property
    def types(self) -> list[Any]:
        return [p.get("type") for p in self.payloads]


def stream(raw: bytes) -> Stream:
    return Stream(raw, chatx.read_records(raw)[1])


@cache
def load(path: Path) -> Stream:
    return stream(path.read_bytes())


def dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def choices(s: Stream) -> Iterator[dict[str, Any]]:
    for p in s.payloads:
        yield from dicts(p.get("choices"))


def deltas(s: Stream) -> list[dict[str, Any]]:
    return [c["delta"] for c in choices(s) if isinstance(c.get("delta"), dict)]


def calls(s: Stream) -> list[dict[str, Any]]:
    return [t for d in deltas(s) for t in dicts(d.get("tool_calls"))]


def usages(s: Stream) -> list[dict[str, Any]]:
    return [p["usage"] for p in s.payloads if isinstance(p.get("usage"), dict)]


def events(s: Stream) -> list[dict[str, Any]]:
    """Llama Stack ``event`` objects."""
    return [p["event"] for p in s.payloads if isinstance(p.get("event"), dict)]


def tool_deltas(s: Stream) -> list[dict[str, Any]]:
    return [e["delta"] for e in events(s) if (e.get("delta") or {}).get("type") == "tool_call"]


def envelope(s: Stream) -> dict[str, Any]:
    resp = s.payloads[0].get("response") if s.payloads else None
    return resp if isinstance(resp, dict) else {}


def first_delta(s: Stream) -> dict[str, Any]:
    return (deltas(s) or [{}])[0]


def seqs(s: Stream) -> list[Any]:
    return [p.get("sequence_number") for p in s.payloads]


def comments(s: Stream) -> bool:
    return re.search(rb"(?m)^:", s.raw.lstrip(b"\xef\xbb\xbf")) is not None


def any_has(of: Callable[[Stream], Any], *keys: str) -> Callable[[Stream], bool]:
    """Some element of ``of(stream)`` has all ``keys``."""
    return lambda s: any(all(k in x for k in keys) for x in of(s))


def _payloads(s: Stream) -> list[dict[str, Any]]:
    return s.payloads


def usage_null_then_usage(s: Stream) -> bool:
    *head, last = s.payloads or [{}]
    return (
        bool(head)
        and all("usage" in p and p["usage"] is None for p in head)
        and (last.get("choices") == [] and isinstance(last.get("usage"), dict))
    )


def refusal_logprobs(s: Stream) -> bool:
    lps = [c["logprobs"] for c in choices(s) if isinstance(c.get("logprobs"), dict)]
    return lps[:1] == [{"content": None, "refusal": []}] and any(
        dicts(lp.get("refusal")) for lp in lps
    )


def interleaved_choices(s: Stream) -> bool:
    order = [c.get("index") for c in choices(s)]
    return 1 in order and 0 in order[order.index(1) :]


def groq_usage(s: Stream) -> bool:
    last = [p for p in s.payloads if isinstance(p.get("usage"), dict)]
    return "x_groq" in s.payloads[0] and any(
        (p.get("x_groq") or {}).get("usage") == p["usage"] for p in last
    )


def whole_call(s: Stream) -> bool:
    """The first entry of a call has its id, its name and arguments that parse whole."""
    first = next((c for c in calls(s) if c.get("id")), {})
    try:
        return isinstance(json.loads((first.get("function") or {}).get("arguments")), dict)
    except (TypeError, ValueError):
        return False


def error_chunk_after_length(s: Stream) -> bool:
    seen_length = False
    for p in s.payloads:
        finishes = [c.get("finish_reason") for c in dicts(p.get("choices"))]
        if "error" in p and seen_length and None in finishes:
            return s.done
        seen_length = seen_length or "length" in finishes
    return False


def xai_grok_beta(s: Stream) -> bool:
    with_choices = [p for p in s.payloads if p.get("choices")]
    return (
        all(isinstance(p.get("usage"), dict) for p in with_choices)
        and all(d.get("role") == "assistant" for d in deltas(s))
        and any(
            c.get("finish_reason") == "length" and c["delta"].get("content") for c in choices(s)
        )
    )


def snowflake(s: Stream) -> bool:
    return (
        all(p.get("id") == "" and p.get("created") == 0 for p in s.payloads)
        and all(d.get("refusal") == "" for d in deltas(s))
        and not any("finish_reason" in c for c in choices(s))
    )


def metric_telemetry(s: Stream) -> bool:
    measured = [p for p in s.payloads if p.get("metrics")]
    return [p["event"].get("event_type") for p in measured] == ["complete"] and all(
        {"attributes", "span_id", "trace_id", "timestamp"} <= set(m)
        for m in dicts(measured[0]["metrics"])
    )


def streamed_tool_call(s: Stream) -> bool:
    kinds = {(d.get("parse_status"), type(d.get("tool_call")).__name__) for d in tool_deltas(s)}
    return {("started", "str"), ("in_progress", "str"), ("succeeded", "dict")} <= kinds


def text_then_parse(s: Stream) -> bool:
    text = "".join((e.get("delta") or {}).get("text") or "" for e in events(s))
    return "{" in text and [d.get("parse_status") for d in tool_deltas(s)] == ["succeeded"]


def stop_on_succeeded(s: Stream) -> bool:
    *_, before, last = [{}, {}, *events(s)]
    return (
        (before.get("delta") or {}).get("parse_status") == "succeeded"
        and before.get("stop_reason") == "end_of_turn"
        and last.get("event_type") == "complete"
    )


def code_interpreter_call(s: Stream) -> bool:
    parsed = [d["tool_call"] for d in tool_deltas(s) if isinstance(d.get("tool_call"), dict)]
    return any(
        c.get("tool_name") == "code_interpreter" and "code" in c["arguments"] for c in parsed
    )


def rotating_item_ids(s: Stream) -> bool:
    """An item named by more than one id across its events."""
    named: dict[Any, set[Any]] = {}
    for p in s.payloads:
        iid = p.get("item_id", (p.get("item") or {}).get("id"))
        if "output_index" in p and iid is not None:
            named.setdefault(p["output_index"], set()).add(iid)
    return any(len(v) > 1 for v in named.values())


def item_type(kind: str) -> Callable[[Stream], bool]:
    added = "response.output_item.added"
    return lambda s: any(
        p.get("type") == added and (p.get("item") or {}).get("type") == kind for p in s.payloads
    )


def _types_in_order(*types: str) -> Callable[[Stream], bool]:
    return lambda s: (
        all(t in s.types for t in types)
        and [s.types.index(t) for t in types] == sorted(s.types.index(t) for t in types)
    )


PROBES: dict[str, Callable[[Stream], bool]] = {
    # chat-chunk
    "openai-usage-null": usage_null_then_usage,
    "openai-first-delta": lambda s: (
        first_delta(s) == {"role": "assistant", "content": "", "refusal": None}
    ),
    "openai-refusal": lambda s: (
        first_delta(s).get("content", 0) is None and first_delta(s).get("refusal") == ""
    ),
    "openai-obfuscation": any_has(_payloads, "obfuscation"),
    "bedrock-obfuscation-in-choice": any_has(choices, "obfuscation"),
    "openai-n-choices": interleaved_choices,
    "openai-parallel-tool-calls": lambda s: (
        len({c.get("index") for c in calls(s)}) > 1 and any("id" not in c for c in calls(s))
    ),
    "openai-logprobs": lambda s: any(
        dicts((c.get("logprobs") or {}).get("content")) for c in choices(s)
    ),
    "openai-refusal-logprobs": refusal_logprobs,
    "azure-empty-first-chunk": lambda s: (
        s.payloads[0].get("id") == ""
        and s.payloads[0].get("choices") == []
        and "prompt_filter_results" in s.payloads[0]
    ),
    "azure-content-filter-results": any_has(choices, "content_filter_results"),
    "groq-x-groq": groq_usage,
    "groq-whole-tool-call": whole_call,
    "groq-reasoning-channel": lambda s: any(
        d.get("channel") == "analysis" and "reasoning" in d for d in deltas(s)
    ),
    "groq-event-error": lambda s: (
        not s.done
        and any(
            r.event == "error" and "failed_generation" in (r.data or {}).get("error", {})
            for r in s.records
            if isinstance(r.data, dict)
        )
    ),
    "groq-compound-stub-id": lambda s: (
        "stub" in {p.get("id") for p in s.payloads}
        and len({p.get("id") for p in s.payloads}) > 1
        and any("usage_breakdown" in (p.get("x_groq") or {}) for p in s.payloads)
    ),
    "openrouter-comments": comments,
    "openrouter-provider": lambda s: (
        all("provider" in p for p in s.payloads) and any_has(choices, "native_finish_reason")(s)
    ),
    "openrouter-usage-cost": any_has(usages, "cost", "is_byok"),
    "openrouter-reasoning-details": lambda s: any(
        isinstance(d.get("reasoning"), str)
        and any(x.get("type") == "reasoning.text" for x in dicts(d.get("reasoning_details")))
        for d in deltas(s)
    ),
    "openrouter-error-in-chunk": error_chunk_after_length,
    "novita-tool-id-zero": lambda s: [c.get("id") for c in calls(s)].count("0") > 1,
    "deepseek-reasoning-content": lambda s: (
        first_delta(s).get("reasoning_content") == ""
        and any(d.get("content") and d.get("reasoning_content", 0) is None for d in deltas(s))
    ),
    "deepseek-cache-usage": any_has(usages, "prompt_cache_hit_tokens", "prompt_cache_miss_tokens"),
    "reasoning-field": lambda s: any(isinstance(d.get("reasoning"), str) for d in deltas(s)),
    "mistral-content-array": lambda s: any(
        p.get("type") == "thinking" for d in deltas(s) for p in dicts(d.get("content"))
    ),
    "think-inline": lambda s: any("<think>" in str(d.get("content")) for d in deltas(s)),
    "mistral-hex-ids": lambda s: all(
        re.fullmatch(r"[0-9a-f]{32}", str(p.get("id"))) for p in s.payloads
    ),
    "mistral-p-padding": any_has(_payloads, "p"),
    "mistral-call-without-index": lambda s: any("index" not in c for c in calls(s)),
    "mistral-empty-name-continuation": lambda s: (
        any("id" not in c and (c.get("function") or {}).get("name") == "" for c in calls(s))
        and any_has(deltas, "index")(s)
    ),
    "ollama-finish-stop-after-call": lambda s: (
        bool(calls(s))
        and [c["finish_reason"] for c in choices(s) if c.get("finish_reason")] == ["stop"]
        and all(p.get("system_fingerprint") == "fp_ollama" for p in s.payloads)
    ),
    "old-vllm-no-usage": lambda s: bool(s.payloads) and not usages(s),
    "vllm-token-ids": lambda s: (
        any_has(choices, "token_ids")(s)
        and any_has(choices, "stop_reason")(s)
        and any_has(_payloads, "prompt_token_ids")(s)
    ),
    "together-text-seed": lambda s: (
        bool(deltas(s))
        and all("text" in c and "seed" in c for c in choices(s))
        and all("token_id" in d for d in deltas(s))
    ),
    "novita-sla-metrics": any_has(_payloads, "sla_metrics"),
    "sglang-matched-stop": any_has(choices, "matched_stop"),
    "watsonx-extras": lambda s: (
        any("warnings" in (p.get("system") or {}) for p in s.payloads)
        and any_has(_payloads, "model_id", "model_version", "created_at")(s)
    ),
    "xai-grok-beta": xai_grok_beta,
    "deepinfra": lambda s: (
        b'"id": "' in s.raw
        and all(d.get("tool_calls", 0) is None and "role" in d for d in deltas(s))
        and any_has(usages, "estimated_cost")(s)
    ),
    "perplexity-done-object": lambda s: (
        s.payloads[-1].get("object") == "chat.completion.done"
        and all("citations" in p and isinstance(p.get("usage"), dict) for p in s.payloads)
    ),
    "snowflake": snowflake,
    "writer-message-no-done": lambda s: not s.done and any_has(choices, "message", "delta")(s),
    # responses-event
    "no-sequence-number": lambda s: (
        bool(s.payloads) and not any_has(_payloads, "sequence_number")(s)
    ),
    "background-queued": _types_in_order("response.queued", "response.in_progress"),
    "background-resumed": lambda s: (
        s.types[:1] == ["response.queued"] and seqs(s)[0] == 1 and "response.created" not in s.types
    ),
    "mantle-data-before-event": lambda s: (
        re.search(rb"(?m)^data:[^\n]*\r?\nevent:", s.raw) is not None
    ),
    "openrouter-responses": lambda s: (
        all(r.event is None for r in s.records) and comments(s) and s.records[-1].done
    ),
    "reasoning-summary": lambda s: "response.reasoning_summary_text.delta" in s.types,
    "reasoning-encrypted-content": lambda s: any(
        (p.get("item") or {}).get("encrypted_content") for p in s.payloads
    ),
    "reasoning-text": lambda s: "response.reasoning_text.delta" in s.types,
    "concatenated-turns": lambda s: s.types.count("response.created") > 1 and seqs(s).count(0) > 1,
    "sequence-gaps": lambda s: any(
        b - a > 1 for a, b in zip(seqs(s), seqs(s)[1:], strict=False) if a is not None and b
    ),
    "ends-after-item-done": lambda s: s.types[-1:] == ["response.output_item.done"],
    "lost-tail": lambda s: str(s.types[-1]).endswith(".delta"),
    "xai-uuid-ids": lambda s: (
        re.fullmatch(r"[0-9a-f-]{36}_us-east-1", str(envelope(s).get("id"))) is not None
    ),
    "xai-float32-temperature": lambda s: (
        isinstance(t := envelope(s).get("temperature"), float) and t != round(t, 6)
    ),
    "xai-no-text-done": lambda s: (
        "response.output_text.delta" in s.types
        and "response.output_text.done" not in s.types
        and s.types[-1] == "response.incomplete"
    ),
    "copilot-id-rotation": rotating_item_ids,
    "error-then-failed": lambda s: (
        "error" in s.types and s.types[s.types.index("error") + 1 :] == ["response.failed"]
    ),
    "delta-obfuscation": lambda s: any(
        str(p.get("type")).endswith(".delta") and "obfuscation" in p for p in s.payloads
    ),
    "logprobs-bytes": lambda s: any(
        "bytes" in lp
        for p in s.payloads
        if p.get("type") == "response.output_text.delta"
        for lp in dicts(p.get("logprobs"))
    ),
    # llama-stack-event
    "metrics-telemetry": metric_telemetry,
    "metrics-null": lambda s: (
        bool(s.payloads) and all(p.get("metrics", 0) is None for p in s.payloads)
    ),
    "recorder-sorted-keys": lambda s: (
        bool(events(s)) and all(list(e) == sorted(e) for e in events(s))
    ),
    "streamed-tool-call": streamed_tool_call,
    "text-then-parse": text_then_parse,
    "stop-on-succeeded": stop_on_succeeded,
    "code-interpreter-python": code_interpreter_call,
}


PROBES.update(ANTHROPIC_PROBES)


def probe(quirk: str) -> Callable[[Stream], bool]:
    """The probe of a quirk; ``item:<type>`` names an output item type of Responses."""
    if quirk.startswith("item:"):
        return item_type(quirk.removeprefix("item:"))
    return PROBES[quirk]
