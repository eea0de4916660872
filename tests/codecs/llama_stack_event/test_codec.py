"""llama-stack-event decoding, and llama-stack -> llama-stack exactness."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatx import ir
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from tests.codecs.llama_stack_event.support import (
    FIXTURES,
    LLAMA_CAPTURES,
    OWN,
    decode,
    encode,
    fixture,
    flat,
    needs_captures,
    read_jsonl,
    records,
    said,
)

WEATHER = ("get_weather", {"city": "Paris"})

# fixture -> (text, calls as (call_id, name, arguments), usage, finish)
EXPECTED = {
    "text": ("Paris is the capital of France.", [], (12, 7, 19), "stop"),
    "text-nometrics": ("Hello there!", [], None, "stop"),
    "out-of-tokens": ("Once upon a time, there", [], (5, 4, 9), "length"),
    "logprobs": ("Yes.", [], (3, 2, 5), "stop"),
    "text-json-answer": ('{"answer": 42}', [], None, "stop"),
    "toolstream-json": (
        "",
        [("call-weather-1", "get_weather", {"city": "Paris", "days": 3})],
        (40, 18, 58),
        "tool_calls",
    ),
    "text-then-parse": ("", [("call-weather-2", *WEATHER)], (40, 9, 49), "tool_calls"),
    "text-then-parse-json": ("", [("call-lookup", "lookup", {"id": 7})], None, "tool_calls"),
    "builtin-brave-search": (
        "",
        [("call-brave", "brave_search", {"query": "llama stack"})],
        (30, 12, 42),
        "tool_calls",
    ),
    "builtin-code-interpreter": (
        "",
        [("call-code", "code_interpreter", {"code": "import math\nprint(math.pi)"})],
        (30, 11, 41),
        "tool_calls",
    ),
    # Llama Stack could not parse the call: its raw text is what the model said.
    "failed": ("get_weather(city=Paris", [], None, "stop"),
    "error": ("The answer", [], None, None),
    # Fireworks' metrics carry telemetry fields (span, trace, timestamps) beside the values.
    "fireworks-metrics-telemetry": ("Lima is the capital.", [], (18, 6, 24), "stop"),
    # The OpenAI-compat layer's incremental shape: "name(", the arguments, ")", no started.
    "tool-call-openai-compat": (
        "",
        [("call_fixture_0", "get_weather", {"city": "Paris"})],
        None,
        "tool_calls",
    ),
    # The same layer's parallel calls: each succeeded says end_of_message, the next
    # call's records come after the first succeeded.
    "tool-calls-openai-compat-parallel": (
        "",
        [
            ("call_par_0", "get_weather", {"city": "Oslo"}),
            ("call_par_1", "get_time", {"tz": "Europe/Oslo"}),
        ],
        (52, 24, 76),
        "tool_calls",
    ),
}


def test_every_fixture_has_expectations() -> None:
    names = {path.stem for path in FIXTURES.glob("*.jsonl")}
    assert names, f"no fixtures in {FIXTURES}"
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_decodes_to_expected_meaning(name: str) -> None:
    text, calls, usage, finish = EXPECTED[name]
    got = said(flat(decode(read_jsonl(fixture(name)))))
    assert (got.text, got.calls, got.usage, got.finish) == (text, calls, usage, finish)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reencodes_exactly(name: str) -> None:
    recs = read_jsonl(fixture(name))
    assert encode(decode(recs), OWN) == [rec.data for rec in recs]


@needs_captures
@pytest.mark.parametrize("path", LLAMA_CAPTURES, ids=lambda p: p.stem.split("__")[-1])
def test_capture_reencodes_record_for_record(path: Path) -> None:
    recs = read_jsonl(path)
    notes = Notes()
    batches = decode(recs, notes)
    assert encode(batches, OWN, notes) == [rec.data for rec in recs]
    assert not notes, [str(note) for note in notes.summary()]


@needs_captures
@pytest.mark.parametrize("path", LLAMA_CAPTURES, ids=lambda p: p.stem.split("__")[-1])
def test_capture_decodes_to_its_meaning(path: Path) -> None:
    recs = read_jsonl(path)
    events = flat(decode(recs))
    got = said(events)
    final = [
        r.data["event"]["delta"]["tool_call"]
        for r in recs
        if r.data["event"]["delta"].get("parse_status") == "succeeded"
    ]
    streamed = "".join(r.data["event"]["delta"].get("text", "") for r in recs)
    assert got.calls == [(c["call_id"], c["tool_name"], c["arguments"]) for c in final]
    # Shape 2 (text then a lone succeeded): the call's text is not message text.
    assert got.text == ("" if final else streamed)
    assert got.finish == ("tool_calls" if final else "stop")
    metrics = recs[-1].data["metrics"]
    assert got.usage == (tuple(m["value"] for m in metrics) if metrics else None)
    assert isinstance(events[0], ir.StreamStart) and isinstance(events[-1], ir.StreamEnd)


# --- the shape-2 hold ---------------------------------------------------------------------


def _ev(kind: str, delta: dict, stop: str | None = None) -> dict:
    return {
        "event": {"event_type": kind, "delta": delta, "logprobs": None, "stop_reason": stop},
        "metrics": None,
    }


def _text(text: str) -> dict:
    return _ev("progress", {"type": "text", "text": text})


START = _ev("start", {"type": "text", "text": ""})
COMPLETE = _ev("complete", {"type": "text", "text": ""}, "end_of_turn")


def test_text_that_cannot_be_a_call_goes_out_at_once() -> None:
    batches = decode(records(START, _text("[1] see"), _text(" below"), COMPLETE))
    assert [e.text for e in batches[1] if isinstance(e, ir.TextDelta)] == ["[1] see"]


def test_text_that_may_be_a_call_waits_for_the_stream_to_decide() -> None:
    batches = decode(records(START, _text('  {"'), _text('a": 1}'), COMPLETE))
    assert batches[1] == [] and batches[2] == []
    # complete decides: no call came, so the held records are text, one delta each.
    assert [e.text for e in batches[3] if isinstance(e, ir.TextDelta)] == ['  {"', 'a": 1}']


def test_opener_prefix_is_held_one_record_only() -> None:
    batches = decode(records(START, _text("b"), _text("ut no"), COMPLETE))
    assert batches[1] == []
    assert [e.text for e in batches[2] if isinstance(e, ir.TextDelta)] == ["b", "ut no"]


def test_text_released_before_a_lone_succeeded_warns() -> None:
    call = {
        "type": "tool_call",
        "parse_status": "succeeded",
        "tool_call": {"call_id": "c1", "tool_name": "f", "arguments": {}},
    }
    notes = Notes()
    got = said(flat(decode(records(START, _text("f()"), _ev("progress", call), COMPLETE), notes)))
    assert got.text == "f()" and got.calls == [("c1", "f", {})]
    assert any("may have been the call" in note.message for note in notes.items)


def _tool(status: str, value: object, stop: str | None = None) -> dict:
    return _ev("progress", {"type": "tool_call", "tool_call": value, "parse_status": status}, stop)


def test_fragments_that_are_the_arguments_stay_argument_fragments() -> None:
    call = {"call_id": "c", "tool_name": "f", "arguments": {"a": 1}, "arguments_json": '{"a": 1}'}
    recs = records(
        START,
        _tool("started", ""),
        _tool("in_progress", '{"a": '),
        _tool("in_progress", "1}"),
        _tool("succeeded", call, "end_of_message"),
        COMPLETE,
    )
    batches = decode(recs)
    assert batches[1] == batches[2] == batches[3] == []  # id and name come with succeeded
    fragments = [e.fragment for e in batches[4] if isinstance(e, ir.ToolArgsDelta)]
    assert fragments == ['{"a": ', "1}"]
    assert encode(batches, OWN) == [rec.data for rec in recs]


def test_raw_fragments_are_not_argument_fragments() -> None:
    events = decode(read_jsonl(fixture("builtin-code-interpreter")))[4]
    fragments = [e.fragment for e in events if isinstance(e, ir.ToolArgsDelta)]
    assert fragments == ['{"code":"import math\\nprint(math.pi)"}']


@pytest.mark.parametrize(
    ("name", "middle", "text"),
    [
        # Older Llama Stack sends failed with no text: the fragments are what was said.
        ("failed-empty", [_tool("in_progress", "x("), _tool("failed", "", "end_of_turn")], "x("),
        # A failed text that is not the fragments is the text.
        ("failed-other", [_tool("in_progress", "x("), _tool("failed", "y(")], "y("),
        # A streamed call the stream never finished is released as text.
        ("unfinished", [_tool("in_progress", "print(1)")], "print(1)"),
        ("empty-fragment", [_tool("in_progress", ""), _tool("failed", "")], ""),
    ],
)
def test_unparsed_calls_are_text_and_come_back_exactly(
    name: str, middle: list[dict], text: str
) -> None:
    recs = records(START, _tool("started", ""), *middle, COMPLETE)
    batches = decode(recs)
    got = said(flat(batches))
    assert (got.text, got.calls) == (text, [])
    assert encode(batches, OWN) == [rec.data for rec in recs]


# --- other records ------------------------------------------------------------------------


def test_error_frame_is_an_error_event_and_comes_back() -> None:
    frame = {"error": {"message": "boom", "type": "RuntimeError", "code": None, "detail": 1}}
    recs = records(START, frame)
    batches = decode(recs)
    error = next(e for e in flat(batches) if isinstance(e, ir.Error))
    assert (error.message, error.type) == ("boom", "RuntimeError")
    assert encode(batches, OWN) == [START, frame]


def test_truncated_stream_is_not_given_an_ending() -> None:
    notes = Notes()
    recs = records(START, _text("Hi"))
    batches = decode(recs, notes)
    assert not any(isinstance(e, ir.StreamEnd) for e in flat(batches))
    assert encode(batches, OWN) == [START, _text("Hi")]
    assert any("without a complete event" in note.message for note in notes.items)


def test_unusual_records_still_come_back_exactly() -> None:
    sparse = {"event": {"event_type": "progress", "delta": {"type": "text", "text": "x"}}}
    extra = {
        "event": {
            "event_type": "progress",
            "delta": {"type": "text", "text": "", "k": 1},
            "logprobs": [{"weird": True}],
            "stop_reason": None,
            "x": [1],
        },
        "metrics": None,
        "top": "level",
    }
    image = _ev("progress", {"type": "image", "image": {"data": "aGk="}})
    recs = records(START, sparse, extra, image, COMPLETE)
    notes = Notes()
    assert encode(decode(recs, notes), OWN) == [rec.data for rec in recs]
    assert any("image delta" in note.message for note in notes.items)


def test_string_arguments_and_enum_tool_names_come_back_exactly() -> None:
    call = {
        "call_id": "c",
        "tool_name": "BuiltinTool.brave_search",
        "arguments": '{"query": "x"}',
        "arguments_json": '{"query": "x"}',
    }
    done = _ev(
        "progress",
        {"type": "tool_call", "parse_status": "succeeded", "tool_call": call},
        "end_of_message",
    )
    recs = records(START, done, COMPLETE)
    batches = decode(recs)
    assert said(flat(batches)).calls == [("c", "brave_search", {"query": "x"})]
    assert encode(batches, OWN) == [rec.data for rec in recs]


def test_logprobs_become_chat_style_entries() -> None:
    delta = next(
        e for e in flat(decode(read_jsonl(fixture("logprobs")))) if isinstance(e, ir.TextDelta)
    )
    assert delta.logprobs[0]["token"] == "Yes"
    assert [t["token"] for t in delta.logprobs[0]["top_logprobs"]] == ["Yes", "No"]


@pytest.mark.parametrize(
    "bad", [Record(error="bad json", line=3), Record([1], line=3), Record({"x": 1}, line=3)]
)
def test_bad_records_raise_input_errors(bad: Record) -> None:
    with pytest.raises(InputError) as info:
        decode([bad])
    assert info.value.line == 3


def test_done_sentinel_is_ignored_with_a_warning() -> None:
    notes = Notes()
    assert decode([Record(done=True)], notes) == [[], []]
    assert notes.items and "[DONE]" in notes.items[0].message


def test_a_second_start_begins_a_second_stream() -> None:
    recs = records(START, _text("a"), COMPLETE, START, _text("b"), COMPLETE)
    batches = decode(recs)
    starts = [e for e in flat(batches) if isinstance(e, ir.StreamStart)]
    assert len(starts) == 2
    assert encode(batches, OWN) == [rec.data for rec in recs]
