"""Encoding IR from other formats as Llama Stack events: shapes, stop reasons, losses and
Llama's special tokens in chat text."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.llama_stack_event.special_tokens import TokenScanner, parse_tool_call
from chatx.notes import Notes
from tests.codecs.llama_stack_event.support import decode, encode, flat, records, said

OPEN = [ir.StreamStart("chatcmpl-X", "m", 1), ir.LaneStart(0)]
END = [ir.StreamEnd()]


def _types(out: list[Any]) -> list[str]:
    """Each record as event_type[/parse_status], or "error"."""
    names = []
    for rec in out:
        if "error" in rec:
            names.append("error")
            continue
        event = rec["event"]
        status = event["delta"].get("parse_status")
        names.append(event["event_type"] + (f"/{status}" if status else ""))
    return names


def _texts(out: list[Any]) -> list[str]:
    return [
        rec["event"]["delta"]["text"]
        for rec in out
        if "event" in rec
        and rec["event"]["delta"]["type"] == "text"
        and rec["event"]["event_type"] == "progress"
    ]


def _text_stream(*pieces: str, finish: str = "stop") -> list[list[ir.Event]]:
    body = [[ir.TextDelta(0, piece)] for piece in pieces]
    return [
        OPEN,
        [ir.ItemStart(0, "message")],
        *body,
        [ir.ItemEnd(0, "message"), ir.Finish(0, finish)],
        END,
    ]


def test_text_stream_shape() -> None:
    out = encode(_text_stream("Hel", "lo"))
    assert _types(out) == ["start", "progress", "progress", "complete"]
    assert out[0] == {
        "event": {
            "event_type": "start",
            "delta": {"type": "text", "text": ""},
            "logprobs": None,
            "stop_reason": None,
        },
        "metrics": None,
    }
    assert _texts(out) == ["Hel", "lo"]
    assert out[-1]["event"]["stop_reason"] == "end_of_turn"


def test_tool_call_is_started_in_progress_succeeded() -> None:
    batches = [
        OPEN,
        [ir.ItemStart(0, "tool_call", call=0, call_id="call_1", name="f")],
        [ir.ToolArgsDelta(0, 0, '{"a":')],
        [ir.ToolArgsDelta(0, 0, " 1}")],
        [ir.ItemEnd(0, "tool_call", call=0), ir.Finish(0, "tool_calls")],
        [ir.Usage(10, 5, 15)],
        END,
    ]
    out = encode(batches)
    assert _types(out) == [
        "start",
        "progress/started",
        "progress/in_progress",
        "progress/in_progress",
        "progress/succeeded",
        "complete",
    ]
    done = out[4]["event"]
    assert done["delta"]["tool_call"] == {
        "call_id": "call_1",
        "tool_name": "f",
        "arguments": {"a": 1},
        "arguments_json": '{"a": 1}',
    }
    assert done["stop_reason"] == "end_of_message"  # the batch that ended the call finished
    assert out[-1]["metrics"] == [
        {"metric": "prompt_tokens", "value": 10, "unit": None},
        {"metric": "completion_tokens", "value": 5, "unit": None},
        {"metric": "total_tokens", "value": 15, "unit": None},
    ]


def test_invalid_arguments_make_a_failed_call_and_a_note() -> None:
    notes = Notes()
    batches = [
        OPEN,
        [
            ir.ItemStart(0, "tool_call", call=0, call_id="c", name="f"),
            ir.ToolArgsDelta(0, 0, '{"a": '),
        ],
        [ir.ItemEnd(0, "tool_call", call=0)],
        [ir.Finish(0, "length")],
        END,
    ]
    out = encode(batches, notes=notes)
    assert out[-2]["event"]["delta"] == {
        "type": "tool_call",
        "tool_call": '{"a": ',
        "parse_status": "failed",
    }
    assert out[-1]["event"]["stop_reason"] == "out_of_tokens"
    assert [n.kind for n in notes.items] == ["lost"]


@pytest.mark.parametrize(
    ("reason", "stop", "lost"),
    [
        ("stop", "end_of_turn", False),
        ("tool_calls", "end_of_message", False),
        ("length", "out_of_tokens", False),
        ("function_call", "end_of_message", False),
        ("content_filter", "end_of_turn", True),
        ("error", "end_of_turn", True),
        ("something_new", "end_of_turn", True),
    ],
)
def test_finish_reason_mapping(reason: str, stop: str, lost: bool) -> None:
    notes = Notes()
    out = encode(_text_stream("x", finish=reason), notes=notes)
    assert out[-1]["event"]["stop_reason"] == stop
    assert any(n.kind == "lost" for n in notes.items) is lost


def test_usage_total_is_derived_and_details_are_reported() -> None:
    notes = Notes()
    batches = [
        *_text_stream("x")[:-1],
        [ir.Usage(3, 4, None, cached=2, reasoning=1, extra={"cost": 0.1})],
        END,
    ]
    out = encode(batches, notes=notes)
    assert [m["value"] for m in out[-1]["metrics"]] == [3, 4, 7]
    assert set(notes.lost_fields) == {"usage.cached_tokens", "usage.reasoning_tokens", "usage.cost"}


def test_logprobs_become_logprobs_by_token() -> None:
    entry = {
        "token": "Hi",
        "logprob": -0.1,
        "bytes": None,
        "top_logprobs": [{"token": "Hi", "logprob": -0.1}, {"token": "Yo", "logprob": -3}],
    }
    out = encode([OPEN, [ir.TextDelta(0, "Hi", [entry])], END])
    assert out[1]["event"]["logprobs"] == [{"logprobs_by_token": {"Hi": -0.1, "Yo": -3}}]


def test_error_event_is_an_error_frame() -> None:
    out = encode([OPEN, [ir.Error("boom", "server_error", type="server")]])
    assert out[-1] == {"error": {"message": "boom", "type": "server", "code": "server_error"}}


def test_an_error_frame_ends_the_stream() -> None:
    notes = Notes()
    out = encode([OPEN, [ir.Error("boom")], [ir.Finish(0, "error")], END], notes=notes)
    assert _types(out) == ["start", "error"]  # as Llama Stack's server ends it
    assert not notes


def test_what_llama_stack_cannot_hold_is_reported() -> None:
    notes = Notes()
    batches = [
        OPEN,
        [ir.ReasoningDelta(0, "hmm")],
        [ir.RefusalDelta(0, "No.")],
        [ir.TextDelta(1, "other choice")],
        [
            ir.Passthrough(
                "responses-event",
                {"type": "response.output_item.added", "item": {"type": "web_search_call"}},
            )
        ],
        [ir.Meta(None, {"system_fingerprint": "fp"})],
        END,
    ]
    out = encode(batches, notes=notes)
    assert _texts(out) == ["No."]  # the refusal, as text
    assert set(notes.lost_fields) == {"reasoning", "system_fingerprint"}
    messages = " | ".join(n.message for n in notes.items)
    assert "refusal" in messages and "choice 1" in messages and "web_search_call" in messages


def test_truncated_input_gets_no_complete_unless_asked() -> None:
    batches = _text_stream("x")[:-1]
    assert _types(encode(batches))[-1] == "progress"
    asked = encode(batches, EncodeOptions(source_format="chat-chunk", finish=True))
    assert _types(asked)[-1] == "complete"


# --- special tokens -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "stop"), [("<|eot_id|>", "end_of_turn"), ("<|eom_id|>", "end_of_message")]
)
def test_stop_tokens_set_the_stop_reason_and_leave_the_text(token: str, stop: str) -> None:
    out = encode(_text_stream("Done", token[:4], token[4:], finish="length"))
    assert "".join(_texts(out)) == "Done"
    assert out[-1]["event"]["stop_reason"] == stop


def test_python_tag_opens_a_builtin_call() -> None:
    out = encode(
        _text_stream(
            "Let me look.", "<|python_", "tag|>brave_search.call(", 'query="llama")', "<|eom_id|>"
        )
    )
    assert _texts(out) == ["Let me look."]
    assert _types(out)[2:] == [
        "progress/started",
        "progress/in_progress",
        "progress/in_progress",
        "progress/succeeded",
        "complete",
    ]
    call = out[-2]["event"]["delta"]["tool_call"]
    assert (call["tool_name"], call["arguments"]) == ("brave_search", {"query": "llama"})
    assert call["call_id"] == "chatcmpl-X-call-0"
    assert out[-2]["event"]["stop_reason"] == out[-1]["event"]["stop_reason"] == "end_of_message"
    back = said(flat(decode(records(*out))))
    assert back.text == "Let me look."
    assert back.calls == [("chatcmpl-X-call-0", "brave_search", {"query": "llama"})]
    assert back.finish == "tool_calls"


def test_python_tag_with_code_calls_the_code_interpreter() -> None:
    out = encode(_text_stream("<|python_tag|>import math\n", "print(math.pi)"))
    call = out[-2]["event"]["delta"]["tool_call"]
    assert call["tool_name"] == "code_interpreter"
    assert call["arguments"] == {"code": "import math\nprint(math.pi)"}
    assert (
        "".join(
            r["event"]["delta"]["tool_call"]
            for r in out
            if r["event"]["delta"].get("parse_status") == "in_progress"
        )
        == "import math\nprint(math.pi)"
    )


def test_empty_python_call_fails() -> None:
    out = encode(_text_stream("<|python_tag|>", " "))
    assert _types(out)[-2] == "progress/failed"


def test_own_stream_text_is_not_scanned() -> None:
    own = EncodeOptions(source_format="llama-stack-event")
    out = encode([OPEN, [ir.TextDelta(0, "<|eot_id|>")]], own)
    assert _texts(out) == ["<|eot_id|>"]


# --- the scanner and the call parser ------------------------------------------------------

SAMPLE = "a<|python_tag|>b<|eom_id|>c<d<|eot_id|"


def _scan(parts: list[str]) -> list[tuple[str, str]]:
    scanner = TokenScanner()
    pieces = [p for part in parts for p in scanner.feed(part)]
    tail = scanner.flush()
    pieces += [("text", tail)] if tail else []
    merged: list[tuple[str, str]] = []
    for kind, value in pieces:  # text pieces split by delta boundaries merge back
        if merged and kind == merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    return merged


def test_scanner_is_independent_of_delta_boundaries() -> None:
    expected = [
        ("text", "a"),
        ("token", "<|python_tag|>"),
        ("text", "b"),
        ("token", "<|eom_id|>"),
        ("text", "c<d<|eot_id|"),
    ]
    assert _scan([SAMPLE]) == expected
    for i, j in itertools.combinations(range(1, len(SAMPLE)), 2):
        assert _scan([SAMPLE[:i], SAMPLE[i:j], SAMPLE[j:]]) == expected, (i, j)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('brave_search.call(query="x y")', ("brave_search", {"query": "x y"})),
        ('wolfram_alpha.call(query="2+2")', ("wolfram_alpha", {"query": "2+2"})),
        (
            '[get_weather(city="Paris", celsius=True)]',
            ("get_weather", {"city": "Paris", "celsius": True}),
        ),
        ('{"type": "function", "name": "f", "parameters": {"a": 1}}', ("f", {"a": 1})),
        ('<function=f>{"a": 2}</function>', ("f", {"a": 2})),
        ("print(1)", ("code_interpreter", {"code": "print(1)"})),
        ("x.call(a={1, 2})", ("code_interpreter", {"code": "x.call(a={1, 2})"})),
        ("  ", None),
    ],
)
def test_parse_tool_call(raw: str, expected: Any) -> None:
    assert parse_tool_call(raw) == expected
