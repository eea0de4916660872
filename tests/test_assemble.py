"""The Assembler: IR batches in, what a client reconstructs out."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from chatx import ir
from chatx.collect.assembler import Assembler, assemble
from chatx.collect.items import joined
from chatx.collect.streams import other_items, streams_of
from chatx.pieces import Pieces
from chatx.reading.framing import load
from tests.streams import sse


def _feed(*batches: list[ir.Event]) -> Assembler:
    stream = Assembler(other_items)
    for batch in batches:
        stream.feed(batch)
    return stream


def _chat(text: str = "Hi") -> list[dict]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "m"}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {**base, "choices": [{"index": 0, "delta": {"content": text}}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **base,
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        },
    ]


def test_text_reasoning_refusal_and_finish_per_lane() -> None:
    stream = _feed(
        [ir.StreamStart("chatcmpl-1", "m", 7), ir.LaneStart(0), ir.LaneStart(1)],
        [ir.ItemStart(0, "reasoning"), ir.ReasoningDelta(0, "think", source_field="reasoning")],
        [ir.ItemEnd(0, "reasoning"), ir.ItemStart(0, "message"), ir.TextDelta(0, "Hel")],
        [ir.TextDelta(0, "lo", logprobs=[{"token": "lo"}]), ir.TextDelta(1, "Other")],
        [ir.RefusalDelta(1, "No.")],
        [ir.Finish(0, "stop"), ir.Finish(1, "length", "max_output_tokens"), ir.StreamEnd()],
    )
    assert (stream.id, stream.model, stream.created) == ("chatcmpl-1", "m", 7)
    first, second = stream.choices
    assert (first.text, first.reasoning, first.refusal, first.finish) == (
        "Hello",
        "think",
        "",
        "stop",
    )
    assert first.reasoning_field == "reasoning"
    assert first.logprobs == [{"token": "lo"}]
    assert [i.kind for i in first.items] == ["reasoning", "message"]
    assert (second.text, second.refusal, second.finish, second.raw_finish) == (
        "Other",
        "No.",
        "length",
        "max_output_tokens",
    )
    assert stream.ended
    assert stream.counts["TextDelta"] == 3


def test_tool_calls_keep_their_order_ids_and_fragments() -> None:
    stream = _feed(
        [ir.StreamStart("x"), ir.ItemStart(0, "tool_call", call=0, call_id="c0", name="f")],
        [
            ir.ToolArgsDelta(0, 0, '{"a"'),
            ir.ToolArgsDelta(0, 0, ""),
            ir.ToolArgsDelta(0, 0, ": 1}"),
        ],
        [
            ir.ItemEnd(0, "tool_call", 0),
            ir.ItemStart(0, "tool_call", call=1, call_id="c1", name="g"),
        ],
        # A fragment for a call never opened is kept all the same.
        [ir.ToolArgsDelta(0, 2, "{}")],
    )
    calls = stream.lanes[0].calls
    assert [(c.call, c.call_id, c.name, c.arguments) for c in calls] == [
        (0, "c0", "f", '{"a": 1}'),
        (1, "c1", "g", ""),
        (2, None, None, "{}"),
    ]
    assert joined(calls[0].fragments) == '{"a": 1}'  # empty pieces are not kept


def test_usage_last_wins_and_errors_accumulate() -> None:
    stream = _feed(
        [ir.StreamStart("x"), ir.Usage(1, 2, 3)],
        [ir.Usage(4, 5, 9)],
        [ir.Error("boom", 500), ir.Error("again")],
    )
    assert stream.usage is not None and stream.usage.total == 9
    assert [e.message for e in stream.errors] == ["boom", "again"]
    assert not stream.ended


def test_passthrough_items_keep_their_place_and_final_form() -> None:
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": "ws_1", "type": "web_search_call", "status": "in_progress"},
    }
    done = {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {"id": "ws_1", "type": "web_search_call", "status": "completed"},
    }
    stream = _feed(
        [ir.StreamStart("resp_1"), ir.LaneStart(0)],
        [ir.Passthrough("responses-event", added, "response.output_item.added")],
        [ir.Passthrough("responses-event", {"type": "response.web_search_call.searching"})],
        [ir.Passthrough("responses-event", done, "response.output_item.done")],
        [ir.ItemStart(0, "message", "msg_1"), ir.TextDelta(0, "Found it.")],
    )
    lane = stream.lanes[0]
    assert [i.kind for i in lane.items] == ["other", "message"]
    assert lane.others()[0].data["status"] == "completed"
    assert stream.passthrough["response.web_search_call.searching"] == 1
    # The Assembler knows no format: without the formats' word, the items are not kept.
    bare = Assembler()
    bare.feed([ir.Passthrough("responses-event", added, "response.output_item.added")])
    assert bare.lanes == {} and bare.passthrough["response.output_item.added"] == 1


def test_a_second_stream_start_begins_a_new_assembler() -> None:
    batches = [
        [
            ir.StreamStart("resp_1"),
            ir.LaneStart(0),
            ir.ItemStart(0, "message"),
            ir.TextDelta(0, "one"),
        ],
        # The Responses decoder closes the first stream and opens the next in one batch.
        [ir.StreamEnd(), ir.StreamStart("resp_2"), ir.LaneStart(0)],
        [ir.ItemStart(0, "message"), ir.TextDelta(0, "two"), ir.Finish(0, "stop")],
    ]
    first, second = assemble(batches)
    assert (first.id, first.lanes[0].text, first.ended) == ("resp_1", "one", True)
    assert (second.id, second.lanes[0].text, second.lanes[0].finish) == ("resp_2", "two", "stop")


def test_lanes_that_say_nothing_are_not_choices() -> None:
    # A lane only a record's residue named says nothing; a choice whose first chunk came
    # (its role: a stream that failed before its first word) is one, as the openai SDK's
    # accumulator keeps it.
    stream = _feed(
        [ir.StreamStart("x"), ir.Meta(0, {"content_filter_results": {}}), ir.LaneStart(1)],
        [ir.ItemStart(2, "message"), ir.TextDelta(2, "hi")],
    )
    assert [lane.index for lane in stream.choices] == [1, 2]


def test_joined_is_the_whole_text() -> None:
    parts = Pieces()
    for piece in "abc":
        parts.append(piece)
    assert joined(parts) == "abc" and joined(parts) == "abc"
    assert joined(Pieces()) == ""


def test_load_and_assemble_a_chat_stream() -> None:
    side = load(sse(_chat("Hello")), "mem")
    (stream,) = streams_of(side)
    assert (side.format, side.container) == ("chat-chunk", "sse")
    assert stream.lanes[0].text == "Hello"
    assert stream.usage is not None and (stream.usage.input, stream.usage.output) == (3, 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=8), min_size=1, max_size=30))
def test_how_deltas_are_split_does_not_matter(pieces: list[str]) -> None:
    stream = _feed(
        [ir.StreamStart("x"), ir.ItemStart(0, "message")],
        *[[ir.TextDelta(0, p)] for p in pieces],
        [ir.ItemStart(0, "tool_call", call=0)],
        *[[ir.ToolArgsDelta(0, 0, p)] for p in pieces],
    )
    assert stream.lanes[0].text == "".join(pieces)
    assert stream.lanes[0].calls[0].arguments == "".join(pieces)


def test_memory_follows_the_text_not_the_events() -> None:
    """20k empty deltas and bookkeeping events keep nothing but their counts."""
    stream = Assembler()
    stream.feed([ir.StreamStart("x"), ir.ItemStart(0, "message")])
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    empty = [ir.TextDelta(0, ""), ir.Meta(None, {"obfuscation": "abc"})]
    for _ in range(20_000):
        stream.feed(empty)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 32_000, grown
    assert stream.lanes[0].text == ""


def test_many_short_deltas_cost_about_their_text() -> None:
    """A str costs ~50 bytes beside its text: 100k deltas of a few characters are folded
    as they come, not kept apart, and every character stays in order."""
    tracemalloc.start()
    stream = Assembler()
    stream.feed([ir.StreamStart("x"), ir.ItemStart(0, "tool_call", call=0)])
    stream.feed([ir.ItemStart(0, "message")])
    for n in range(100_000):
        word = f"w{n % 97}."  # a new str each time, as a decoder makes them
        stream.feed([ir.TextDelta(0, word), ir.ToolArgsDelta(0, 0, word)])
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    text = "".join(f"w{n % 97}." for n in range(100_000))
    assert kept < 6 * len(text), (kept, len(text))  # apart: ~60 bytes a delta
    (call, message) = stream.lanes[0].items
    assert joined(message.text) == text
    assert call.call is not None and call.call.arguments == text
