"""Trust III, class 8: values carried, never guessed.

A count, an error's usage or a thinking block that the source states reaches every target
that can hold it as the source said it; a value is computed only where the source left it
out, and what a target cannot hold is said in a note.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.inprocess import Result, assert_clean, run
from tests.paths import SHARED
from tests.streams import jsonl, payloads

CHAT, RESPONSES, ANTHROPIC, LLAMA = (
    "chat-chunk",
    "responses-event",
    "anthropic-event",
    "llama-stack-event",
)
CAPTURES = SHARED / "captures"
XAI = CAPTURES / "chat-chunk" / "vercel-ai__openai-compatible-openai-compatible-text.jsonl"


def chat_stream(usage: dict[str, Any]) -> bytes:
    """A one-word chat stream ending with the given usage chunk."""
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return jsonl(
        [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": usage},
        ]
    )


def chatx(args: list[str], data: bytes) -> Result:
    result = run(args, data)
    assert_clean(result, {0})
    return result


def streamed_total(data: bytes, target: str) -> int | None:
    """The total token count ``convert --to target`` writes."""
    out = chatx(["convert", "--to", target], data).stdout
    for payload in reversed(payloads(out)):
        if target == CHAT and payload.get("usage"):
            return int(payload["usage"]["total_tokens"])
        if target == RESPONSES and (payload.get("response") or {}).get("usage"):
            return int(payload["response"]["usage"]["total_tokens"])
        if target == LLAMA and payload.get("metrics"):
            return _llama_total(payload["metrics"])
    return None


def collected_total(data: bytes, target: str) -> int | None:
    """The total token count ``collect --as target`` writes."""
    obj = json.loads(chatx(["collect", "--as", target], data).stdout)
    if target == LLAMA:
        return _llama_total(obj["metrics"])
    return int(obj["usage"]["total_tokens"])


def _llama_total(metrics: list[dict[str, Any]]) -> int:
    return next(int(m["value"]) for m in metrics if m["metric"] == "total_tokens")


REASONING = {
    "prompt_tokens": 12,
    "completion_tokens": 2,
    "total_tokens": 354,
    "completion_tokens_details": {"reasoning_tokens": 340},
}
STATED = [
    REASONING,
    {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 0},  # whatever it says
]


@pytest.mark.parametrize("usage", STATED, ids=["reasoning", "sum", "zero"])
@pytest.mark.parametrize("target", [CHAT, RESPONSES, LLAMA])
def test_a_stated_total_is_carried(usage: dict[str, Any], target: str) -> None:
    data = chat_stream(usage)
    assert streamed_total(data, target) == usage["total_tokens"]
    assert collected_total(data, target) == usage["total_tokens"]


@pytest.mark.parametrize("target", [CHAT, RESPONSES, LLAMA])
def test_a_total_left_out_is_input_plus_output(target: str) -> None:
    data = chat_stream({"prompt_tokens": 3, "completion_tokens": 4})
    assert streamed_total(data, target) == 7
    assert collected_total(data, target) == 7


@pytest.mark.parametrize("target", [CHAT, RESPONSES, LLAMA])
def test_a_total_through_another_format_comes_back(target: str) -> None:
    """chat → target → chat: the stated total survives the middle format."""
    middle = chatx(["convert", "--to", target], chat_stream(REASONING)).stdout
    assert streamed_total(middle, CHAT) == 354


def test_anthropic_has_no_total_and_says_so() -> None:
    result = chatx(["convert", "--to", ANTHROPIC], chat_stream(REASONING))
    assert "usage total 354: Anthropic usage has no total" in result.err
    # A total that is input + output loses nothing: no note.
    plain = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert "total" not in chatx(["convert", "--to", ANTHROPIC], chat_stream(plain)).err


@pytest.mark.skipif(not XAI.exists(), reason="../shared/captures is absent")
@pytest.mark.parametrize("target", [CHAT, RESPONSES, LLAMA])
def test_xai_total_with_reasoning_tokens_is_carried(target: str) -> None:
    """grok-3-mini: 12 prompt + 2 completion tokens, total 354 (340 reasoning)."""
    data = XAI.read_bytes()
    assert streamed_total(data, target) == 354
    assert collected_total(data, target) == 354


# -- usage on an error chunk ------------------------------------------------------------

OPENROUTER = CAPTURES / "chat-chunk" / "pydantic-ai__openrouter_stream_error__i0.sse"
ERROR_USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def error_chunk_stream(finish: bool) -> bytes:
    """OpenRouter's shape: text (a finish or not), then a chunk with error and usage."""
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    rows: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}
    ]
    if finish:
        rows.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    last = {"index": 0, "delta": {"content": ""}, "finish_reason": None}
    error = {"message": "Token limit reached", "code": 400}
    rows.append({**base, "choices": [last], "error": error, "usage": ERROR_USAGE})
    return jsonl(rows)


def usages(data: bytes, fmt: str) -> list[tuple[int | None, int | None]]:
    """(input, output) of every usage a stream states, read back by chatx itself."""
    out = json.loads(chatx(["collect", "--as", CHAT, "--from", fmt], data).stdout)
    usage = out.get("usage") or {}
    return [(usage.get("prompt_tokens"), usage.get("completion_tokens"))]


@pytest.mark.parametrize("finish", [False, True], ids=["no-finish", "finish"])
@pytest.mark.parametrize("middle", [RESPONSES, ANTHROPIC, LLAMA])
def test_error_chunk_usage_reaches_every_target_and_back(finish: bool, middle: str) -> None:
    data = error_chunk_stream(finish)
    there = chatx(["convert", "--to", middle], data)
    assert usages(there.stdout, middle) == [(5, 2)]
    back = chatx(["convert", "--to", CHAT, "--from", middle], there.stdout)
    assert "usage that came after the error frame" not in back.err
    stated = [p["usage"] for p in payloads(back.stdout) if p.get("usage")]
    assert [(u["prompt_tokens"], u["completion_tokens"]) for u in stated] == [(5, 2)]


def test_responses_failed_usage_rides_on_the_chat_error_chunk() -> None:
    """response.failed carries usage after the error event: chat writes one chunk with no
    choices holding both, as OpenRouter does, and chat reads both back."""
    there = chatx(["convert", "--to", RESPONSES], error_chunk_stream(False)).stdout
    back = chatx(["convert", "--to", CHAT], there)
    last = payloads(back.stdout)[-1]
    assert last["choices"] == [] and last["error"]["message"] == "Token limit reached"
    assert last["usage"]["prompt_tokens"] == 5 and last["usage"]["total_tokens"] == 7
    assert "after the error" not in back.err


def test_an_error_without_usage_is_still_a_bare_frame() -> None:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    data = jsonl(
        [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
            {"error": {"message": "boom"}},
        ]
    )
    there = chatx(["convert", "--to", RESPONSES], data).stdout
    back = chatx(["convert", "--to", CHAT], there).stdout
    errors = [p for p in payloads(back) if "error" in p]
    assert len(errors) == 1 and "choices" not in errors[0]


@pytest.mark.skipif(not OPENROUTER.exists(), reason="../shared/captures is absent")
@pytest.mark.parametrize("middle", [RESPONSES, ANTHROPIC, LLAMA])
def test_openrouter_error_usage_survives_a_round_trip(middle: str) -> None:
    there = chatx(["convert", "--to", middle], OPENROUTER.read_bytes()).stdout
    back = chatx(["convert", "--to", CHAT, "--from", middle], there)
    stated = [p["usage"] for p in payloads(back.stdout) if p.get("usage")]
    assert [(u["prompt_tokens"], u["completion_tokens"], u["total_tokens"]) for u in stated] == [
        (43, 10, 53)
    ]


# -- an empty thinking block with its signature ------------------------------------------

ADVISOR = CAPTURES / "anthropic-event" / "pydantic-ai__anthropic_advisor_tool_stream__i0.sse"


def anthropic_stream(first_block: dict[str, Any], deltas: list[dict[str, Any]]) -> bytes:
    """A message whose first block is ``first_block`` (with ``deltas``), then text."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": first_block},
        *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


SIGNATURE = "EqQBCkYIBxgCKkA"
EMPTY_THINKING = anthropic_stream(
    {"type": "thinking", "thinking": "", "signature": ""},
    [{"type": "signature_delta", "signature": SIGNATURE}],
)
EMPTY_DELTA_THINKING = anthropic_stream(
    {"type": "thinking", "thinking": "", "signature": ""},
    [
        {"type": "thinking_delta", "thinking": ""},
        {"type": "signature_delta", "signature": SIGNATURE},
    ],
)
REDACTED = anthropic_stream({"type": "redacted_thinking", "data": SIGNATURE}, [])
SHOWN = anthropic_stream(
    {"type": "thinking", "thinking": "", "signature": ""},
    [
        {"type": "thinking_delta", "thinking": "hmm"},
        {"type": "signature_delta", "signature": SIGNATURE},
    ],
)


def first_blocks(data: bytes) -> list[dict[str, Any]]:
    """The first content block of each message ``collect --as anthropic-event`` makes."""
    message = json.loads(chatx(["collect", "--as", ANTHROPIC], data).stdout)
    return [message["content"][0]]


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": SIGNATURE}


@pytest.mark.parametrize(
    ("data", "block"),
    [
        (EMPTY_THINKING, thinking("")),
        (EMPTY_DELTA_THINKING, thinking("")),
        (SHOWN, thinking("hmm")),
        (REDACTED, {"type": "redacted_thinking", "data": SIGNATURE}),
    ],
    ids=["empty", "empty-delta", "shown", "redacted"],
)
def test_thinking_through_responses_comes_back_as_it_was(data: bytes, block: Any) -> None:
    assert first_blocks(data) == [block]
    there = chatx(["convert", "--to", RESPONSES], data)
    back = chatx(["convert", "--to", ANTHROPIC], there.stdout)
    assert first_blocks(back.stdout) == [block]
    assert "signature" not in there.err + back.err  # nothing said lost about it
    collected = chatx(["collect", "--as", RESPONSES], data).stdout
    assert first_blocks(chatx(["collect", "--as", ANTHROPIC], collected).stdout) == [block]


def test_responses_tells_empty_thinking_from_withheld_reasoning() -> None:
    """An empty summary part: a summary shown, empty; none: the reasoning withheld."""

    def reasoning_item(data: bytes) -> dict[str, Any]:
        out = json.loads(chatx(["collect", "--as", RESPONSES], data).stdout)
        return next(i for i in out["output"] if i["type"] == "reasoning")

    assert reasoning_item(EMPTY_THINKING)["summary"] == [{"type": "summary_text", "text": ""}]
    assert reasoning_item(REDACTED)["summary"] == []
    streamed = payloads(chatx(["convert", "--to", RESPONSES], EMPTY_THINKING).stdout)
    kinds = [p["type"] for p in streamed]
    assert "response.reasoning_summary_part.added" in kinds


@pytest.mark.parametrize("target", [CHAT, LLAMA])
def test_a_signature_chat_and_llama_cannot_hold_is_said_lost(target: str) -> None:
    result = chatx(["convert", "--to", target], EMPTY_THINKING)
    assert "reasoning.signature has no place" in result.err


@pytest.mark.skipif(not ADVISOR.exists(), reason="../shared/captures is absent")
def test_the_advisor_captures_empty_thinking_stays_thinking() -> None:
    data = ADVISOR.read_bytes()
    before = json.loads(chatx(["collect", "--as", ANTHROPIC], data).stdout)["content"]
    there = chatx(["convert", "--to", RESPONSES], data).stdout
    after = json.loads(chatx(["collect", "--as", ANTHROPIC], there).stdout)["content"]
    kinds = [b["type"] for b in before if "thinking" in b["type"]]
    assert kinds and kinds == [b["type"] for b in after if "thinking" in b["type"]]
    assert [b.get("signature") for b in before if b["type"] == "thinking"] == [
        b.get("signature") for b in after if b["type"] == "thinking"
    ]
