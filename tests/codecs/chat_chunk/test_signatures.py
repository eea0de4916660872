"""Reasoning signatures and stop strings other formats say, read from chat chunks.

OpenRouter's ``reasoning_details`` and LiteLLM's ``thinking_blocks`` close the reasoning
item with a signature or its content withheld (``ir.ItemEnd``), and vLLM's string
``stop_reason`` is the Finish's stop sequence: Anthropic and Responses output carry them,
and say lost only what they do not carry. Chat output gives back the chunks' JSON values
as they came (the fields stay residue), and Gemini's ``thought_signature``, which vouches
for a tool call, stays chat residue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatx import ir
from tests.builders.anthropic_event import ANTHROPIC
from tests.builders.chat_chunk import chunk, usage_chunk
from tests.streams import CHAT, RESPONSES, convert, events, payloads, sse

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / CHAT
SIGNATURE = "c2lnLWZpeHR1cmUtYWxwaGE="
SECRET = "c2VjcmV0LWZpeHR1cmUtYmV0YQ=="


def detail(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields, "format": "fixture-format-v1", "index": 0}


def openrouter(*deltas: dict[str, Any]) -> list[dict[str, Any]]:
    """OpenRouter's shape: every delta has content "" beside its reasoning fields."""
    out = [chunk({"role": "assistant", "content": "", **deltas[0]})]
    out += [chunk({"content": "", **delta}) for delta in deltas[1:]]
    out += [chunk({"content": "Nine."}), chunk({"content": ""}, "stop"), usage_chunk()]
    return out


def signed_stream() -> list[dict[str, Any]]:
    """Reasoning text, then its signature ("" first, as OpenRouter sends it)."""
    return openrouter(
        {"reasoning": None, "reasoning_details": [detail("reasoning.text", text="", signature="")]},
        {"reasoning": "Three", "reasoning_details": [detail("reasoning.text", text="Three")]},
        {
            "reasoning": " squared.",
            "reasoning_details": [detail("reasoning.text", text=" squared.")],
        },
        {"reasoning": None, "reasoning_details": [detail("reasoning.text", signature=SIGNATURE)]},
    )


def ends(chunks: list[dict[str, Any]]) -> list[ir.ItemEnd]:
    return [e for e in events(sse(chunks), CHAT) if type(e) is ir.ItemEnd and e.kind == "reasoning"]


def blocks(data: bytes) -> list[dict[str, Any]]:
    """The content blocks of anthropic output, each with its deltas joined."""
    out: list[dict[str, Any]] = []
    for event in payloads(data):
        if event["type"] == "content_block_start":
            out.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            for key in ("thinking", "signature", "text"):
                if key in delta:
                    out[-1][key] = out[-1].get(key, "") + delta[key]
    return out


def reasoning_items(data: bytes) -> list[dict[str, Any]]:
    return [
        e["item"]
        for e in payloads(data)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    ]


# -- chat -> chat ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["litellm-thinking-blocks.sse", "vllm-stop-string.sse"])
def test_chat_to_chat_gives_back_the_fixtures_json_values(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    out, notes = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)
    assert notes.summary() == []


def test_chat_to_chat_gives_back_the_signed_chunks() -> None:
    data = sse(signed_stream())
    out, notes = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)
    assert notes.summary() == []


# -- OpenRouter's reasoning_details --------------------------------------------------------


def test_the_signature_closes_the_reasoning_item() -> None:
    (end,) = ends(signed_stream())
    assert (end.signature, end.encrypted) == (SIGNATURE, None)


def test_anthropic_output_writes_the_signature_and_reports_only_what_it_has_no_place_for():
    out, notes = convert(sse(signed_stream()), ANTHROPIC, CHAT)
    assert blocks(out) == [
        {"type": "thinking", "thinking": "Three squared.", "signature": SIGNATURE},
        {"type": "text", "text": "Nine."},
    ]
    lost = set(notes.lost_fields)
    assert {"delta.reasoning_details.format", "delta.reasoning_details.index"} <= lost
    assert not [path for path in lost if "signature" in path or path == "delta.reasoning_details"]
    assert "delta.reasoning_details.text" not in lost  # delta.reasoning said it


def test_responses_output_keeps_the_signature_as_encrypted_content() -> None:
    out, notes = convert(sse(signed_stream()), RESPONSES, CHAT)
    (item,) = reasoning_items(out)
    assert item["encrypted_content"] == SIGNATURE
    assert [part["text"] for part in item["summary"]] == ["Three squared."]
    assert not [path for path in notes.lost_fields if "signature" in path]


def test_llama_stack_output_says_the_signature_lost_once() -> None:
    _, notes = convert(sse(signed_stream()), LLAMA, CHAT)
    assert notes.lost_fields["reasoning.signature"] == 1
    assert "delta.reasoning_details" not in notes.lost_fields


def test_encrypted_reasoning_with_no_text_is_a_redacted_block() -> None:
    """OpenAI's and xAI's reasoning through OpenRouter: the encrypted item, no text."""
    chunks = openrouter(
        {
            "reasoning": None,
            "reasoning_details": [detail("reasoning.encrypted", data=SECRET, id="rs_fixture")],
        }
    )
    (end,) = ends(chunks)
    assert (end.signature, end.encrypted) == (None, SECRET)
    out, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert blocks(out) == [
        {"type": "redacted_thinking", "data": SECRET},
        {"type": "text", "text": "Nine."},
    ]
    assert {"delta.reasoning_details.id", "delta.reasoning_details.format"} <= set(
        notes.lost_fields
    )
    responses, _ = convert(sse(chunks), RESPONSES, CHAT)
    assert reasoning_items(responses) == [
        {"id": "rs_T3st_0", "type": "reasoning", "summary": [], "encrypted_content": SECRET}
    ]


def test_encrypted_content_after_text_shown_vouches_for_it() -> None:
    """OpenAI's summary then the item's encrypted content: a signature of the text."""
    chunks = openrouter(
        {
            "reasoning": "Sum it.",
            "reasoning_details": [detail("reasoning.summary", summary="Sum it.")],
        },
        {"reasoning": None, "reasoning_details": [detail("reasoning.encrypted", data=SECRET)]},
    )
    (end,) = ends(chunks)
    assert (end.signature, end.encrypted) == (SECRET, None)
    _, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert "delta.reasoning_details.summary" not in notes.lost_fields


def test_entry_text_no_reasoning_field_says_is_lost() -> None:
    """Snowflake sends reasoning text only in reasoning_details: it stays residue."""
    chunks = openrouter({"reasoning_details": [detail("reasoning.text", text="Hidden.")]})
    assert ends(chunks) == []
    out, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert notes.lost_fields["delta.reasoning_details.text"] == 1
    assert payloads(convert(sse(chunks), CHAT, CHAT)[0]) == payloads(sse(chunks))


def test_an_entry_of_another_type_is_lost_whole() -> None:
    chunks = openrouter(
        {"reasoning": "Ok.", "reasoning_details": [{"type": "reasoning.future", "blob": "x"}]}
    )
    _, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert {"delta.reasoning_details.type", "delta.reasoning_details.blob"} <= set(
        notes.lost_fields
    )


@pytest.mark.parametrize("entries", [[{"type": ["reasoning.text"], "text": "x"}], ["x"], "x"])
def test_entries_of_no_known_shape_are_residue(entries: Any) -> None:
    chunks = openrouter({"reasoning": "Ok.", "reasoning_details": entries})
    assert [(e.signature, e.encrypted) for e in ends(chunks)] == [(None, None)]
    assert payloads(convert(sse(chunks), CHAT, CHAT)[0]) == payloads(sse(chunks))
    _, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert any(path.startswith("delta.reasoning_details") for path in notes.lost_fields)


def test_reasoning_after_a_signature_is_another_block() -> None:
    """Two signed thinking blocks in a row: each text goes with its own signature, the
    later pieces of text, plain chunks, as well."""
    chunks = [
        chunk({"role": "assistant", "reasoning_content": "First"}),
        chunk({"reasoning_content": " one."}),
        chunk(
            {
                "reasoning_content": "",
                "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "c2ln"}],
            }
        ),
        chunk({"reasoning_content": "Second"}),
        chunk({"reasoning_content": " one."}),
        chunk(
            {
                "reasoning_content": "",
                "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "c2lnMg=="}],
            }
        ),
        chunk({"content": "Done."}),
        chunk({}, "stop"),
    ]
    assert [(e.signature, e.encrypted) for e in ends(chunks)] == [
        ("c2ln", None),
        ("c2lnMg==", None),
    ]
    out, _ = convert(sse(chunks), ANTHROPIC, CHAT)
    assert blocks(out) == [
        {"type": "thinking", "thinking": "First one.", "signature": "c2ln"},
        {"type": "thinking", "thinking": "Second one.", "signature": "c2lnMg=="},
        {"type": "text", "text": "Done."},
    ]


# -- LiteLLM's thinking_blocks -------------------------------------------------------------


def test_litellm_thinking_blocks_become_signed_and_redacted_blocks() -> None:
    data = (FIXTURES / "litellm-thinking-blocks.sse").read_bytes()
    out, notes = convert(data, ANTHROPIC, CHAT)
    assert [b["type"] for b in blocks(out)] == ["thinking", "redacted_thinking", "text"]
    thinking, redacted, _ = blocks(out)
    assert thinking["signature"] == "c2lnbmF0dXJlLWZpeHR1cmUtc3BpZGVy"
    assert thinking["thinking"] == "Spiders are arachnids; arachnids have eight legs."
    assert redacted["data"] == "cmVkYWN0ZWQtZml4dHVyZS1zcGlkZXI="
    # The blocks and their repeat in provider_specific_fields are said in full.
    assert notes.summary() == []


def test_litellm_redacted_and_signed_blocks_are_responses_encrypted_content() -> None:
    data = (FIXTURES / "litellm-thinking-blocks.sse").read_bytes()
    out, notes = convert(data, RESPONSES, CHAT)
    assert [(len(i["summary"]), i["encrypted_content"]) for i in reasoning_items(out)] == [
        (1, "c2lnbmF0dXJlLWZpeHR1cmUtc3BpZGVy"),
        (0, "cmVkYWN0ZWQtZml4dHVyZS1zcGlkZXI="),
    ]
    assert notes.summary() == []


# -- Gemini's thought_signature stays chat residue ----------------------------------------

GEMINI = {"google": {"thought_signature": "Z2VtaW5pLWZpeHR1cmU="}}


def gemini_call() -> list[dict[str, Any]]:
    call = {
        "index": 0,
        "id": "call_fixture",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
        "extra_content": GEMINI,
    }
    return [
        chunk({"role": "assistant", "content": "Looking.", "extra_content": GEMINI}),
        chunk({"tool_calls": [call]}),
        chunk({}, "tool_calls"),
        usage_chunk(),
    ]


def test_gemini_thought_signature_comes_back_in_chat_output() -> None:
    data = sse(gemini_call())
    out, notes = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)
    assert payloads(out)[1]["choices"][0]["delta"]["tool_calls"][0]["extra_content"] == GEMINI
    assert notes.summary() == []


def test_gemini_thought_signature_is_lost_elsewhere() -> None:
    out, notes = convert(sse(gemini_call()), ANTHROPIC, CHAT)
    assert notes.lost_fields["item.extra_content.google.thought_signature"] == 1
    assert notes.lost_fields["delta.extra_content.google.thought_signature"] == 1
    assert not [b for b in blocks(out) if "signature" in b]


# -- vLLM's stop_reason --------------------------------------------------------------------


def vllm(stop: Any) -> list[dict[str, Any]]:
    last = chunk({"content": ""}, "stop")
    last["choices"][0]["stop_reason"] = stop
    return [chunk({"role": "assistant", "content": "Ready"}), last, usage_chunk()]


def finish_of(chunks: list[dict[str, Any]]) -> ir.Finish:
    (finish,) = [e for e in events(sse(chunks), CHAT) if type(e) is ir.Finish]
    return finish


def test_a_stop_string_is_the_finishs_stop_sequence() -> None:
    finish = finish_of(vllm("END"))
    assert (finish.reason, finish.raw, finish.stop_sequence) == ("stop", "stop_sequence", "END")
    out, notes = convert(sse(vllm("END")), ANTHROPIC, CHAT)
    (delta,) = [e for e in payloads(out) if e["type"] == "message_delta"]
    assert delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "END"}
    assert "stop_reason" not in notes.lost_fields
    assert notes.summary() == []


@pytest.mark.parametrize("stop", ["END", 128009, None])
def test_chat_to_chat_keeps_the_stop_reason(stop: Any) -> None:
    data = sse(vllm(stop))
    out, notes = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)
    assert notes.summary() == []


def test_a_stop_token_id_stays_residue() -> None:
    assert finish_of(vllm(128009)).stop_sequence is None
    assert finish_of(vllm(None)).stop_sequence is None
    out, notes = convert(sse(vllm(128009)), ANTHROPIC, CHAT)
    (delta,) = [e for e in payloads(out) if e["type"] == "message_delta"]
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert notes.lost_fields["stop_reason"] == 1


def test_a_stop_string_beside_another_finish_reason_stays_residue() -> None:
    chunks = vllm("END")
    chunks[1]["choices"][0]["finish_reason"] = "length"
    assert finish_of(chunks).stop_sequence is None
    _, notes = convert(sse(chunks), ANTHROPIC, CHAT)
    assert notes.lost_fields["stop_reason"] == 1


@pytest.mark.parametrize("dst", [RESPONSES, LLAMA])
def test_other_formats_say_the_stop_sequence_lost(dst: str) -> None:
    _, notes = convert(sse(vllm("END")), dst, CHAT)
    assert notes.lost_fields["finish.stop_sequence"] == 1
    assert "stop_reason" not in notes.lost_fields
