"""Parallel calls from Llama Stack's OpenAI-compat layer: every ``succeeded`` carries
``stop_reason: "end_of_message"`` and the next call's records come after it. The turn
ends once the calls do: the ``Finish`` follows every call, in chat and Responses output,
and a Llama Stack -> Llama Stack conversion still writes each record's stop reason."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from chatx import ir
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.codecs.llama_stack_event.support import (
    OWN,
    decode,
    encode,
    fixture,
    flat,
    read_jsonl,
    records,
)
from tests.meaning import parse_arguments
from tests.streams import CHAT, RESPONSES, convert

LLAMA = "llama-stack-event"
PARALLEL = fixture("tool-calls-openai-compat-parallel")
CALLS = [
    ("get_weather", "call_par_0", parse_arguments('{"city": "Oslo"}')),
    ("get_time", "call_par_1", parse_arguments('{"tz": "Europe/Oslo"}')),
]


def _errors(data: bytes) -> list[str]:
    findings = validate_records(read_records(data)[1])
    return [f"{f.rule} {f.message}" for f in findings if f.severity == "E"]


def _ev(kind: str, delta: dict[str, Any], stop: str | None = None) -> dict[str, Any]:
    event = {"event_type": kind, "delta": delta, "logprobs": None, "stop_reason": stop}
    return {"event": event, "metrics": None}


def _tool(status: str, value: Any, stop: str | None = None) -> dict[str, Any]:
    return _ev("progress", {"type": "tool_call", "tool_call": value, "parse_status": status}, stop)


def _ok(cid: str, name: str, arguments: str) -> dict[str, Any]:
    call = {"call_id": cid, "tool_name": name, "arguments": orjson.loads(arguments)}
    return _tool("succeeded", {**call, "arguments_json": arguments}, "end_of_message")


START = _ev("start", {"type": "text", "text": ""})
COMPLETE = _ev("complete", {"type": "text", "text": ""}, "end_of_message")


@pytest.mark.parametrize("target", [CHAT, RESPONSES])
def test_parallel_calls_convert_to_streams_that_validate(target: str) -> None:
    out, _ = convert(PARALLEL.read_bytes(), target, LLAMA)
    assert _errors(out) == []


def test_the_finish_follows_every_call() -> None:
    events = flat(decode(read_jsonl(PARALLEL)))
    kinds = [(type(e).__name__, getattr(e, "call", None)) for e in events]
    finish = kinds.index(("Finish", None))
    ends = [i for i, k in enumerate(kinds) if k[0] == "ItemEnd" and k[1] is not None]
    assert len(ends) == 2 and max(ends) < finish
    (event,) = [e for e in events if type(e) is ir.Finish]
    assert (event.reason, event.raw) == ("tool_calls", "end_of_message")


@pytest.mark.parametrize("target", [CHAT, RESPONSES])
def test_the_openai_sdk_accumulates_both_calls(target: str) -> None:
    pytest.importorskip("openai", reason="the openai SDK's accumulators are the oracle")
    from tests.test_oracle import sdk_rebuild_chat, sdk_rebuild_responses

    rebuild = sdk_rebuild_chat if target == CHAT else sdk_rebuild_responses
    out, _ = convert(PARALLEL.read_bytes(), target, LLAMA)
    (stream,) = rebuild(out)
    assert stream["calls"] == CALLS
    assert stream["usage"] == (52, 24, 76)


SHAPES = {
    # No complete event: the Finish comes at the end of input, after the calls.
    "truncated": [
        START,
        _tool("in_progress", "f("),
        _tool("in_progress", '{"a": 1}'),
        _tool("in_progress", ")"),
        _ok("c0", "f", '{"a": 1}'),
        _tool("in_progress", "g("),
        _tool("in_progress", '{"b": 2}'),
        _tool("in_progress", ")"),
        _ok("c1", "g", '{"b": 2}'),
    ],
    # Text after the calls: the Finish comes before it, after the released fragment.
    "text_after": [
        START,
        _tool("started", ""),
        _tool("in_progress", '{"a": 1}'),
        _ok("c0", "f", '{"a": 1}'),
        _tool("in_progress", "stray"),
        _ev("progress", {"type": "text", "text": "done"}),
        COMPLETE,
    ],
    # A call Llama Stack could not parse, then one it could: both stop reasons stay.
    "failed_then_succeeded": [
        START,
        _tool("in_progress", "f(x"),
        _tool("failed", "f(x", "end_of_message"),
        _tool("in_progress", "g("),
        _tool("in_progress", '{"b": 2}'),
        _tool("in_progress", ")"),
        _ok("c1", "g", '{"b": 2}'),
        COMPLETE,
    ],
    # end_of_turn on a failed call, then a call that parsed: the turn ended in a call.
    "failed_end_of_turn": [
        START,
        _tool("in_progress", "f(x"),
        _tool("failed", "f(x", "end_of_turn"),
        _tool("in_progress", "g("),
        _tool("in_progress", '{"b": 2}'),
        _tool("in_progress", ")"),
        _ok("c1", "g", '{"b": 2}'),
        _ev("complete", {"type": "text", "text": ""}, "end_of_turn"),
    ],
    # An error frame after a call: the turn's Finish comes before the error.
    "error_after": [
        START,
        _tool("started", ""),
        _tool("in_progress", '{"a": 1}'),
        _ok("c0", "f", '{"a": 1}'),
        {"error": {"message": "boom"}},
    ],
}


def test_the_finish_comes_before_an_error_frame() -> None:
    kinds = [type(e).__name__ for e in flat(decode(records(*SHAPES["error_after"])))]
    assert kinds.index("Finish") < kinds.index("Error")


def test_a_call_after_a_failed_one_makes_the_finish_tool_calls() -> None:
    events = flat(decode(records(*SHAPES["failed_end_of_turn"])))
    finishes = [(e.reason, e.raw) for e in events if type(e) is ir.Finish]
    assert finishes == [("tool_calls", "end_of_turn")]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_deferred_stop_reasons_come_back_exactly(name: str) -> None:
    payloads = SHAPES[name]
    assert encode(decode(records(*payloads)), OWN) == payloads


def test_parallel_fixture_comes_back_exactly() -> None:
    recs = read_jsonl(PARALLEL)
    assert encode(decode(recs), OWN) == [rec.data for rec in recs]
