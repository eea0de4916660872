"""The responses-event codec on small hand-made streams: what it reads, what it writes."""

from __future__ import annotations

import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from tests.builders.chat_chunk import chat_streams, chat_text, chunk
from tests.builders.responses_event import ResponsesBuilder, responses_streams, responses_usage
from tests.meaning import summarize
from tests.streams import CHAT, RESPONSES, convert, events, payloads, sse

TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def of_type(events_, kind):
    return [e for e in events_ if e["type"] == kind]


def _full():
    return (
        ResponsesBuilder()
        .reasoning("Think", "ing.")
        .message("Hel", "lo")
        .call("lookup", "call_7", '{"q": ', '"x"}')
        .end(usage=responses_usage(30, 20, 50, cached=8, reasoning=6))
    )


# -- decoding --------------------------------------------------------------------------


def test_decodes_text_reasoning_calls_usage_and_finish():
    [stream] = summarize(_full().bytes(), RESPONSES)
    assert stream == {
        "lanes": {
            0: {
                "text": "Hello",
                "reasoning": "Thinking.",
                "refusal": "",
                "calls": [("lookup", "call_7", ("json", '{"q": "x"}'))],
                "finish": "tool_calls",
            }
        },
        "usage": (30, 20, 50),
        "errors": [],
    }
    [usage] = [e for e in events(_full().bytes(), RESPONSES) if isinstance(e, ir.Usage)]
    assert (usage.cached, usage.reasoning) == (8, 6)


@pytest.mark.parametrize("family", ["summary", "text"])
def test_both_reasoning_families_decode(family):
    rs = ResponsesBuilder().reasoning("a", "b", family=family).message("x").end()
    reasoning = [e for e in events(rs.bytes(), RESPONSES) if isinstance(e, ir.ReasoningDelta)]
    assert [(r.text, r.kind) for r in reasoning] == [("a", family), ("b", family)]
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    deltas = [c["choices"][0]["delta"] for c in payloads(out) if c["choices"]]
    assert [d["reasoning_content"] for d in deltas if "reasoning_content" in d] == ["a", "b"]


def test_open_responses_reasoning_delta_name_decodes():
    # The Open Responses schema names raw reasoning response.reasoning.delta.
    rs = ResponsesBuilder().reasoning("a", "b", family="text").message("x").end()
    for event in rs.events:
        if event["type"] == "response.reasoning_text.delta":
            event["type"] = "response.reasoning.delta"
    assert summarize(rs.bytes(), RESPONSES)[0]["lanes"][0]["reasoning"] == "ab"


def test_refusal_decodes():
    rs = ResponsesBuilder().message(refusal="No.").end()
    assert summarize(rs.bytes(), RESPONSES)[0]["lanes"][0]["refusal"] == "No."
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    assert [
        c["choices"][0]["delta"]["refusal"]
        for c in payloads(out)
        if c["choices"] and c["choices"][0]["delta"].get("refusal")
    ] == ["No."]


def test_sse_without_event_lines_and_jsonl_decode_the_same():
    rs = _full()
    expected = summarize(rs.bytes(), RESPONSES)
    assert summarize(rs.bytes(events=False), RESPONSES) == expected
    jsonl = "".join(__import__("json").dumps(e) + "\n" for e in rs.events).encode()
    assert summarize(jsonl, RESPONSES) == expected


# -- built-in items --------------------------------------------------------------------


WEB_SEARCH = {
    "id": "ws_1",
    "type": "web_search_call",
    "action": {"type": "search", "query": "weather"},
}


def test_builtin_item_to_chat_is_reported_lost():
    rs = (
        ResponsesBuilder()
        .builtin(
            WEB_SEARCH,
            "response.web_search_call.in_progress",
            "response.web_search_call.searching",
            "response.web_search_call.completed",
        )
        .message("Sunny.")
        .end()
    )
    out, notes = convert(rs.bytes(), CHAT, RESPONSES)
    lost = [n for n in notes.items if n.kind == "lost"]
    assert lost and any("web_search_call" in n.message for n in lost)
    assert summarize(out, CHAT)[0]["lanes"][0]["text"] == "Sunny."
    assert b"web_search" not in out


def test_builtin_item_survives_responses_to_responses():
    rs = (
        ResponsesBuilder()
        .builtin(WEB_SEARCH, "response.web_search_call.searching")
        .message("Sunny.")
        .end()
    )
    out, notes = convert(rs.bytes(), RESPONSES, RESPONSES)
    assert payloads(out) == rs.events
    assert not [n for n in notes.summary() if n.kind in ("lost", "repaired")]


def test_fields_chat_holds_are_not_reported_lost():
    _, notes = convert(ResponsesBuilder().message("x").end().bytes(), CHAT, RESPONSES)
    lost = {n.message for n in notes.summary() if n.kind == "lost"}
    for name in ("response.id ", "response.model ", "response.created_at "):
        assert not [m for m in lost if name in m], lost


# -- encoding --------------------------------------------------------------------------


def test_reasoning_text_option_writes_reasoning_text_delta():
    data = sse(
        [
            chunk({"role": "assistant", "reasoning": "r1"}),
            chunk({"reasoning": "r2"}),
            chunk({"content": "x"}),
            chunk({}, "stop"),
        ]
    )
    out, _ = convert(data, RESPONSES, CHAT, options=EncodeOptions(reasoning="text"))
    out = payloads(out)
    assert [e["delta"] for e in of_type(out, "response.reasoning_text.delta")] == ["r1", "r2"]
    assert [e["text"] for e in of_type(out, "response.reasoning_text.done")] == ["r1r2"]
    assert not of_type(out, "response.reasoning_summary_text.delta")
    default, _ = convert(data, RESPONSES, CHAT)
    default = payloads(default)
    assert [e["delta"] for e in of_type(default, "response.reasoning_summary_text.delta")] == [
        "r1",
        "r2",
    ]
    assert not of_type(default, "response.reasoning_text.delta")


def _chat_source():
    return sse(
        [
            chunk({"role": "assistant", "reasoning_content": "hm"}),
            chunk({"content": "Hi"}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "g", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": "[1]"}}]}),
            chunk({}, "tool_calls"),
        ]
    )


@pytest.mark.parametrize("source", ["chat", "responses"])
def test_sequence_numbers_contiguous_from_zero(source):
    data = _chat_source() if source == "chat" else _full().bytes()
    out, _ = convert(data, RESPONSES, CHAT if source == "chat" else RESPONSES)
    for stream in responses_streams(out):
        assert [e["sequence_number"] for e in stream] == list(range(len(stream)))


def test_sequence_renumbered_from_zero_after_a_gap():
    rs = _full()
    for event in rs.events[5:]:
        event["sequence_number"] += 10
    out, notes = convert(rs.bytes(), RESPONSES, RESPONSES)
    out = payloads(out)
    assert [e["sequence_number"] for e in out] == list(range(len(out)))
    assert any(n.kind == "repaired" for n in notes.items)


def test_stream_shape_every_item_opened_and_closed():
    out, _ = convert(_chat_source(), RESPONSES, CHAT)
    out = payloads(out)
    assert [e["type"] for e in out[:2]] == ["response.created", "response.in_progress"]
    assert out[-1]["type"] in TERMINAL
    open_item = None
    for event in out[2:-1]:
        kind = event["type"]
        if kind == "response.output_item.added":
            assert open_item is None, "one item at a time"
            open_item = (event["output_index"], event["item"]["id"])
        elif kind == "response.output_item.done":
            assert open_item == (event["output_index"], event["item"]["id"])
            open_item = None
        else:
            assert open_item is not None, kind
            assert (event["output_index"], event["item_id"]) == open_item
    assert open_item is None
    indexes = [e["output_index"] for e in of_type(out, "response.output_item.added")]
    assert indexes == list(range(len(indexes)))


@pytest.mark.parametrize("source", ["chat", "responses"])
def test_terminal_output_equals_the_items_closed(source):
    data = _chat_source() if source == "chat" else _full().bytes()
    out, _ = convert(data, RESPONSES, CHAT if source == "chat" else RESPONSES)
    out = payloads(out)
    done = [e["item"] for e in of_type(out, "response.output_item.done")]
    assert len(done) >= 3
    assert out[-1]["response"]["output"] == done


def test_terminal_carries_usage_and_status():
    data = sse(chat_text("x"))
    out, _ = convert(data, RESPONSES, CHAT)
    end = payloads(out)[-1]
    assert end["type"] == "response.completed"
    assert end["response"]["status"] == "completed"
    assert end["response"]["usage"]["total_tokens"] == 18


def test_chat_tool_call_id_becomes_call_id():
    out, _ = convert(_chat_source(), RESPONSES, CHAT)
    calls = [
        e["item"]
        for e in of_type(payloads(out), "response.output_item.done")
        if e["item"]["type"] == "function_call"
    ]
    assert [(c["call_id"], c["name"], c["arguments"]) for c in calls] == [
        ("c1", "f", "{}"),
        ("c2", "g", "[1]"),
    ]


def test_responses_to_responses_gives_back_the_same_json_values():
    rs = _full()
    out, notes = convert(rs.bytes(), RESPONSES, RESPONSES)
    assert payloads(out) == rs.events
    assert not notes.items


@pytest.mark.parametrize("dst", [CHAT, RESPONSES])
def test_same_input_same_bytes(dst):
    data = _full().bytes()
    assert convert(data, dst, RESPONSES)[0] == convert(data, dst, RESPONSES)[0]


# -- several streams in one capture ----------------------------------------------------


def _two_streams():
    first = ResponsesBuilder("resp_one").message("first").end(usage=responses_usage())
    second = ResponsesBuilder("resp_two").call("f", "call_2", "{}").end()
    return first.bytes() + second.bytes()


def test_concatenated_streams_become_two_chat_streams():
    out, _ = convert(_two_streams(), CHAT, RESPONSES)
    streams = chat_streams(out)
    assert len(streams) == 2
    assert out.count(b"data: [DONE]") == 2
    assert [{c["id"] for c in s} for s in streams] == [{"chatcmpl-one"}, {"chatcmpl-two"}]
    assert [len([c for c in s if c.get("usage")]) for s in streams] == [1, 0]


def test_concatenated_streams_stay_two_responses_streams():
    out, _ = convert(_two_streams(), RESPONSES, RESPONSES)
    streams = responses_streams(out)
    assert [s[0]["response"]["id"] for s in streams] == ["resp_one", "resp_two"]
    for stream in streams:
        assert [e["sequence_number"] for e in stream] == list(range(len(stream)))


def test_concatenated_streams_survive_responses_chat_responses():
    mid, _ = convert(_two_streams(), CHAT, RESPONSES)
    back, _ = convert(mid, RESPONSES, CHAT)
    assert [s[0]["response"]["id"] for s in responses_streams(back)] == ["resp_one", "resp_two"]
    assert summarize(back, RESPONSES) == summarize(_two_streams(), RESPONSES)


# -- truncated input -------------------------------------------------------------------


def test_truncated_responses_stream_gets_no_invented_ending():
    rs = ResponsesBuilder().message("par", "tial")
    out, notes = convert(rs.bytes(), RESPONSES, RESPONSES)
    assert not [e for e in payloads(out) if e["type"] in TERMINAL]
    assert any(n.kind == "warning" for n in notes.items)
    finished, _ = convert(rs.bytes(), RESPONSES, RESPONSES, options=EncodeOptions(finish=True))
    assert payloads(finished)[-1]["type"] in TERMINAL


def test_truncated_responses_stream_to_chat_has_no_ending():
    rs = ResponsesBuilder().message("par", "tial")
    out, _ = convert(rs.bytes(), CHAT, RESPONSES)
    chunks = payloads(out)
    assert summarize(out, CHAT)[0]["lanes"][0]["text"] == "partial"
    assert not [c for c in chunks if c["choices"] and c["choices"][0].get("finish_reason")]
    assert b"[DONE]" not in out


def test_truncated_chat_stream_gets_no_invented_ending():
    data = sse(
        [chunk({"role": "assistant", "content": "par"}), chunk({"content": "tial"})], done=False
    )
    out, notes = convert(data, RESPONSES, CHAT)
    out = payloads(out)
    assert "".join(e["delta"] for e in of_type(out, "response.output_text.delta")) == "partial"
    assert not [e for e in out if e["type"] in TERMINAL]
    assert any(n.kind == "warning" for n in notes.items)


def test_round_trip_keeps_delta_boundaries():
    rs = (
        ResponsesBuilder()
        .reasoning("th", "ink")
        .message("Hel", "lo", "!")
        .call("f", "call_1", '{"a"', ": 1", "}")
        .end()
    )
    middle, _ = convert(rs.bytes(), CHAT, RESPONSES)
    back, _ = convert(middle, RESPONSES, CHAT)
    for kind in (
        "response.reasoning_summary_text.delta",
        "response.output_text.delta",
        "response.function_call_arguments.delta",
    ):
        assert [e["delta"] for e in of_type(payloads(back), kind)] == [
            e["delta"] for e in of_type(rs.events, kind)
        ]
