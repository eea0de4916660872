"""``validate`` over every real capture in ../shared/captures, calibrated by hand.

A real capture may be flagged only for a real violation: every capture that gets an
error is listed below with the reason, found by reading the capture. A new error on a
capture, or a listed one that goes away, fails the test with the full table.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.paths import SHARED

CAPTURES = SHARED / "captures"
FORMATS = ("chat-chunk", "responses-event", "llama-stack-event")

pytestmark = pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no captures folder at {CAPTURES}")

EXPECTED_ERRORS: dict[str, set[str]] = {
    # -- chat-chunk
    # Writer (palmyra) never sends data: [DONE].
    "openllmetry__writer-writer_async_streaming_chat_legacy__i0.sse": {"CHK015"},
    "openllmetry__writer-writer_async_streaming_chat_multiple_choices_legacy__i0.sse": {"CHK015"},
    "openllmetry__writer-writer_async_streaming_chat_multiple_tool_call_requests_legacy__i0.sse": {
        "CHK015"
    },
    "openllmetry__writer-writer_async_streaming_chat_tool_call_request_legacy__i0.sse": {"CHK015"},
    # groq/compound sends a new chatcmpl-<uuid> id on every chunk (and "stub" at the end).
    "pydantic-ai__groq_model_web_search_tool_stream__i0.sse": {"CHK002"},
    # OpenRouter repeats the finish_reason on the next chunk (the usage chunk, or twice
    # "length" before its in-chunk error).
    "pydantic-ai__openrouter_advisor_tool_stream__i0.sse": {"CHK010"},
    "pydantic-ai__openrouter_stream_error__i0.sse": {"CHK010"},
    "pydantic-ai__openrouter_web_search_annotations_stream__i0.sse": {"CHK010"},
    "pydantic-ai__openrouter_web_search_tool_usage_stream__i0.sse": {"CHK010"},
    # Snowflake Cortex sends no finish_reason at all.
    "pydantic-ai__snowflake_model_streaming__i0.sse": {"CHK009"},
    "pydantic-ai__snowflake_thinking_streaming__i0.sse": {"CHK009"},
    # OpenRouter → Novita: no finish_reason; variant a also repeats the call's id "0" and
    # name in its second entry (clients would build "00" / "llm_versionllm_version").
    "simonw-llm__tools_streaming_variant_a__i0.sse": {"CHK007", "CHK009"},
    "simonw-llm__tools_streaming_variant_b__i0.sse": {"CHK009"},
    # Mistral sends a tool call without tool_calls[].index.
    "vercel-ai__mistral-mistral-tool-call.jsonl": {"CHK005"},
    # Perplexity's last chunk is "object": "chat.completion.done".
    "vercel-ai__perplexity-perplexity-citations.jsonl": {"CHK001"},
    "vercel-ai__perplexity-perplexity-text.jsonl": {"CHK001"},
    # -- responses-event
    # Two mcp_list_tools items are added but never get output_item.done (the test's name
    # says it: the client backfills them from response.completed).
    "pydantic-ai__openai_responses_model_mcp_list_tools_stream_backfills_missing_results__i0.sse": {
        "RSP015"
    },
    # OpenRouter: the reasoning item's id in response.output (rs_tmp_…) is not the one
    # output_item.done sent.
    "pydantic-ai__openai_responses_raw_cot_stream_openrouter__i0.sse": {"RSP026"},
    # Early-2025 OpenAI recordings: no sequence_number on any event.
    "pydantic-ai__openai_responses_stream__i0.sse": {"RSP004"},
    "pydantic-ai__openai_responses_stream__i1.sse": {"RSP004"},
    # xAI grok-3-mini: the message item is never closed (no output_text.done, no
    # output_item.done) before response.incomplete.
    "vercel-ai__openai-compatible-reasoning.1.jsonl": {"RSP015"},
    # xAI grok-4-fast: the function call arrives whole in output_item.added, with no
    # function_call_arguments.done before output_item.done.
    "vercel-ai__openai-compatible-tool-call.1.jsonl": {"RSP021"},
    # GitHub Copilot rotates item and response ids between events of the same item.
    "vercel-ai__openai-github-copilot-id-rotation.1.jsonl": {"RSP014", "RSP026", "RSP032"},
    # Trimmed by the fixture's author: no sequence numbers, an item done that was never
    # added, lifecycle responses without status.
    "vercel-ai__openai-issue-18970-programmatic-approval.1.jsonl": {
        "RSP002",
        "RSP004",
        "RSP009",
        "RSP011",
        "RSP012",
    },
    # Trimmed: sequence gaps (0→4, 28→30) drop item 0 and the input's .done event.
    "vercel-ai__openai-openai-custom-text-tool.1.jsonl": {"RSP005", "RSP012", "RSP021"},
    # Trimmed: sequence gaps and no terminal event (ends at output_item.done).
    "vercel-ai__openai-openai-issue-8562-missing-reasoning-summary.1.jsonl": {"RSP005", "RSP007"},
    # Trimmed: gaps 5→41, 43→49, 52→126 drop deltas, so .done texts disagree with them.
    "vercel-ai__openai-openai-phase.1.jsonl": {"RSP005", "RSP012", "RSP023"},
    # Hand-edited (ids msg_0f1a2b3c…): deltas join to "The command ran successfully."
    # but output_text.done has a longer text.
    "vercel-ai__openai-openai-shell-container.1.jsonl": {"RSP023"},
    # xAI: web_search_call action.sources in response.output differ from the
    # output_item.done item.
    "vercel-ai__xai-xai-13218-web-search-provider-tool-result.1.jsonl": {"RSP026"},
}

# What --schema adds (the openai SDK types, openai>=1.99).
EXPECTED_SCHEMA_ERRORS: dict[str, set[str]] = {
    # Mistral magistral sends delta.content as an array of thinking/text blocks.
    "pydantic-ai__mistral_model_thinking_part_iter__i0.sse": {"CHK100"},
    "vercel-ai__mistral-mistral-reasoning.jsonl": {"CHK100"},
    "vercel-ai__openai-compatible-issue-13703-mistral-thinking.jsonl": {"CHK100"},
    # Snowflake sends service_tier "" (not a service tier).
    "pydantic-ai__snowflake_model_streaming__i0.sse": {"CHK100"},
    "pydantic-ai__snowflake_thinking_streaming__i0.sse": {"CHK100"},
    # Perplexity's chat.completion.done object.
    "vercel-ai__perplexity-perplexity-citations.jsonl": {"CHK100"},
    "vercel-ai__perplexity-perplexity-text.jsonl": {"CHK100"},
    # No sequence_number (required by the SDK types as by the spec).
    "pydantic-ai__openai_responses_stream__i0.sse": {"RSP100"},
    "pydantic-ai__openai_responses_stream__i1.sse": {"RSP100"},
    "vercel-ai__openai-issue-18970-programmatic-approval.1.jsonl": {"RSP100"},
    # output_text.delta/.done without logprobs (xAI; the trimmed OpenAI phase fixture).
    "vercel-ai__openai-compatible-basic-text.1.jsonl": {"RSP100"},
    "vercel-ai__openai-openai-phase.1.jsonl": {"RSP100"},
    "vercel-ai__xai-xai-text-streaming.1.jsonl": {"RSP100"},
    "vercel-ai__xai-xai-text-with-reasoning-streaming-store-false.1.jsonl": {"RSP100"},
    "vercel-ai__xai-xai-text-with-reasoning-streaming.1.jsonl": {"RSP100"},
    "vercel-ai__xai-xai-web-search-tool.1.jsonl": {"RSP100"},
    "vercel-ai__xai-xai-x-search-tool.jsonl": {"RSP100"},
}


def captures() -> list[tuple[str, Path]]:
    return [(fmt, path) for fmt in FORMATS for path in sorted((CAPTURES / fmt).iterdir())]


def error_table(schema: bool) -> tuple[dict[str, set[str]], str]:
    """Rule ids of the error findings per flagged capture, and a readable table."""
    flagged: dict[str, set[str]] = {}
    rows = []
    for fmt, path in captures():
        container, records = read_records(path.read_bytes())
        findings = validate_records(
            records, fmt, container=container, file=path.name, schema=schema
        )
        errors = [f for f in findings if f.severity == "E"]
        if errors:
            flagged[path.name] = {f.rule for f in errors}
            first = errors[0]
            rows.append(
                f"{path.name}:{first.line}: {' '.join(sorted(flagged[path.name]))}"
                f" — {first.message}"
            )
    return flagged, "\n".join(rows)


def test_every_format_has_captures() -> None:
    for fmt in FORMATS:
        assert any((CAPTURES / fmt).iterdir()), fmt


def test_captures_flagged_only_for_confirmed_violations() -> None:
    flagged, table = error_table(schema=False)
    print(table)
    assert flagged == EXPECTED_ERRORS, table


def test_captures_under_schema() -> None:
    """--schema over every capture (about 2 s, most of it importing openai)."""
    pytest.importorskip("openai")
    flagged, table = error_table(schema=True)
    expected: dict[str, set[str]] = defaultdict(set)
    for source in (EXPECTED_ERRORS, EXPECTED_SCHEMA_ERRORS):
        for name, rules in source.items():
            expected[name] |= rules
    assert flagged == dict(expected), table


def test_warnings_stay_warnings_on_real_streams() -> None:
    """The known-harmless provider quirks are reported, but only as warnings."""
    seen: dict[str, set[str]] = defaultdict(set)
    for fmt, path in captures():
        container, records = read_records(path.read_bytes())
        for finding in validate_records(records, fmt, container=container):
            if finding.severity == "W":
                seen[finding.rule].add(path.name)
    # created stamped per chunk (Groq, Ollama, xAI…), usage on every chunk (Perplexity),
    # older Ollama's "stop" after a tool call, the resumed background stream.
    assert {"CHK003", "CHK014", "CHK012", "RSP006"} <= set(seen)
    assert (
        "pydantic-ai__openai_responses-background_mode_streaming_starting_after_vcr__i1.sse"
        in seen["RSP006"]
    )
