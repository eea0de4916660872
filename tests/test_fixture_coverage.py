"""Each provider quirk of ``../shared/captures/NOTES.md`` has a fixture of chatx's own.

The golden fixtures (``fixtures/<format>/``) are what a fresh clone converts and checks;
the real captures are not in the project. So each quirk the capture notes list is a row
of ``TABLE``: the fixture that stands for it, the capture the notes name for it, and a
phrase of the notes. ``tests/quirk_probes.py`` holds, by quirk, a predicate that is true
when a stream shows the quirk's shape (the field, the framing, the order of events).

- Always: the fixture exists and its probe finds the shape in it, and the probe is
  false on a plain stream of the same format (a probe every stream passes proves nothing).
- With ``../shared/captures``: the probe also finds the shape in the capture named for
  it, so the fixture imitates what a server sent rather than a guess; and each phrase
  is still in NOTES.md, the list this table follows.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from tests.captures import CAPTURES
from tests.quirk_probes import PROBES, load, probe, stream

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# quirk | fixture (under fixtures/<format>/) | capture glob ("-": none was kept) | NOTES phrase
TABLE = """
[chat-chunk]
openai-usage-null | usage-null-then-usage.sse | llama-stack-rec__openai-* | "usage":null` is present on every
openai-first-delta | openai-obfuscation.sse | openai-python__parse_pydantic_model_7e5ea4.sse | {"role":"assistant","content":"","refusal":null}
openai-refusal | refusal.sse | openai-python__parse_pydantic_model_refusal_* | becomes `content:null, refusal:""`
openai-obfuscation | openai-obfuscation.sse | llama-stack-rec__openai-responses-* | random-length `obfuscation` padding
bedrock-obfuscation-in-choice | bedrock-obfuscation-in-choice.jsonl | llama-stack-rec__bedrock-runtime-* | puts `obfuscation` *inside the choice*
openai-n-choices | two-choices.sse | openai-python__parse_pydantic_model_multiple_choices_* | choices are interleaved
openai-parallel-tool-calls | tool-call-parallel.sse | otel-contrib__chat_completion_multiple_tools_* | Later chunks carry only `index` and `function.arguments`
openai-logprobs | logprobs.sse | openai-python__content_logprobs_events_* | Logprobs come as `logprobs.content[]`
openai-refusal-logprobs | openai-refusal-logprobs.sse | openai-python__refusal_logprobs_events_* | `{"content":null,"refusal":[]}`
azure-empty-first-chunk | azure-empty-first.sse | vercel-ai__openai-compatible-azure-text.jsonl | `prompt_filter_results`
azure-content-filter-results | azure-content-filter-results.sse | llama-stack-rec__azure-responses-* | Later choices carry `content_filter_results`
groq-x-groq | groq-x-groq-usage.sse | vercel-ai__groq-groq-text.jsonl | an `x_groq` object appears on the first chunk
groq-whole-tool-call | tool-call-whole.sse | vercel-ai__groq-groq-tool-call.jsonl | A tool call arrives whole in a single chunk
groq-reasoning-channel | groq-reasoning-channel.sse | pydantic-ai__groq-tool_use_failed_error_streaming* | `delta.channel:"analysis"`
groq-event-error | groq-event-error-tool-use-failed.sse | pydantic-ai__groq-tool_use_failed_error_streaming* | Mid-stream failures arrive as a named SSE event
groq-compound-stub-id | groq-compound-stub-id.sse | pydantic-ai__groq_model_web_search_tool_stream__i0.sse | the final chunk has `"id":"stub"`
openrouter-comments | crlf-comments.sse | pydantic-ai__openrouter_* | `: OPENROUTER PROCESSING` SSE comment lines
openrouter-provider | openrouter-provider-native-finish.sse | pydantic-ai__openrouter_stream_with_native_options__i0.sse | Choices have `native_finish_reason`
openrouter-usage-cost | openrouter-provider-native-finish.sse | pydantic-ai__openrouter_stream_error__i0.sse | `usage` includes `cost` and `is_byok`
openrouter-reasoning-details | openrouter-reasoning-details.sse | pydantic-ai__openrouter_* | `delta.reasoning_details[]`
openrouter-error-in-chunk | openrouter-error-after-length.sse | pydantic-ai__openrouter_stream_error__i0.sse | Errors come *inside a chunk*
novita-tool-id-zero | openrouter-novita-tool-id-zero.sse | simonw-llm__tools_streaming_variant_* | Novita gives tool calls `"id":"0"`
deepseek-reasoning-content | reasoning-content.sse | vercel-ai__deepseek-deepseek-reasoning.jsonl | the switch to the answer sends `"reasoning_content":null`
deepseek-cache-usage | deepseek-cache-hit-usage.sse | vercel-ai__deepseek-* | `prompt_cache_hit_tokens`
reasoning-field | reasoning-field.sse | llama-stack-rec__ollama-responses-* | `reasoning` (Ollama gpt-oss, Groq
mistral-content-array | mistral-content-array-thinking.sse | vercel-ai__mistral-mistral-reasoning.jsonl | sends `delta.content` as an **array**
think-inline | vllm-think-inline.jsonl | llama-stack-rec__vllm-inference-* | puts `<think>` inline in `content`
mistral-hex-ids | mistral-content-array-thinking.sse | vercel-ai__mistral-mistral-text.jsonl | Ids are bare hex with no `chatcmpl-` prefix
mistral-p-padding | mistral-p-padding.sse | vercel-ai__openai-compatible-issue-13703-mistral-thinking.jsonl | `"p":"abcdefg…"` padding field
mistral-call-without-index | mistral-tool-call-no-index.sse | vercel-ai__mistral-mistral-tool-call.jsonl | has a tool call **without `index`**
mistral-empty-name-continuation | mistral-tool-call-empty-name.sse | vercel-ai__mistral-mistral-incremental-tool-call.jsonl | put a stray `delta.index`
ollama-finish-stop-after-call | ollama-tool-call-finish-stop.jsonl | llama-stack-rec__ollama-2025-08-3ca695048bee.jsonl | sends `finish_reason:"stop"` after a tool call
old-vllm-no-usage | logprobs.sse | openllmetry__langchain-trace_propagation_stream-* | sends no usage
vllm-token-ids | vllm-token-ids-stop-reason.sse | pydantic-ai__crusoe_model_streaming__i0.sse | `choices[].stop_reason`, `choices[].token_ids`
together-text-seed | together-choice-text-seed.sse | pydantic-ai__huggingface-hf_model_thinking_part_iter__i0.sse | `choices[].seed`, `choices[].text`
novita-sla-metrics | novita-sla-metrics.sse | pydantic-ai__stream_close-cancel_recorded_provider_stream-huggingface-__i1.sse | `sla_metrics`
sglang-matched-stop | sglang-matched-stop.jsonl | vercel-ai__azure-azure-deepseek-reasoning.1.jsonl | `choices[].matched_stop`
watsonx-extras | watsonx-system-warnings.jsonl | llama-stack-rec__watsonx-responses-* | `system.warnings`
xai-grok-beta | xai-role-every-delta.sse | - | repeated `role` in every delta
deepinfra | deepinfra-spaced-json.sse | - | `usage.estimated_cost`
perplexity-done-object | perplexity-completion-done.jsonl | vercel-ai__perplexity-* | `"object":"chat.completion.done"`
snowflake | snowflake-empty-refusal.sse | pydantic-ai__snowflake_model_streaming__i0.sse | `refusal:""` in every delta
writer-message-no-done | writer-message-no-done.sse | openllmetry__writer-* | `choices[].message` is sent alongside `delta`
[responses-event]
no-sequence-number | openai-no-sequence-number.sse | pydantic-ai__openai_responses_stream__i* | have **no `sequence_number`**
background-queued | background-queued.sse | pydantic-ai__openai_responses-background_mode_streaming_vcr__i0.sse | emits `response.queued` before
background-resumed | background-resumed-starting-after.sse | pydantic-ai__openai_responses-background_mode_streaming_starting_after_vcr__i1.sse | starts at `sequence_number: 1`
mantle-data-before-event | bedrock-mantle-data-before-event.sse | pydantic-ai__bedrock_mantle-* | writes `data:` *before* `event:`
openrouter-responses | openrouter-no-event-lines-done.sse | pydantic-ai__openai_responses_raw_cot_stream_openrouter__i0.sse | sends no `event:` lines
reasoning-summary | reasoning-summary.sse | vercel-ai__xai-xai-text-streaming.1.jsonl | `response.reasoning_summary_text.*`
reasoning-encrypted-content | reasoning-summary.sse | vercel-ai__openai-openai-reasoning-encrypted-content.1.jsonl | encrypted_content on items
reasoning-text | reasoning-text.sse | vercel-ai__open-responses-lmstudio-* | raw `response.reasoning_text.delta/done`
concatenated-turns | two-turns.jsonl | vercel-ai__openai-openai-reasoning-encrypted-content.1.jsonl | sequence_number resets to 0
sequence-gaps | sequence-gaps.sse | vercel-ai__openai-openai-phase.1.jsonl | `sequence_gaps`
ends-after-item-done | ends-after-item-done.jsonl | vercel-ai__openai-openai-issue-8562-missing-reasoning-summary.1.jsonl | ends at `response.output_item.done` with no terminal event
lost-tail | truncated.sse | - | a repro of an xAI stream that lost its tail
xai-uuid-ids | xai-uuid-ids.jsonl | vercel-ai__openai-compatible-basic-text.1.jsonl | xAI Responses uses UUID ids
xai-float32-temperature | xai-uuid-ids.jsonl | vercel-ai__xai-* | float temperatures like `0.699999988079071`
xai-no-text-done | xai-no-text-done-incomplete.jsonl | vercel-ai__openai-compatible-reasoning.1.jsonl | **no `response.output_text.done`**
copilot-id-rotation | copilot-item-id-rotation.jsonl | vercel-ai__openai-github-copilot-id-rotation.1.jsonl | **rotates item ids
error-then-failed | failed-error.sse | vercel-ai__openai-openai-error.1.jsonl | then a top-level `error` event, then `response.failed`
delta-obfuscation | openai-obfuscation.sse | pydantic-ai__openai_responses_model_mcp_server_tool_stream__i0.sse | `obfuscation` appears on OpenAI delta events
logprobs-bytes | logprobs.sse | pydantic-ai__openai_instructions_with_responses_logprobs_streaming__i0.sse | `response.output_text.delta.logprobs[]`
item:web_search_call | web-search.sse | pydantic-ai__openai_responses_model_web_search_tool_stream__i0.sse | web_search_call
item:file_search_call | builtin-file-search-call.sse | pydantic-ai__openai_responses_model_file_search_tool_stream__i3.sse | file_search_call
item:code_interpreter_call | builtin-code-interpreter-call.sse | pydantic-ai__openai_responses_code_execution_return_image_stream__i0.sse | code_interpreter_call
item:image_generation_call | builtin-image-generation-call.sse | vercel-ai__azure-azure-image-generation-tool.1.jsonl | image_generation_call (base64 partial images)
item:mcp_list_tools | builtin-mcp-call.sse | pydantic-ai__openai_responses_model_mcp_server_tool_stream__i0.sse | mcp_list_tools
item:mcp_call | builtin-mcp-call.sse | pydantic-ai__openai_responses_model_mcp_server_tool_stream__i0.sse | mcp_call
item:mcp_approval_request | builtin-mcp-call.sse | vercel-ai__openai-openai-mcp-tool-approval.1.jsonl | mcp_approval_request
item:custom_tool_call | builtin-custom-tool-call.sse | vercel-ai__openai-openai-custom-text-tool.1.jsonl | custom_tool_call
item:shell_call | builtin-shell-call.sse | vercel-ai__openai-openai-shell-container.1.jsonl | shell_call
item:local_shell_call | builtin-items-without-events.sse | vercel-ai__openai-openai-local-shell-tool.1.jsonl | local_shell_call
item:apply_patch_call | builtin-apply-patch-call.sse | vercel-ai__openai-openai-apply-patch-tool.1.jsonl | apply_patch_call
item:tool_search_call | builtin-items-without-events.sse | pydantic-ai__tool_search-openai_client_tool_search_streaming__i0.sse | tool_search_call
item:compaction | builtin-items-without-events.sse | pydantic-ai__openai_responses_compact_stateful_mode_stream__i2.sse | compaction items
[llama-stack-event]
metrics-telemetry | fireworks-metrics-telemetry.jsonl | llama-stack-recorded__*-text-4chunks-* | appear on the `complete` chunk only
metrics-null | text-nometrics.jsonl | llama-stack-recorded__*-nometrics-* | Some streams have `metrics:null` everywhere
recorder-sorted-keys | fireworks-metrics-telemetry.jsonl | llama-stack-recorded__* | Keys appear in the sorted order the recorder wrote
streamed-tool-call | toolstream-json.jsonl | llama-stack-recorded__*-toolstream-* | Streamed: `tool_call` deltas go
text-then-parse | text-then-parse-json.jsonl | llama-stack-recorded__*-tool-* | Text-then-parse: the tool-call JSON streams as ordinary
stop-on-succeeded | toolstream-json.jsonl | llama-stack-recorded__*-tool* | already carries `stop_reason:"end_of_turn"`, one chunk before
code-interpreter-python | builtin-code-interpreter.jsonl | llama-stack-recorded__* | writes code-interpreter calls as raw python
[anthropic-event]
anthropic-json-padding | text.sse | simonw-llm-anthropic__prompt__i0.sse | carry a random run of spaces
anthropic-ping-after-first-block | text.sse | openllmetry__anthropic-anthropic_message_streaming_legacy__i0.sse | It usually comes right after the first `content_block_start`
anthropic-delta-input-tokens | text.sse | vercel-ai__anthropic-anthropic-text.jsonl | also repeats `input_tokens`, `cache_creation_input_tokens` and `cache_read_input_tokens`
anthropic-cache-creation-object | text.sse | vercel-ai__anthropic-anthropic-text.jsonl | `cache_creation:{ephemeral_5m_input_tokens,ephemeral_1h_input_tokens}` object
anthropic-signature | thinking-signature.sse | simonw-llm-anthropic__thinking_prompt__i0.sse | then one `signature_delta`
anthropic-empty-thinking-delta | thinking-signature.sse | openinference-js__anthropic-thinking-streaming.sse | send an empty `{"thinking":""}` delta right before the signature
anthropic-redacted-thinking | redacted-thinking.sse | pydantic-ai__anthropic_model_thinking_part_redacted_stream* | carries its opaque `data` in `content_block_start`
anthropic-empty-first-input-json | tool-use.sse | openinference__anthropic-multiple_tool_calling_streaming__i0.sse | The first `input_json_delta` is always `partial_json:""`
anthropic-tool-without-arguments | tool-use.sse | vercel-ai__anthropic-anthropic-tool-no-args.jsonl | A tool with no arguments sends only that empty delta
anthropic-server-result-whole | web-search.sse | pydantic-ai__anthropic_web_search_tool_stream__i0.sse | The result blocks arrive whole in `content_block_start`
anthropic-citation-before-text | web-search.sse | pydantic-ai__anthropic_web_search_tool_stream__i0.sse | Each `citations_delta` arrives before the text deltas it annotates
anthropic-char-location | citations.sse | ruby-llm__chat_citations_* | or `char_location` for the document citations
anthropic-pause-turn | pause-turn.sse | pydantic-ai__anthropic-pause_turn_web_search_streaming_vcr__i0.sse | A long search stops with `stop_reason:"pause_turn"`
anthropic-stop-sequence | stop-sequence.sse | mirascope__call_with_params-anthropic-stream__i0.sse | The matched string is in `delta.stop_sequence`
anthropic-unstopped-block | missing-block-stop.sse | anthropic-sdk-python__incomplete_partial_json_response.sse | gets no `content_block_stop` before the `message_delta`
anthropic-no-cache-fields | max-tokens.sse | dd-trace-py__anthropic_completion_stream__i0.sse | they are absent from claude-3-haiku (2024), claude-3-opus (early 2024)
bedrock-invocation-metrics | bedrock.jsonl | *bedrock* | carries `"amazon-bedrock-invocationMetrics":{inputTokenCount,outputTokenCount,invocationLatency,firstByteLatency}`
bedrock-ids | bedrock.jsonl | *bedrock* | ids are `msg_bdrk_…` and `toolu_bdrk_…`
anthropic-prefilled-turn | concatenated-prefilled.jsonl | vercel-ai__anthropic-anthropic-programmatic-tool-calling.1.jsonl | Each intermediate turn is just a `message_start` followed by `message_stop`
anthropic-concatenated | concatenated-prefilled.jsonl | vercel-ai__anthropic-anthropic-programmatic-tool-calling.1.jsonl | Several vercel fixtures concatenate several turns in one file
"""


class Quirk(NamedTuple):
    name: str
    fmt: str
    fixture: str
    capture: str | None
    note: str


def _parse(table: str) -> list[Quirk]:
    quirks, fmt = [], ""
    for line in table.strip().splitlines():
        if line.startswith("["):
            fmt = line.strip("[]")
            continue
        name, fixture, capture, note = (cell.strip() for cell in line.split(" | "))
        quirks.append(Quirk(name, fmt, fixture, None if capture == "-" else capture, note))
    return quirks


QUIRKS = _parse(TABLE)


# A plain stream of each format that shows none of the quirks.
_CHUNK = '"id":"chatcmpl-plain","object":"chat.completion.chunk","created":1,"model":"m"'
_RESP = '"id":"resp_plain","object":"response","created_at":1,"model":"m","output":[]'
_MSG = '"id":"msg_1","type":"message","content":[],"role":"assistant"'
_LLS = '{"event":{"event_type":"%s","delta":{"type":"text","text":"%s"},"logprobs":null,'
PLAIN = {
    "chat-chunk": "".join(
        f"data: {{{_CHUNK},{body}}}\n\n"
        for body in [
            '"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,'
            '"finish_reason":null}]',
            '"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]',
            '"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}',
        ]
    )
    + "data: [DONE]\n\n",
    "responses-event": "".join(
        f'event: {kind}\ndata: {{"type":"{kind}",{body},"sequence_number":{n}}}\n\n'
        for n, (kind, body) in enumerate(
            [
                ("response.created", f'"response":{{{_RESP},"status":"in_progress"}}'),
                ("response.in_progress", f'"response":{{{_RESP},"status":"in_progress"}}'),
                (
                    "response.output_item.added",
                    f'"output_index":0,"item":{{{_MSG},"status":"in_progress"}}',
                ),
                (
                    "response.output_item.done",
                    f'"output_index":0,"item":{{{_MSG},"status":"completed"}}',
                ),
                ("response.completed", f'"response":{{{_RESP},"status":"completed"}}'),
            ]
        )
    ),
    "llama-stack-event": (_LLS % ("start", "") + '"stop_reason":null},"metrics":null}\n')
    + (_LLS % ("progress", "Hi") + '"stop_reason":null},"metrics":null}\n')
    + (
        _LLS % ("complete", "")
        + '"stop_reason":"end_of_turn"},"metrics":[{"metric":"prompt_tokens","value":1,"unit":null}]}\n'
    ),
}

_ANT = [
    ("message_start", '"message":{"id":"msg_plain","type":"message","role":"assistant",'
     '"model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
     '"usage":{"input_tokens":1,"cache_read_input_tokens":0,"output_tokens":1}}'),
    ("content_block_start", '"index":0,"content_block":{"type":"text","text":""}'),
    ("content_block_delta", '"index":0,"delta":{"type":"text_delta","text":"Hi"}'),
    ("content_block_stop", '"index":0'),
    ("message_delta", '"delta":{"stop_reason":"end_turn","stop_sequence":null},'
     '"usage":{"output_tokens":2}'),
]  # fmt: skip
PLAIN["anthropic-event"] = (
    "".join(f'event: {kind}\ndata: {{"type":"{kind}",{body}}}\n\n' for kind, body in _ANT)
    + 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)

ids = [q.name for q in QUIRKS]
needs_captures = pytest.mark.skipif(
    not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent"
)
recorded = [q for q in QUIRKS if q.capture]


def test_every_quirk_has_one_probe() -> None:
    assert len(set(ids)) == len(ids)
    assert set(PROBES) == {n for n in ids if not n.startswith("item:")}


@pytest.mark.parametrize("quirk", QUIRKS, ids=ids)
def test_the_fixture_shows_the_quirk(quirk: Quirk) -> None:
    path = FIXTURES / quirk.fmt / quirk.fixture
    assert path.is_file(), f"{quirk.name}: no fixture {path}"
    assert probe(quirk.name)(load(path)), f"{quirk.name}: {path.name} does not show the shape"


@pytest.mark.parametrize("quirk", QUIRKS, ids=ids)
def test_a_plain_stream_does_not_show_the_quirk(quirk: Quirk) -> None:
    plain = stream(PLAIN[quirk.fmt].encode())
    assert len(plain.payloads) >= 3
    assert not probe(quirk.name)(plain), f"{quirk.name}: the probe is true of any stream"


@needs_captures
@pytest.mark.parametrize("quirk", recorded, ids=[q.name for q in recorded])
def test_the_named_capture_shows_the_quirk(quirk: Quirk) -> None:
    found = sorted((CAPTURES / quirk.fmt).glob(str(quirk.capture)))
    assert found, f"{quirk.name}: no capture matches {quirk.fmt}/{quirk.capture}"
    assert any(probe(quirk.name)(load(p)) for p in found), (
        f"{quirk.name}: no capture of {quirk.capture} shows the shape the fixture stands for"
    )


@needs_captures
def test_every_quirk_is_in_the_capture_notes() -> None:
    notes = " ".join((CAPTURES / "NOTES.md").read_text(encoding="utf-8").split())
    missing = [q.name for q in QUIRKS if " ".join(q.note.split()) not in notes]
    assert not missing, f"quirks no longer described in NOTES.md: {missing}"
