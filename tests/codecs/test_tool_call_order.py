"""Interleaved tool-call fragments: a chat stream whose call 0 resumes after call 1 has
started. The openai SDK's accumulator joins each index's fragments whatever their order;
what chatx writes in a format that writes one call at a time (Responses items, Llama
Stack's started … succeeded) must give every call its whole arguments, and validate."""

from __future__ import annotations

from typing import Any

import pytest

from chatx.codecs.base import EncodeOptions
from chatx.codecs.call_order import whole_json
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.builders.chat_chunk import chunk, usage_chunk
from tests.paths import ROOT
from tests.streams import CHAT, RESPONSES, convert, sse

pytest.importorskip("openai", reason="the openai SDK's accumulators are the oracle")

from tests.test_oracle import sdk_rebuild_chat, sdk_rebuild_responses  # noqa: E402

LLAMA = "llama-stack-event"
FINISH = EncodeOptions(finish=True)  # the truncated sample gets an ending
FIXTURE = ROOT / "fixtures" / "chat-chunk" / "tool-call-interleaved.sse"


def _call(index: int, arguments: str, cid: str | None = None, name: str | None = None):
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if cid:
        entry.update(id=cid, type="function")
        entry["function"]["name"] = name
    return entry


def _stream(*steps: Any, finish: str | None = "tool_calls") -> bytes:
    """A chat stream: a role chunk, then one chunk per step (a tool_calls entry, or a
    str of content), the finish and usage."""
    out = [chunk({"role": "assistant", "content": None})]
    for step in steps:
        if isinstance(step, str):
            out.append(chunk({"content": step}))
        else:
            out.append(chunk({"tool_calls": [step]}))
    if finish is None:
        return sse(out, done=False)
    out += [chunk({}, finish), usage_chunk()]
    return sse(out)


A, B, C = ("call_a", "f"), ("call_b", "g"), ("call_c", "h")
SAMPLES = {
    # Both calls start with empty arguments, then their fragments alternate.
    "alternating": _stream(
        _call(0, "", *A),
        _call(1, "", *B),
        _call(0, '{"x": '),
        _call(1, '{"y": '),
        _call(0, "1}"),
        _call(1, "2}"),
    ),
    # Three calls, each resuming after the next one started.
    "three": _stream(
        _call(0, '{"a"', *A),
        _call(1, '{"b"', *B),
        _call(2, '{"c"', *C),
        _call(0, ": 1}"),
        _call(1, ": 2}"),
        _call(2, ": 3}"),
    ),
    # Call 1 finishes first; call 0 only when the turn ends.
    "inner_first": _stream(
        _call(0, '{"a": [1', *A),
        _call(1, '{"b": 2}', *B),
        _call(0, ", 2]}"),
    ),
    # Text after the calls: the text closes the call held open.
    "then_text": _stream(
        _call(0, '{"a": ', *A),
        _call(1, "{}", *B),
        _call(0, "1}"),
        "done",
        finish="stop",
    ),
    # Cut off: the held calls are still written, whole as far as they came.
    "truncated": _stream(
        _call(0, '{"a": ', *A),
        _call(1, '{"b": 2}', *B),
        _call(0, "1}"),
        finish=None,
    ),
}


def _sdk_calls(chat: bytes) -> list[tuple[Any, ...]]:
    (stream,) = sdk_rebuild_chat(chat)
    return stream["calls"]


def _errors(data: bytes) -> list[str]:
    findings = validate_records(read_records(data)[1])
    return [f"{f.rule} {f.message}" for f in findings if f.severity == "E"]


def _said(notes: Any, kind: str) -> list[str]:
    return [n.message for n in notes.summary() if n.kind == kind]


def _inputs() -> list[Any]:
    params = [pytest.param(FIXTURE.read_bytes(), id="fixture")]
    params += [pytest.param(data, id=name) for name, data in SAMPLES.items()]
    return params


@pytest.mark.parametrize("data", _inputs())
def test_responses_output_has_every_calls_arguments(data):
    out, notes = convert(data, RESPONSES, CHAT, options=FINISH)
    assert _errors(out) == []
    (stream,) = sdk_rebuild_responses(out)
    assert stream["calls"] == _sdk_calls(data)
    assert _said(notes, "lost") == []
    assert [w for w in _said(notes, "warning") if "tool call" in w] == []


@pytest.mark.parametrize("data", _inputs())
def test_llama_stack_output_has_every_calls_name_and_arguments(data):
    out, notes = convert(data, LLAMA, CHAT, options=FINISH)
    assert _errors(out) == []
    back, _ = convert(out, CHAT, LLAMA)
    assert _sdk_calls(back) == _sdk_calls(data)
    assert _said(notes, "lost") == []


def test_chat_to_chat_keeps_the_interleaving():
    data = FIXTURE.read_bytes()
    out, notes = convert(data, CHAT, CHAT)
    assert [r.data for r in read_records(out)[1]] == [r.data for r in read_records(data)[1]]
    assert notes.summary() == []


def test_the_fixture_interleaves_as_the_sdk_reads_it():
    """The oracle is not vacuous: the fixture's call 0 resumes after call 1 started,
    and the SDK still reads both calls whole."""
    indexes = [
        entry["index"]
        for r in read_records(FIXTURE.read_bytes())[1]
        if not r.done and r.data["choices"]
        for entry in r.data["choices"][0]["delta"].get("tool_calls", ())
    ]
    assert indexes == [0, 0, 1, 1, 0, 1, 0]
    assert _sdk_calls(FIXTURE.read_bytes()) == [
        ("get_weather", "call_a1", ("json", '{"city": "Paris"}')),
        ("get_time", "call_b2", ("json", '{"tz": "Europe/Paris"}')),
    ]


def test_calls_that_do_not_interleave_are_written_as_they_come():
    """A call whose arguments are not JSON is still written before the next one."""
    data = _stream(_call(0, "{not json", *A), _call(1, "{}", *B))
    out, _ = convert(data, RESPONSES, CHAT)
    added = [
        r.data["item"]["call_id"]
        for r in read_records(out)[1]
        if r.data.get("type") == "response.output_item.added"
    ]
    assert added == ["call_a", "call_b"]


@pytest.mark.parametrize(
    ("text", "whole"),
    [("", False), ("{", False), ('{"a": 1}', True), ("[1]", True), ("1", False), ("{}}", False)],
)
def test_whole_json(text, whole):
    assert whole_json(text) is whole
