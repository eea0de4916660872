"""A non-streaming ``chat.completion`` whose message has signatures or citations, read as
the chunks a server streams: the reasoning's signatures (OpenRouter's
``reasoning_details``, LiteLLM's ``thinking_blocks``) ride on the chunk that carries the
reasoning, so they close its reasoning item, and the message's ``annotations`` on the
chunk that carries the content, so they cite its message item. Chat → chat keeps the
object: ``collect`` of it, and of its chunks, give back its message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatx.validation import validate_records
from tests.builders.anthropic_event import ANTHROPIC
from tests.streams import CHAT, RESPONSES, convert, payloads
from tests.test_collect_across import collected, same_as_converted

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / CHAT
SIGNED_CITED = FIXTURES / "nonstream-signed-cited.json"
SIGNATURE = "c2lnLWFsbWFuYWM="
REDACTED = "cmVkYWN0ZWQ="


def completion(message: dict[str, Any]) -> bytes:
    body = {
        "id": "chatcmpl-wholesigned",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "fixture-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
    }
    return orjson.dumps(body)


def litellm() -> bytes:
    """LiteLLM's message from Anthropic: the blocks, repeated in provider_specific_fields."""
    blocks = [
        {"type": "thinking", "thinking": "Look at the almanac.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
    ]
    return completion(
        {
            "role": "assistant",
            "content": "Low tide is at six.",
            "reasoning_content": "Look at the almanac.",
            "thinking_blocks": blocks,
            "provider_specific_fields": {"thinking_blocks": blocks},
        }
    )


def blocks(data: bytes) -> list[dict[str, Any]]:
    """The content blocks of anthropic output, each with its deltas joined."""
    out: list[dict[str, Any]] = []
    for event in payloads(data):
        if event["type"] == "content_block_start":
            out.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "citations_delta":
                out[-1].setdefault("citations", []).append(delta["citation"]["url"])
            for key in ("thinking", "signature", "text"):
                if key in delta:
                    out[-1][key] = out[-1].get(key, "") + delta[key]
    return out


def deltas(data: bytes) -> list[dict[str, Any]]:
    return [c["choices"][0]["delta"] for c in payloads(data) if c["choices"]]


def valid(data: bytes) -> bool:
    assert [f for f in validate_records(data) if f.severity == "E"] == []
    return True


def test_the_signature_rides_on_the_reasoning_chunk_and_the_citations_on_the_content():
    out, _ = convert(SIGNED_CITED.read_bytes(), CHAT)
    role, reasoning, content, finish = deltas(out)
    assert role == {"role": "assistant"}
    assert set(reasoning) == {"reasoning", "reasoning_details"}
    assert set(content) == {"content", "annotations"}
    assert finish == {}


def test_openrouter_reasoning_details_give_one_signed_thinking_block():
    out, notes = convert(SIGNED_CITED.read_bytes(), ANTHROPIC)
    assert valid(out)
    thinking, text = blocks(out)
    assert thinking == {
        "type": "thinking",
        "thinking": "The user asks about neap tides: search, then answer.",
        "signature": "Zml4dHVyZS1zaWduYXR1cmU=",
    }
    assert text["type"] == "text" and text["citations"] == ["https://tides.example.org/neap"]
    # The entry's text is the reasoning field's: only its format and index are lost.
    assert "delta.reasoning_details.text" not in notes.lost_fields
    assert {"delta.reasoning_details.format", "delta.reasoning_details.index"} <= set(
        notes.lost_fields
    )


def test_litellm_thinking_blocks_give_a_signed_block_then_a_redacted_one():
    out, notes = convert(litellm(), ANTHROPIC)
    assert valid(out)
    assert blocks(out) == [
        {"type": "thinking", "thinking": "Look at the almanac.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "text", "text": "Low tide is at six."},
    ]
    assert notes.summary() == []


def test_responses_output_has_one_reasoning_item_and_one_cited_message():
    out, _ = convert(SIGNED_CITED.read_bytes(), RESPONSES)
    assert valid(out)
    items = [e["item"] for e in payloads(out) if e["type"] == "response.output_item.done"]
    assert [item["type"] for item in items] == ["reasoning", "message"]
    assert items[0]["encrypted_content"] == "Zml4dHVyZS1zaWduYXR1cmU="
    ((annotation,),) = [part["annotations"] for part in items[1]["content"]]
    assert (annotation["url"], annotation["start_index"], annotation["end_index"]) == (
        "https://tides.example.org/neap",
        35,
        52,
    )


@pytest.mark.parametrize("source", ["signed-cited", "litellm"])
def test_chat_to_chat_keeps_the_object(source: str):
    data = SIGNED_CITED.read_bytes() if source == "signed-cited" else litellm()
    (direct,) = collected(data, None)
    chunks, notes = convert(data, CHAT)
    assert notes.summary() == []
    (again,) = collected(chunks, None)
    assert direct == again
    out, _ = convert(chunks, CHAT)
    assert payloads(out) == payloads(chunks)
    message, built = orjson.loads(data)["choices"][0]["message"], direct["choices"][0]["message"]
    for key in ("content", "reasoning", "reasoning_content"):
        assert built.get(key) == message.get(key), key
    assert [_page(a) for a in built.get("annotations", [])] == [
        _page(a) for a in message.get("annotations", [])
    ]


def _page(annotation: dict[str, Any]) -> tuple[Any, ...]:
    page = annotation["url_citation"]
    return page["url"], page["title"], page["start_index"], page["end_index"]


@pytest.mark.parametrize("target", [RESPONSES, ANTHROPIC])
def test_collect_as_a_format_is_collect_of_the_conversion(target: str):
    same_as_converted(SIGNED_CITED.read_bytes(), target)
    same_as_converted(litellm(), target)
