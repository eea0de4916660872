"""The anthropic-event decoder: each shape of the stream to the IR events it means, and
each note it says."""

from __future__ import annotations

from typing import Any

import pytest

from chatx import ir
from chatx.codecs import get, sniff
from chatx.codecs.anthropic_event.decode import AnthropicDecoder
from chatx.codecs.anthropic_event.probe import probe
from chatx.codecs.anthropic_event.records import AGAIN, CUT, PREFILL
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import ABSENT, lost_paths
from tests.builders.anthropic_event import (
    ANTHROPIC,
    MESSAGE_STOP,
    PING,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
    sse_events,
    stream,
    text,
    thinking,
    tool_use,
)
from tests.streams import batches


def decode(events: list[Any]) -> tuple[list[list[ir.Event]], Notes]:
    """The batch of each event (and of the end of input, last), and the notes."""
    notes = Notes()
    decoder = AnthropicDecoder(notes)
    out = []
    for line, event in enumerate(events, 1):
        notes.line = line  # as the drive loop sets it
        out.append(decoder.feed(Record(event, event.get("type"), line)))
    out.append(decoder.finish())
    return out, notes


def flat(events: list[Any]) -> list[ir.Event]:
    return [event for batch in decode(events)[0] for event in batch]


def of(kind: type, events: list[ir.Event]) -> list[Any]:
    return [event for event in events if type(event) is kind]


def said(notes: Notes) -> list[str]:
    return [str(note) for note in notes.summary()]


# -- the message -----------------------------------------------------------------------


def test_a_text_message_is_one_message_item_then_usage_finish_and_end():
    events = flat(stream(text(0, "Hel", "lo"), mid="msg_A", model="claude-x"))
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "StreamStart",
        "LaneStart",
        "ItemStart",
        "TextDelta",
        "TextDelta",
        "ItemEnd",
        "Usage",
        "Finish",
        "StreamEnd",
    ]
    start = events[0]
    assert (start.id, start.model, start.created) == ("msg_A", "claude-x", None)
    assert [e.text for e in of(ir.TextDelta, events)] == ["Hel", "lo"]
    assert of(ir.ItemStart, events)[0].kind == "message"
    finish = of(ir.Finish, events)[0]
    assert (finish.reason, finish.raw) == ("stop", "end_turn")


def test_each_record_is_one_batch_and_a_clean_stream_keeps_no_residue_worth_reporting():
    out, notes = decode(stream(text(0, "a")))
    assert len(out) == 7  # six records and the end of input
    assert out[-1] == []
    assert said(notes) == []
    for event in (e for batch in out for e in batch):
        # Old streams say only output_tokens in message_delta: the rest is ABSENT there.
        assert lost_paths(getattr(event, "extra", {})) == [], event


@pytest.mark.parametrize(
    ("word", "reason", "raw"),
    [
        ("end_turn", "stop", "end_turn"),
        ("stop_sequence", "stop", "stop_sequence"),
        ("max_tokens", "length", "max_tokens"),
        ("model_context_window_exceeded", "length", "model_context_window_exceeded"),
        ("tool_use", "tool_calls", "tool_use"),
        ("refusal", "content_filter", "refusal"),
        ("pause_turn", "pause_turn", None),
        ("a_new_word", "a_new_word", None),
    ],
)
def test_stop_reasons_are_ir_words_with_the_apis_word_kept(word, reason, raw):
    finish = of(ir.Finish, flat(stream(text(0, "x"), stop=word)))[0]
    assert (finish.reason, finish.raw) == (reason, raw)


def test_the_stop_sequence_is_the_finishs_not_residue():
    events = [message_start(), *text(0, "1, 2"), message_delta("stop_sequence"), MESSAGE_STOP]
    events[-2]["delta"]["stop_sequence"] = "3"
    finish = of(ir.Finish, flat(events))[0]
    assert finish.stop_sequence == "3"
    assert "delta" not in finish.extra
    assert "delta.stop_sequence" not in lost_paths(finish.extra)


def test_usage_counts_every_input_token_as_prompt_tokens_do():
    start = {"input_tokens": 12, "cache_creation_input_tokens": 100, "output_tokens": 1}
    start["cache_read_input_tokens"] = 2048
    events = [message_start(usage=start), *text(0, "x"), message_delta(), MESSAGE_STOP]
    events[-2]["usage"] = {"output_tokens": 7, "output_tokens_details": {"thinking_tokens": 3}}
    usage = of(ir.Usage, flat(events))
    assert len(usage) == 1  # said once, at message_delta
    u = usage[0]
    assert (u.input, u.output, u.total, u.cached, u.cache_write, u.reasoning) == (
        12 + 100 + 2048,
        7,
        None,
        2048,
        100,
        3,
    )
    assert u.extra == {}


def test_message_delta_counts_win_over_message_starts():
    events = [message_start(usage={"input_tokens": 7, "output_tokens": 0}), *text(0, "x")]
    events += [message_delta(usage={"input_tokens": 73, "output_tokens": 64}), MESSAGE_STOP]
    u = of(ir.Usage, flat(events))[0]
    assert (u.input, u.output) == (73, 64)


def test_usage_details_the_ir_has_no_name_for_stay_usage_residue():
    events = [message_start(), *text(0, "x")]
    events += [
        message_delta(usage={"output_tokens": 5, "server_tool_use": {"web_search_requests": 1}})
    ]
    u = of(ir.Usage, flat([*events, MESSAGE_STOP]))[0]
    assert u.extra == {"server_tool_use": {"web_search_requests": 1}}


def test_a_message_without_message_delta_has_message_starts_usage():
    events = [message_start(usage={"input_tokens": 0, "output_tokens": 0}), MESSAGE_STOP]
    (u,) = of(ir.Usage, flat(events))
    assert (u.input, u.output) == (0, 0)
    assert (u.extra, u.own) == ({}, AGAIN)  # anthropic output writes it no more


def test_start_fields_the_ir_has_no_name_for_are_residue_of_the_stream_start():
    usage = {"input_tokens": 5, "output_tokens": 1, "service_tier": "standard"}
    events = [message_start(usage=usage, container=None), *text(0, "x"), MESSAGE_STOP]
    start = flat(events)[0]
    assert start.extra["message"] == {"usage": {"service_tier": "standard"}, "container": None}
    assert start.own.usage == {"input_tokens": 5, "output_tokens": 1}


def test_bedrock_invocation_metrics_are_residue_of_the_stream_end():
    metrics = {"inputTokenCount": 21, "outputTokenCount": 5}
    events = [
        *stream(text(0, "Hi"))[:-1],
        {**MESSAGE_STOP, "amazon-bedrock-invocationMetrics": metrics},
    ]
    end = of(ir.StreamEnd, flat(events))[0]
    assert end.extra == {"amazon-bedrock-invocationMetrics": metrics}


def test_ollamas_message_start_without_stop_fields_is_residue():
    start = message_start()
    del start["message"]["stop_reason"], start["message"]["stop_sequence"]
    event = flat([start])[0]
    assert event.extra["message"] == {"stop_reason": ABSENT, "stop_sequence": ABSENT}


# -- blocks ----------------------------------------------------------------------------


def test_thinking_is_reasoning_closed_by_its_signature():
    events = flat(stream(thinking(0, "Six", " sevens", "", signature="c2ln"), text(1, "42")))
    assert [e.text for e in of(ir.ReasoningDelta, events)] == ["Six", " sevens"]
    assert all(e.kind == "text" for e in of(ir.ReasoningDelta, events))
    end = of(ir.ItemEnd, events)[0]
    assert (end.kind, end.signature, end.encrypted) == ("reasoning", "c2ln", None)
    # The empty delta and the signature delta are records with no IR content.
    metas = [e for e in of(ir.Meta, events) if e.own is not None]
    assert [(m.extra, m.own.record["delta"]["type"]) for m in metas] == [
        ({}, "thinking_delta"),
        ({}, "signature_delta"),
    ]


def test_redacted_thinking_is_reasoning_with_its_content_withheld():
    block = {"type": "redacted_thinking", "data": "b3BhcXVl"}
    events = flat(stream([block_start(0, block), block_stop(0)]))
    start = of(ir.ItemStart, events)[0]
    end = of(ir.ItemEnd, events)[0]
    assert start.kind == "reasoning" and start.extra == {}
    assert (start.own.redacted, start.own.data) == (True, "b3BhcXVl")
    assert (end.signature, end.encrypted) == (None, "b3BhcXVl")
    assert of(ir.ReasoningDelta, events) == []


def test_tool_use_is_a_call_whose_fragments_are_its_argument_deltas():
    events = flat(stream(tool_use(0, "toolu_1", "get", '{"a"', ": 1}"), stop="tool_use"))
    start = of(ir.ItemStart, events)[0]
    assert (start.kind, start.call, start.call_id, start.name) == ("tool_call", 0, "toolu_1", "get")
    assert [e.fragment for e in of(ir.ToolArgsDelta, events)] == ['{"a"', ": 1}"]
    assert of(ir.Finish, events)[0].reason == "tool_calls"


def test_a_call_that_streams_no_arguments_says_an_empty_object():
    events = flat(
        stream(tool_use(0, "toolu_1", "now"), tool_use(1, "toolu_2", "now"), stop="tool_use")
    )
    args = of(ir.ToolArgsDelta, events)
    assert [(e.call, e.fragment, e.extra, e.own) for e in args] == [
        (0, "{}", {}, AGAIN),
        (1, "{}", {}, AGAIN),
    ]


def test_server_tool_blocks_pass_through_as_records_of_one_item():
    search = [
        block_start(
            0, {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
        ),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x"}'}),
        block_stop(0),
        block_start(1, {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []}),
        block_stop(1),
    ]
    events = flat(stream(search, text(2, "Found.")))
    passed = of(ir.Passthrough, events)
    assert [(p.format, p.event, p.item) for p in passed] == [
        (ANTHROPIC, "content_block_start", "server_tool_use"),
        (ANTHROPIC, "content_block_delta", ""),
        (ANTHROPIC, "content_block_stop", ""),
        (ANTHROPIC, "content_block_start", "web_search_tool_result"),
        (ANTHROPIC, "content_block_stop", ""),
    ]
    assert [p.data for p in passed] == search
    assert of(ir.ToolArgsDelta, events) == []
    assert [e.text for e in of(ir.TextDelta, events)] == ["Found."]


def test_a_citation_is_reported_by_other_formats_under_citations():
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0}
    delta = block_delta(0, {"type": "citations_delta", "citation": citation})
    events = flat(
        stream(
            [block_start(0, {"type": "text", "text": "", "citations": []}), delta, block_stop(0)]
        )
    )
    (meta,) = [e for e in of(ir.Meta, events) if "citations" in e.extra]
    assert (meta.extra, meta.own.record) == ({"citations": [citation]}, delta)


def test_content_a_block_start_holds_already_is_said_as_a_delta():
    events = flat(stream([block_start(0, {"type": "text", "text": "Hi"}), block_stop(0)]))
    (delta,) = of(ir.TextDelta, events)
    assert (delta.text, delta.extra, delta.own) == ("Hi", {}, AGAIN)
    start = of(ir.ItemStart, events)[0]
    assert (start.extra, start.own.seed) == ({}, "Hi")


def test_a_message_start_that_holds_its_turn_says_it_once():
    call = {
        "type": "tool_use",
        "id": "toolu_p",
        "name": "roll",
        "input": {"n": 6},
        "caller": {"type": "x"},
    }
    start = message_start(content=[call], stop_reason="tool_use")
    events = flat([start, MESSAGE_STOP])
    item = of(ir.ItemStart, events)[0]
    assert (item.call_id, item.name, item.extra, item.own) == (
        "toolu_p",
        "roll",
        {"caller": {"type": "x"}},
        PREFILL,
    )
    assert [e.fragment for e in of(ir.ToolArgsDelta, events)] == ['{"n":6}']
    assert of(ir.Finish, events)[0].reason == "tool_calls"


# -- what goes wrong ---------------------------------------------------------------------


def test_an_error_event_ends_the_stream():
    events = [message_start(), block_start(0, {"type": "text", "text": ""})]
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    out, notes = decode(events)
    (error,) = of(ir.Error, out[2])
    assert (error.message, error.type, error.code) == ("Overloaded", "overloaded_error", None)
    assert out[-1] == []  # nothing is invented after it
    assert of(ir.StreamEnd, [e for b in out for e in b]) == []


def test_an_error_events_other_fields_are_residue():
    error = {
        "type": "error",
        "error": {"type": "api_error", "message": "x", "details": 1},
        "request_id": "req_1",
    }
    events = flat([error])
    assert events[0].extra == {"details": 1}
    assert events[1].extra == {"request_id": "req_1"}


def test_a_stream_cut_short_closes_its_block_for_other_formats_and_invents_nothing():
    out, notes = decode(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            block_delta(0, {"type": "text_delta", "text": "Half"}),
        ]
    )
    assert [type(e) for e in out[-1]] == [ir.ItemEnd]
    assert (out[-1][0].extra, out[-1][0].own) == ({}, CUT)
    assert said(notes) == ["warning: line 3: the stream ends without message_stop"]


def test_a_block_left_open_at_message_delta_is_stopped_there():
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
    ]
    events += [
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"a": "cu'}),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    ]
    out, notes = decode(events)
    assert [type(e) for e in out[3]] == [ir.ItemEnd, ir.Usage, ir.Finish]
    assert said(notes) == [
        "repaired: line 4: content block 0 was not stopped before message_delta: stopped there"
    ]


def test_content_before_any_message_start_begins_a_stream_that_is_not_written_back():
    out, notes = decode(text(0, "x"))
    assert type(out[0][0]) is ir.StreamStart and out[0][0].extra == {}
    assert out[0][0].own.implicit
    assert said(notes)[0] == "warning: line 1: the stream has no message_start"


def test_done_is_not_part_of_the_stream():
    notes = Notes(line=4)
    assert AnthropicDecoder(notes).feed(Record(done=True, line=4)) == []
    assert said(notes) == ["warning: line 4: [DONE] is not part of an Anthropic stream: left out"]


@pytest.mark.parametrize("data", [[1], "text", {"no": "type"}, {"type": 3}])
def test_a_record_that_is_not_an_event_is_bad_input(data):
    with pytest.raises(InputError):
        AnthropicDecoder(Notes()).feed(Record(data, line=1))


def test_an_unknown_event_type_passes_through_with_a_warning():
    notes = Notes(line=2)
    (event,) = AnthropicDecoder(notes).feed(Record({"type": "message_future"}, line=2))
    assert type(event) is ir.Passthrough and event.item is None
    assert said(notes) == [
        "warning: line 2: event type 'message_future': kept as it is, no IR meaning"
    ]


def test_an_sse_event_name_other_than_the_type_is_said_once():
    notes = Notes()
    decoder = AnthropicDecoder(notes)
    decoder.feed(Record(message_start(), "message_begin", 1))
    decoder.feed(Record(PING, "pong", 3))
    assert said(notes) == [
        "repaired: SSE event name 'message_begin' differs from its type 'message_start': written as the type"
    ]


# -- the whole message -------------------------------------------------------------------


def test_a_whole_message_decodes_as_the_stream_it_stands_for():
    message = {
        "id": "msg_w",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "Hm.", "signature": "c2ln"},
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_w", "name": "f", "input": {"a": 1}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 4, "output_tokens": 9},
    }
    events = [e for batch in batches(sse_events([message]), ANTHROPIC) for e in batch]
    assert [e.text for e in of(ir.ReasoningDelta, events)] == ["Hm."]
    assert of(ir.ItemEnd, events)[0].signature == "c2ln"
    assert [e.text for e in of(ir.TextDelta, events)] == ["Hi"]
    assert [e.fragment for e in of(ir.ToolArgsDelta, events)] == ['{"a":1}']
    u = of(ir.Usage, events)[0]
    assert (u.input, u.output) == (4, 9)
    assert of(ir.Finish, events)[0].reason == "tool_calls"
    assert get(ANTHROPIC).whole(message) == "an Anthropic Message object"


# -- the probe -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "score"),
    [
        (message_start(), 100),
        (PING, 100),
        (block_delta(0, {"type": "text_delta", "text": "x"}), 100),
        ({"type": "message", "content": []}, 100),
        ({"type": "error", "error": {"type": "overloaded_error", "message": "x"}}, 60),
        ({"type": "error", "error": {"message": "x"}, "sequence_number": 2}, 0),
        ({"type": "response.created", "response": {}}, 0),
        ({"object": "chat.completion.chunk", "choices": []}, 0),
        ({"type": ["unhashable"]}, 0),
        ([1, 2], 0),
    ],
)
def test_probe_is_certain_only_of_the_streams_own_event_names(data, score):
    assert probe([Record(data, line=1)]) == score


def test_a_bare_error_event_is_not_certain_but_is_anthropic_alone():
    record = Record({"type": "error", "error": {"type": "api_error", "message": "x"}}, line=1)
    assert sniff([record]).name == ANTHROPIC
    assert probe([Record(done=True), Record(error="bad", line=2)]) == 0


def test_a_delta_whose_index_is_not_an_integer_keeps_it_as_residue():
    # 1.0 and true equal 1 in Python: the record still differs from the canonical one.
    for index in (1.0, True):
        events = [message_start(), *text(0, "a"), block_start(1, {"type": "text", "text": ""})]
        events.append(block_delta(index, {"type": "text_delta", "text": "b"}))
        (delta,) = flat(events)[-2:-1]
        assert delta.text == "b" and delta.extra == {"index": index}
        assert type(delta.extra["index"]) is type(index)
