"""The anthropic-event checker on its own: each rule, the valid shapes around it.

Streams are built here from small dicts (own ids and text); the checker is fed records
as a reader makes them, the SSE event name equal to the data's type unless a test says
otherwise.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from chatx.codecs.anthropic_event.check import AnthropicChecker
from chatx.codecs.anthropic_event.rules import ANTHROPIC_RULES
from chatx.errors import UsageError
from chatx.record import Record
from chatx.validation import make_checker, validate_records

NAMED = object()  # the record's SSE event name is the data's type


def start(content: list[Any] | None = None, *, out: Any = 1, **message: Any) -> dict[str, Any]:
    body = {
        "id": "msg_t1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content or [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": out},
        **message,
    }
    return {"type": "message_start", "message": body}


def block(index: int, kind: str = "text", **fields: Any) -> dict[str, Any]:
    content = {"type": kind, **({"text": ""} if kind == "text" else {}), **fields}
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, kind: str = "text_delta", **fields: Any) -> dict[str, Any]:
    if not fields:
        fields = {
            "text_delta": {"text": "Hi"},
            "input_json_delta": {"partial_json": ""},
            "thinking_delta": {"thinking": "Hm"},
            "signature_delta": {"signature": "EqSig"},
            "citations_delta": {"citation": {"type": "char_location", "cited_text": "x"}},
            "compaction_delta": {"content": "Summary"},
        }.get(kind, {})
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def args(index: int, text: str) -> dict[str, Any]:
    return delta(index, "input_json_delta", partial_json=text)


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: Any = "end_turn", **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": usage or {"output_tokens": 5},
    }


PING = {"type": "ping"}
STOP = {"type": "message_stop"}
ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def text_message(text: str = "Hi") -> list[dict[str, Any]]:
    return [start(), block(0), delta(0, text=text), stop(0), message_delta(), STOP]


def check(
    events: list[Any], container: str | None = "sse", names: Any = NAMED
) -> list[tuple[str, int]]:
    """(rule, line) of each finding; record n is on line n."""
    checker = AnthropicChecker("t.sse", container)
    for line, data in enumerate(events, 1):
        event = data.get("type") if names is NAMED and isinstance(data, dict) else None
        checker.feed(Record(data, event, line))
    return [(f.rule, f.line) for f in checker.finish()]


def messages(events: list[Any]) -> list[str]:
    checker = AnthropicChecker("t.sse", "sse")
    for line, data in enumerate(events, 1):
        checker.feed(Record(data, data.get("type"), line))
    return [f.message for f in checker.finish()]


def test_the_catalogue_is_the_format_s_and_documented() -> None:
    ids = [rule.id for rule in ANTHROPIC_RULES]
    assert ids == [f"ANT{n:03d}" for n in range(1, 15)] + ["ANT100"]
    assert {rule.format for rule in ANTHROPIC_RULES} == {"anthropic-event"}
    warnings = {rule.id for rule in ANTHROPIC_RULES if rule.severity == "W"}
    assert warnings == {"ANT005", "ANT014"}
    assert [rule.id for rule in ANTHROPIC_RULES if rule.schema] == ["ANT100"]
    assert all(rule.summary and rule.explanation and rule.bad_example for rule in ANTHROPIC_RULES)
    assert set(AnthropicChecker.rules) >= set(ids) | {"STR001", "STR002", "STR003"}


def test_a_plain_text_message_is_clean() -> None:
    assert check(text_message()) == []


def test_every_kind_of_block_with_its_deltas_is_clean() -> None:
    events = [
        start(),
        block(0, "thinking", thinking="", signature=""),
        delta(0, "thinking_delta"),
        delta(0, "thinking_delta", thinking=""),
        PING,
        delta(0, "signature_delta"),
        stop(0),
        block(1, "redacted_thinking", data="EmRedacted"),
        stop(1),
        block(2, citations=[]),
        delta(2, "citations_delta"),
        delta(2),
        stop(2),
        block(3, "server_tool_use", id="srvtoolu_t1", name="web_search", input={}),
        args(3, ""),
        args(3, '{"query": "chatx"}'),
        stop(3),
        block(4, "web_search_tool_result", tool_use_id="srvtoolu_t1", content=[]),
        stop(4),
        block(5, "compaction", content=None),
        delta(5, "compaction_delta"),
        stop(5),
        block(6, "tool_use", id="toolu_t1", name="get_time", input={}),
        args(6, ""),
        stop(6),
        message_delta("tool_use"),
        STOP,
    ]
    assert check(events) == []


def test_ant001_the_stream_starts_with_message_start() -> None:
    assert check(text_message()[1:]) == [("ANT001", 1)]
    # said once: the events after it are checked as usual
    assert check([block(0), delta(0), stop(0), message_delta(), STOP]) == [("ANT001", 1)]


def test_ant001_a_ping_or_an_error_may_come_first() -> None:
    assert check([PING, *text_message()]) == []
    assert check([ERROR]) == [("ANT014", 1)]


def test_ant002_nothing_follows_message_stop_but_a_ping_or_the_next_message() -> None:
    assert check([*text_message(), delta(0)]) == [("ANT002", 7)]
    assert check([*text_message(), STOP]) == [("ANT002", 7)]
    assert check([*text_message(), PING, *text_message("Again"), PING]) == []


def test_ant002_an_error_event_ends_the_stream() -> None:
    events = [start(), block(0), delta(0), ERROR, delta(0), stop(0)]
    assert check(events) == [("ANT014", 4), ("ANT002", 5), ("ANT002", 6)]
    assert "after the error event at line 4" in messages(events)[1]
    # ... and the next message may begin after it
    assert check([start(), ERROR, *text_message()]) == [("ANT014", 2)]


def test_ant003_a_stream_cut_short() -> None:
    events = text_message()[:3]
    assert check(events) == [("ANT003", 3)]
    assert messages(events) == [
        "the message ends without message_stop, with content block 0 open: the stream ends"
    ]
    assert check([*text_message()[:-1], PING]) == [("ANT003", 6)]


def test_ant003_a_message_start_while_a_message_is_open() -> None:
    events = [*text_message()[:4], *text_message()]
    assert check(events) == [("ANT003", 4)]
    assert "the message_start at line 5 begins another" in messages(events)[0]


def test_ant003_is_not_said_for_an_input_of_pings_or_an_error() -> None:
    assert check([PING, PING]) == []
    assert check([start(), block(0), ERROR]) == [("ANT014", 3)]


@pytest.mark.parametrize(
    ("bad", "found"),
    [
        (["not an object"], []),
        ({"kind": "content_block_stop", "index": 0}, []),
        ({"type": 7}, []),
        ({"type": "content_block_start", "index": "1", "content_block": {"type": "text"}}, []),
        ({"type": "content_block_start", "index": 1}, []),
        ({"type": "content_block_delta", "index": 0, "delta": {"text": "Hi"}}, []),
        ({"type": "content_block_delta", "index": True, "delta": {"type": "text_delta"}}, []),
        ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}, []),
        ({"type": "content_block_stop"}, []),
        ({"type": "message_delta", "usage": {"output_tokens": 5}}, [("ANT010", 4)]),
    ],
)
def test_ant004_malformed_events(bad: Any, found: list[tuple[str, int]]) -> None:
    events = [start(), block(0), delta(0), bad, stop(0), message_delta(), STOP]
    assert sorted(check(events, container="jsonl", names=None)) == sorted([("ANT004", 4), *found])


def test_ant004_message_start_without_a_message() -> None:
    events = [{"type": "message_start"}, block(0), delta(0), stop(0), message_delta(), STOP]
    assert check(events) == [("ANT004", 1)]


def test_ant004_delta_fields_have_their_types() -> None:
    for kind, fields in (
        ("text_delta", {"text": 1}),
        ("input_json_delta", {"partial_json": None}),
        ("thinking_delta", {}),
        ("signature_delta", {"signature": ["E"]}),
        ("citations_delta", {"citation": "doc"}),
    ):
        bad = {"type": "content_block_delta", "index": 0, "delta": {"type": kind, **fields}}
        host = {"text_delta": "text", "citations_delta": "text", "input_json_delta": "tool_use"}
        opened = block(0, host.get(kind, "thinking"), **({"input": {}} if "json" in kind else {}))
        assert check([start(), opened, bad, stop(0), message_delta(), STOP]) == [("ANT004", 3)]


def test_ant004_an_error_event_without_type_and_message() -> None:
    bad = {"type": "error", "error": "Overloaded"}
    assert check([start(), bad]) == [("ANT004", 2), ("ANT014", 2)]


def test_ant005_unknown_types_are_warnings_and_outside_the_order() -> None:
    unknown = {"type": "message_progress", "percent": 5}
    assert check([unknown, *text_message(), unknown]) == [("ANT005", 1), ("ANT005", 8)]
    events = [start(), block(0, "hologram"), delta(0, "sparkle_delta"), stop(0)]
    assert check([*events, message_delta(), STOP]) == [("ANT005", 2), ("ANT005", 3)]
    # a known delta in an unknown block is not judged
    assert check([start(), block(0, "hologram"), delta(0), stop(0), message_delta(), STOP]) == [
        ("ANT005", 2)
    ]


def test_ant006_the_sse_event_name_is_the_type() -> None:
    events = text_message()
    checker = AnthropicChecker("t.sse", "sse")
    for line, data in enumerate(events, 1):
        name = {3: "content_block_stop", 4: None}.get(line, data["type"])
        checker.feed(Record(data, name, line))
    assert [(f.rule, f.line) for f in checker.finish()] == [("ANT006", 3), ("ANT006", 4)]


def test_ant006_json_lines_carry_no_names() -> None:
    assert check(text_message(), container="jsonl", names=None) == []
    assert check(text_message(), container="sse", names=None) == [
        ("ANT006", n) for n in range(1, 7)
    ]


def test_ant007_indexes_count_up_from_zero_by_one() -> None:
    two = [start(), block(0), stop(0), block(2), stop(2), message_delta(), STOP]
    assert check(two) == [("ANT007", 4)]
    again = [start(), block(0), stop(0), block(0), stop(0), message_delta(), STOP]
    assert check(again) == [("ANT007", 4)]
    assert check([start(), block(1), stop(1), block(2), stop(2), message_delta(), STOP]) == [
        ("ANT007", 2)
    ]


def test_ant007_a_message_start_with_content_numbers_on_from_it() -> None:
    call = {"type": "tool_use", "id": "toolu_t1", "name": "run", "input": {}}
    assert check([start([call]), block(1), stop(1), message_delta(), STOP]) == []
    # programmatic tool calling: a finished turn in message_start alone
    assert check([start([call], stop_reason="tool_use"), STOP]) == []


def test_ant008_deltas_and_stops_of_blocks_not_open() -> None:
    assert check([start(), delta(0), message_delta(), STOP]) == [("ANT008", 2)]
    events = [start(), block(0), stop(0), delta(0), stop(0), message_delta(), STOP]
    assert check(events) == [("ANT008", 4), ("ANT008", 5)]
    assert "after its content_block_stop at line 3" in messages(events)[0]


@pytest.mark.parametrize(
    ("kind", "bad"),
    [
        ("text", "input_json_delta"),
        ("text", "thinking_delta"),
        ("thinking", "text_delta"),
        ("thinking", "citations_delta"),
        ("tool_use", "text_delta"),
        ("server_tool_use", "signature_delta"),
        ("mcp_tool_use", "thinking_delta"),
        ("compaction", "text_delta"),
        ("redacted_thinking", "thinking_delta"),
        ("web_search_tool_result", "text_delta"),
    ],
)
def test_ant009_a_delta_of_another_block_type(kind: str, bad: str) -> None:
    events = [start(), block(0, kind), delta(0, bad), stop(0), message_delta(), STOP]
    assert check(events) == [("ANT009", 3)]


def test_ant010_blocks_are_done_before_the_message_level_events() -> None:
    cut = [start(), block(0), delta(0), message_delta("max_tokens"), STOP]
    assert check(cut) == [("ANT010", 4)]  # once per block, not again at message_stop
    late_stop = [start(), block(0), delta(0), message_delta(), stop(0), STOP]
    assert check(late_stop) == [("ANT010", 4)]
    assert check([start(), block(0), stop(0), STOP]) == [("ANT011", 4)]
    assert check([start(), block(0), message_delta(), STOP]) == [("ANT010", 3)]
    late_block = [start(), message_delta(), block(0), stop(0), STOP]
    assert check(late_block) == [("ANT010", 3)]


def test_ant010_at_message_stop() -> None:
    assert check([start(), block(0), STOP]) == [("ANT010", 3), ("ANT011", 3)]


def test_ant011_message_stop_needs_a_stop_reason() -> None:
    assert check([start(), block(0), stop(0), STOP]) == [("ANT011", 4)]
    unsaid = [start(), block(0), stop(0), message_delta(None), STOP]
    assert check(unsaid) == [("ANT011", 5)]
    assert messages(unsaid) == ["message_stop without a stop_reason: no message_delta gives one"]
    # one or more message_delta: the reason may come in any of them
    later = [start(), block(0), stop(0), message_delta(None), message_delta("max_tokens"), STOP]
    assert check(later) == []


@pytest.mark.parametrize(
    ("fragments", "found"),
    [
        (["", '{"city": ', '"Paris"}'], []),
        ([""], []),
        ([], []),
        (["", '{"city": "Par'], [("ANT012", 5)]),
        (['["Paris"]'], [("ANT012", 4)]),
        (["  "], [("ANT012", 4)]),
        (['{"a": 1}', '{"b": 2}'], [("ANT012", 5)]),
    ],
)
def test_ant012_tool_input_parses_at_block_stop(
    fragments: list[str], found: list[tuple[str, int]]
) -> None:
    call = block(0, "tool_use", id="toolu_t1", name="get_weather", input={})
    events = [start(), call, *(args(0, text) for text in fragments), stop(0)]
    assert check([*events, message_delta("tool_use"), STOP]) == found


def test_ant012_server_and_mcp_tool_input_too() -> None:
    for kind in ("server_tool_use", "mcp_tool_use"):
        call = block(0, kind, id="srvtoolu_t1", name="web_search", input={})
        events = [start(), call, args(0, '{"query": '), stop(0), message_delta(), STOP]
        assert check(events) == [("ANT012", 4)]
        assert messages(events) == [
            f"the input of {kind} block 0 does not parse as JSON, not an object"
        ]


def test_ant012_a_last_input_cut_off_by_max_tokens_is_no_error() -> None:
    # The token limit may fall inside a tool's input: the message says so (a client retries).
    call = block(0, "tool_use", id="toolu_t1", name="make_file", input={})
    cut = [start(), call, args(0, '{"lines": ["one'), stop(0)]
    for reason in ("max_tokens", "model_context_window_exceeded"):
        assert check([*cut, message_delta(reason), STOP]) == []
    assert check([*cut, message_delta("tool_use"), STOP]) == [("ANT012", 4)]
    assert check([*cut, message_delta(None), message_delta("end_turn"), STOP]) == [("ANT012", 4)]
    # not the last block: no limit cut it off
    later = [*cut, block(1), delta(1), stop(1), message_delta("max_tokens"), STOP]
    assert check(later) == [("ANT012", 4)]
    # the stream ends or fails before saying why it stopped
    assert check(cut) == [("ANT012", 4), ("ANT003", 4)]
    assert check([*cut, ERROR]) == [("ANT012", 4), ("ANT014", 5)]
    # JSON that parses to no object is no cut-off
    whole = [start(), call, args(0, "[1]"), stop(0), message_delta("max_tokens"), STOP]
    assert check(whole) == [("ANT012", 4)]


def test_ant013_counts_are_cumulative() -> None:
    down = [start(out=5), *text_message()[1:4], message_delta(output_tokens=3), STOP]
    assert check(down) == [("ANT013", 5)]
    again = [start(), message_delta(None, output_tokens=9), message_delta(output_tokens=4), STOP]
    assert check(again) == [("ANT013", 3)]
    # input counts may grow (Ollama repeats a larger input_tokens), never shrink
    grows = [start(), message_delta(output_tokens=5, input_tokens=70), STOP]
    assert check(grows) == []
    shrinks = [start(), message_delta(output_tokens=5, input_tokens=3), STOP]
    assert check(shrinks) == [("ANT013", 2)]


def test_ant013_iterations_count_the_last_one_alone() -> None:
    # compaction: message_start counts the first iteration, message_delta's top level the last
    compacted = message_delta(input_tokens=6, output_tokens=8, iterations=[{"type": "message"}])
    events = [start(out=7, usage={"input_tokens": 600, "output_tokens": 7}), compacted, STOP]
    assert check(events) == []


@pytest.mark.parametrize(
    ("usage", "found"),
    [
        ({"output_tokens": -1}, [("ANT013", 2)]),
        ({"output_tokens": 2.5}, [("ANT013", 2)]),
        ({"output_tokens": True}, [("ANT013", 2)]),
        ({"output_tokens": 5, "cache_read_input_tokens": "9"}, [("ANT013", 2)]),
        ({"output_tokens": 5, "cache_read_input_tokens": None}, []),
        ({"input_tokens": 12}, [("ANT013", 2)]),
        (None, [("ANT013", 2)]),
    ],
)
def test_ant013_message_delta_usage(usage: Any, found: list[tuple[str, int]]) -> None:
    event = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}
    assert check([start(), event, STOP]) == found


def test_ant013_message_start_usage() -> None:
    assert check([start(usage=None), message_delta(), STOP]) == [("ANT013", 1)]
    no_input = start(usage={"output_tokens": 1})
    assert check([no_input, message_delta(), STOP]) == [("ANT013", 1)]


def test_ant014_an_error_event_is_a_warning_that_says_the_error() -> None:
    events = [start(), block(0), delta(0), ERROR]
    assert check(events) == [("ANT014", 4)]
    assert messages(events) == ["error event: Overloaded"]
    rules = {rule.id: rule for rule in ANTHROPIC_RULES}
    assert rules["ANT014"].severity == "W"


def test_done_sentinels_are_ignored() -> None:
    checker = AnthropicChecker("t.sse", "sse")
    for line, data in enumerate(text_message(), 1):
        checker.feed(Record(data, data["type"], line))
    checker.feed(Record(None, None, 7, done=True))
    assert checker.finish() == []


def test_schema_checks_each_event_against_the_sdk_type() -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK (chatx[anthropic]) is the oracle")
    events = text_message()
    events[3] = {"type": "content_block_stop", "index": 0, "note": "extra fields are allowed"}
    events[1] = {**block(0), "content_block": {"type": "text", "text": 5}}
    records = [Record(data, data["type"], line) for line, data in enumerate(events, 1)]
    found = validate_records(records, "anthropic-event", schema=True, container="sse")
    assert [(f.rule, f.line, f.message) for f in found] == [
        ("ANT100", 2, "content_block_start: content_block.text: Input should be a valid string")
    ]
    # a ping has no SDK type (its reader skips pings), an error event the ErrorResponse
    error = {"type": "error", "error": {"type": "overloaded_error", "message": 3}}
    records = [Record(data, data["type"], n) for n, data in enumerate([start(), PING, error], 1)]
    found = validate_records(records, "anthropic-event", schema=True, container="sse")
    assert [(f.rule, f.line) for f in found] == [("ANT004", 3), ("ANT014", 3), ("ANT100", 3)]


def test_schema_without_the_anthropic_sdk_says_which_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "anthropic" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(UsageError) as raised:
        make_checker("anthropic-event", schema=True)
    assert str(raised.value) == (
        "--schema needs the anthropic SDK, which is not installed (pip install 'chatx[anthropic]')"
    )
    make_checker("chat-chunk", schema=True)  # openai's formats need openai's
