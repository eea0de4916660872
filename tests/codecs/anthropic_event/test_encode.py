"""The anthropic-event encoder from other formats (each shape, each note), and what the
other encoders make of what only this format says (signatures, redacted thinking,
server tool blocks, cache writes, pause_turn)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chatx import ir
from chatx.codecs.anthropic_event.encode import AnthropicEncoder, message_id
from chatx.codecs.base import EncodeOptions
from chatx.notes import Notes
from tests.builders.anthropic_event import (
    ANTHROPIC,
    block_delta,
    block_start,
    block_stop,
    sse_events,
    stream,
    text,
    thinking,
)
from tests.builders.chat_chunk import chat_text, chunk, usage_chunk
from tests.builders.responses_event import ResponsesBuilder, responses_usage
from tests.streams import CHAT, RESPONSES, convert, payloads, sse, sse_blocks

LLAMA = "llama-stack-event"


def plain(notes: Notes) -> list[str]:
    """The notes without the input line they name."""
    return [re.sub(r"line \d+: ", "", str(note)) for note in notes.summary()]


def to_anthropic(data: bytes, src: str, **options: Any) -> tuple[list[Any], list[str]]:
    out, notes = convert(
        data, ANTHROPIC, src, options=EncodeOptions(**options) if options else None
    )
    return payloads(out), plain(notes)


def types(events: list[Any]) -> list[str]:
    return [
        f"{e['type']}:{(e.get('delta') or e.get('content_block') or {}).get('type', '')}".rstrip(
            ":"
        )
        for e in events
    ]


def encode(batches: list[list[ir.Event]], **options: Any) -> tuple[list[Any], Notes]:
    notes = Notes()
    encoder = AnthropicEncoder(notes, EncodeOptions(**options))
    out: list[Any] = []
    for batch in batches:
        out += encoder.feed(batch)
    return out + encoder.finish(), notes


# -- from chat ----------------------------------------------------------------------------


def test_chat_text_is_one_text_block_and_the_usage_at_the_end():
    events, notes = to_anthropic(sse(chat_text("Hel", "lo")), CHAT)
    assert events == [
        {
            "type": "message_start",
            "message": {
                "id": "msg_T3st",
                "type": "message",
                "role": "assistant",
                "model": "gpt-test",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"input_tokens": 11, "output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    assert notes == []


def test_sse_output_names_each_event():
    out, _ = convert(sse(chat_text("Hi")), ANTHROPIC, CHAT)
    blocks = sse_blocks(out)
    assert [event for event, _ in blocks] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [("chatcmpl-abc", "msg_abc"), ("resp_abc", "msg_abc"), ("msg_abc", "msg_abc"), ("", "msg_0")],
)
def test_the_message_id_derives_from_the_sources(source, expected):
    assert message_id(source) == expected


def test_cached_prompt_tokens_are_cache_reads_and_not_input_tokens():
    data = sse([*chat_text("x", usage=False), usage_chunk(100, 5, 105, cached=60, reasoning=2)])
    events, _ = to_anthropic(data, CHAT)
    assert events[-2]["usage"] == {
        "input_tokens": 40,
        "cache_read_input_tokens": 60,
        "output_tokens": 5,
        "output_tokens_details": {"thinking_tokens": 2},
    }


def test_a_total_other_than_input_plus_output_is_lost():
    data = sse([*chat_text("x", usage=False), usage_chunk(10, 5, 99)])
    _, notes = to_anthropic(data, CHAT)
    assert notes == ["lost: usage total 99: Anthropic usage has no total, and input + output is 15"]


def test_a_source_without_usage_says_zero_with_a_warning():
    events, notes = to_anthropic(sse(chat_text("x", usage=False)), CHAT)
    assert events[-2]["usage"] == {"input_tokens": 0, "output_tokens": 0}
    assert notes == [
        "warning: the input has no usage: message_delta says 0 tokens (the API requires counts)"
    ]


@pytest.mark.parametrize(
    ("finish", "stop", "note"),
    [
        ("stop", "end_turn", None),
        ("length", "max_tokens", None),
        ("tool_calls", "tool_use", None),
        ("content_filter", "refusal", None),
        (
            "function_call",
            "tool_use",
            "finish reason 'function_call' (a legacy function call): tool_use",
        ),
        (
            "abort",
            "end_turn",
            "finish reason 'abort' has no Anthropic stop reason: written as end_turn",
        ),
    ],
)
def test_finish_reasons_are_stop_reasons(finish, stop, note):
    events, notes = to_anthropic(sse(chat_text("x", finish=finish)), CHAT)
    assert events[-2]["delta"]["stop_reason"] == stop
    lost = [n for n in notes if n.startswith("lost")]
    assert lost == ([] if note is None else [f"lost: {note}"])


def test_a_source_without_a_finish_reason_gets_one_said_repaired():
    data = sse([chunk({"role": "assistant", "content": "x"})])
    events, notes = to_anthropic(data, CHAT)
    assert events[-2]["delta"]["stop_reason"] == "end_turn"
    assert "repaired: the input has no finish reason: stop_reason end_turn written" in notes


def test_reasoning_is_a_thinking_block_before_the_text():
    data = sse(
        [
            chunk({"role": "assistant", "reasoning_content": "Think"}),
            chunk({"reasoning_content": "ing."}),
            chunk({"content": "Done."}),
            chunk({}, "stop"),
        ]
    )
    events, _ = to_anthropic(data, CHAT)
    assert types(events)[1:8] == [
        "content_block_start:thinking",
        "content_block_delta:thinking_delta",
        "content_block_delta:thinking_delta",
        "content_block_stop",
        "content_block_start:text",
        "content_block_delta:text_delta",
        "content_block_stop",
    ]
    assert events[1]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}


def test_interleaved_tool_calls_are_written_one_block_at_a_time():
    call = {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    other = {
        "index": 1,
        "id": "call_b",
        "type": "function",
        "function": {"name": "g", "arguments": ""},
    }
    data = sse(
        [
            chunk({"role": "assistant", "tool_calls": [call]}),
            chunk({"tool_calls": [other]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"b": 2}'}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    events, notes = to_anthropic(data, CHAT)
    blocks = [e for e in events if e["type"].startswith("content_block")]
    assert [(e["type"], e["index"]) for e in blocks] == [
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
    ]
    assert blocks[0]["content_block"] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "f",
        "input": {},
    }
    assert blocks[1]["delta"] == {"type": "input_json_delta", "partial_json": '{"a": 1}'}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_a_refusal_is_text_and_said_lost():
    data = sse([chunk({"role": "assistant", "refusal": "No."}), chunk({}, "stop")])
    events, notes = to_anthropic(data, CHAT)
    assert events[2]["delta"] == {"type": "text_delta", "text": "No."}
    assert "lost: a refusal is written as message text: Anthropic messages have no refusal" in notes


def test_what_the_source_said_before_its_error_comes_first_and_nothing_after_it():
    data = sse(
        [
            chunk({"role": "assistant", "content": "Hi"}),
            chunk({}, "length"),
            {
                "error": {"message": "Token limit reached", "code": 400},
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            },
        ]
    )
    events, notes = to_anthropic(data, CHAT)
    assert types(events)[-3:] == ["content_block_stop", "message_delta", "error"]
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"
    assert events[-1] == {
        "type": "error",
        "error": {"type": "api_error", "message": "Token limit reached"},
    }
    assert "lost: field error.code has no place in the target format (1 record)" in notes


def test_a_cut_short_source_is_left_open_unless_asked_to_finish():
    data = sse([chunk({"role": "assistant", "content": "Hal"})], done=False)
    events, notes = to_anthropic(data, CHAT)
    assert "message_delta" not in types(events) and "message_stop" not in types(events)
    assert "warning: input ended without message_stop (--finish writes one)" in notes
    finished, notes = to_anthropic(data, CHAT, finish=True)
    assert types(finished)[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert any("input ended without message_stop: ending written" in n for n in notes)


# -- from Responses ------------------------------------------------------------------------


def test_a_responses_built_in_item_is_lost_once():
    builder = ResponsesBuilder()
    builder.builtin(
        {"type": "code_interpreter_call", "id": "ci_1"},
        "response.code_interpreter_call.interpreting",
    )
    data = builder.message("Found.").end(usage=responses_usage()).bytes()
    events, notes = to_anthropic(data, RESPONSES)
    assert [n for n in notes if "code_interpreter_call" in n] == [
        "lost: code_interpreter_call item has no place in Anthropic messages"
    ]
    assert [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"] == ["Found."]


def test_a_web_search_call_without_a_search_action_is_lost_once():
    builder = ResponsesBuilder()
    builder.builtin({"type": "web_search_call", "id": "ws_1"}, "response.web_search_call.searching")
    data = builder.message("Found.").end(usage=responses_usage()).bytes()
    events, notes = to_anthropic(data, RESPONSES)
    assert [n for n in notes if "web_search_call" in n] == [
        "lost: web_search_call item (no action) has no place in Anthropic messages"
    ]
    assert [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"] == ["Found."]


def test_an_empty_reasoning_item_writes_no_block():
    events, _ = encode(
        [
            [ir.StreamStart("resp_1"), ir.LaneStart(0)],
            [ir.ItemStart(0, "reasoning")],
            [ir.ItemEnd(0, "reasoning")],
            [ir.Finish(0, "stop"), ir.Usage(1, 1), ir.StreamEnd()],
        ]
    )
    assert types(events) == ["message_start", "message_delta", "message_stop"]


def test_reasoning_withheld_is_a_redacted_thinking_block():
    events, _ = encode(
        [
            [ir.StreamStart("x"), ir.LaneStart(0)],
            [ir.ItemStart(0, "reasoning")],
            [ir.ItemEnd(0, "reasoning", encrypted="b3BhcXVl")],
            [ir.Finish(0, "stop"), ir.Usage(1, 1), ir.StreamEnd()],
        ]
    )
    assert events[1]["content_block"] == {"type": "redacted_thinking", "data": "b3BhcXVl"}
    assert types(events)[2] == "content_block_stop"


def test_a_signature_closes_the_thinking_block():
    events, _ = encode(
        [
            [ir.StreamStart("x"), ir.LaneStart(0)],
            [ir.ItemStart(0, "reasoning"), ir.ReasoningDelta(0, "Hm.", "summary")],
            [ir.ItemEnd(0, "reasoning", signature="c2ln")],
        ]
    )
    assert events[3]["delta"] == {"type": "signature_delta", "signature": "c2ln"}
    assert events[4] == {"type": "content_block_stop", "index": 0}


def test_summary_parts_join_in_one_thinking_block_with_a_note():
    events, notes = encode(
        [
            [ir.StreamStart("x"), ir.LaneStart(0)],
            [ir.ItemStart(0, "reasoning"), ir.ReasoningDelta(0, "One.", "summary", 0)],
            [ir.ReasoningDelta(0, "Two.", "summary", 1)],
            [ir.ItemEnd(0, "reasoning")],
        ]
    )
    thoughts = [e["delta"]["thinking"] for e in events if e["type"] == "content_block_delta"]
    assert thoughts == ["One.", "Two."]
    assert types(events).count("content_block_start:thinking") == 1
    assert plain(notes)[0] == (
        "lost: reasoning parts are joined in one thinking block: their bounds are lost"
    )


def test_a_responses_failure_is_one_error_event():
    data = ResponsesBuilder().message("Hal").error("The model crashed.").bytes()
    events, notes = to_anthropic(data, RESPONSES)
    assert events[-1] == {
        "type": "error",
        "error": {"type": "server_error", "message": "The model crashed."},
    }
    assert types(events).count("error") == 1


# -- from Llama Stack ------------------------------------------------------------------------


def test_llama_stack_metrics_are_the_usage():
    data = (
        b'data: {"event": {"event_type": "start", "delta": {"type": "text", "text": ""}}}\n\n'
        b'data: {"event": {"event_type": "progress", "delta": {"type": "text", "text": "Hi"}}}\n\n'
        b'data: {"event": {"event_type": "complete", "delta": {"type": "text", "text": ""}, '
        b'"stop_reason": "end_of_turn"}, "metrics": [{"metric": "prompt_tokens", "value": 4}, '
        b'{"metric": "completion_tokens", "value": 2}, {"metric": "total_tokens", "value": 6}]}\n\n'
    )
    events, notes = to_anthropic(data, LLAMA)
    assert events[-2]["delta"]["stop_reason"] == "end_turn"
    assert events[-2]["usage"] == {"input_tokens": 4, "output_tokens": 2}


# -- what the other encoders make of what only Anthropic says ---------------------------------


SIGNED = sse_events(stream(thinking(0, "Hm.", signature="c2ln"), text(1, "Hi")))
REDACTED = sse_events(
    stream(
        [block_start(0, {"type": "redacted_thinking", "data": "b3BhcXVl"}), block_stop(0)],
        text(1, "Hi"),
    )
)
SERVER_TOOL = sse_events(
    stream(
        [
            block_start(
                0, {"type": "server_tool_use", "id": "srv_1", "name": "code_execution", "input": {}}
            ),
            block_delta(0, {"type": "input_json_delta", "partial_json": '{"code": "1 + 1"}'}),
            block_stop(0),
        ],
        stop="pause_turn",
    )
)


def _notes(data: bytes, dst: str) -> list[str]:
    return plain(convert(data, dst, ANTHROPIC)[1])


def test_responses_keeps_a_signature_or_redacted_thinking_as_encrypted_content():
    for data, value, summary in (
        (SIGNED, "c2ln", [{"type": "summary_text", "text": "Hm."}]),
        (REDACTED, "b3BhcXVl", []),
    ):
        out, _ = convert(data, RESPONSES, ANTHROPIC)
        done = [p for p in payloads(out) if p["type"] == "response.output_item.done"][0]
        assert done["item"]["encrypted_content"] == value
        assert done["item"]["summary"] == summary


@pytest.mark.parametrize("dst", [CHAT, LLAMA])
def test_chat_and_llama_stack_report_the_signature_and_the_redacted_thinking_lost(dst):
    assert "lost: field reasoning.signature has no place in the target format (1 record)" in _notes(
        SIGNED, dst
    )
    assert (
        "lost: field reasoning.encrypted_content has no place in the target format (1 record)"
        in _notes(REDACTED, dst)
    )


@pytest.mark.parametrize(
    ("dst", "said"),
    [
        (CHAT, "lost: server_tool_use item has no place in chat chunks"),
        (
            RESPONSES,
            "lost: anthropic-event server_tool_use item with no Responses equivalent",
        ),
        (LLAMA, "lost: server_tool_use item has no place in Llama Stack events"),
    ],
)
def test_a_server_tool_block_is_reported_once_where_it_opens(dst, said):
    notes = _notes(SERVER_TOOL, dst)
    assert [n for n in notes if "server_tool_use" in n] == [said]


def test_pause_turn_is_length_in_chat_and_incomplete_in_responses_with_a_note():
    out, notes = convert(SERVER_TOOL, CHAT, ANTHROPIC)
    finish = [c["choices"][0].get("finish_reason") for c in payloads(out) if c.get("choices")]
    assert finish[-1] == "length"
    assert "lost: finish reason 'pause_turn' has no chat word: written as 'length'" in plain(notes)
    out, _ = convert(SERVER_TOOL, RESPONSES, ANTHROPIC)
    terminal = payloads(out)[-1]
    assert terminal["type"] == "response.incomplete"
    assert terminal["response"]["incomplete_details"] == {"reason": "pause_turn"}
    back, _ = convert(out, ANTHROPIC, RESPONSES)
    assert payloads(back)[-2]["delta"]["stop_reason"] == "pause_turn"


def test_cache_writes_are_responses_cache_write_tokens_and_lost_in_chat():
    usage = {"input_tokens": 9, "cache_creation_input_tokens": 1500, "output_tokens": 1}
    data = sse_events(stream(text(0, "x"), usage=usage))
    out, _ = convert(data, RESPONSES, ANTHROPIC)
    details = payloads(out)[-1]["response"]["usage"]["input_tokens_details"]
    assert details == {"cached_tokens": 0, "cache_write_tokens": 1500}
    assert (
        "lost: field usage.cache_write_tokens has no place in the target format (1 record)"
        in _notes(data, CHAT)
    )
