"""The stop sequence in chat output: another format's ``Finish.stop_sequence`` (Anthropic's
stop_reason ``stop_sequence`` with its string) is the finishing chunk's
``choices[].stop_reason``, where vLLM streams the stop string beside finish_reason
``stop`` (its ``ChatCompletionResponseStreamChoice.stop_reason: int | str | None``), and
the ``stop_reason`` of the choice ``collect`` builds (vLLM's
``ChatCompletionResponseChoice`` has it too). So nothing is said lost, anthropic → chat →
anthropic keeps the stop sequence, and chat → chat gives vLLM's own values back."""

from __future__ import annotations

from typing import Any

import pytest

from chatx.collect import collect
from chatx.collect.streams import streams_of
from chatx.notes import Notes
from chatx.reading.framing import load
from chatx.validation import validate_records
from tests.builders.anthropic_event import (
    ANTHROPIC,
    MESSAGE_STOP,
    message_delta,
    message_start,
    sse_events,
    text,
)
from tests.builders.chat_chunk import chunk, usage_chunk
from tests.captures import CAPTURES, captures
from tests.streams import CHAT, convert, payloads, sse


def stopped(sequence: str = "STOP") -> bytes:
    """An Anthropic message the stop sequence ``sequence`` ended."""
    events = [
        message_start("msg_stopseq1"),
        *text(0, "Count: 1, 2, ", "3, "),
        message_delta("stop_sequence", stop_sequence=sequence),
        MESSAGE_STOP,
    ]
    return sse_events(events)


def finishing(data: bytes) -> list[dict[str, Any]]:
    """The choices of the chunks that carry a finish_reason."""
    return [
        choice
        for payload in payloads(data)
        for choice in payload.get("choices") or []
        if choice.get("finish_reason")
    ]


def collected(data: bytes, target: str, notes: Notes) -> dict[str, Any]:
    side = load(data, "input")
    side.notes = notes
    (stream,) = streams_of(side)
    return collect(stream, target, source=side.format, notes=notes)


def test_the_stop_sequence_is_the_finishing_chunks_stop_reason() -> None:
    out, notes = convert(stopped(), CHAT, ANTHROPIC)
    assert finishing(out) == [
        {"index": 0, "delta": {}, "finish_reason": "stop", "stop_reason": "STOP"}
    ]
    assert "finish.stop_sequence" not in notes.lost_fields
    assert [n for n in notes.summary() if "stop" in n.message] == []
    assert validate_records(out, CHAT) == []


def test_anthropic_to_chat_to_anthropic_keeps_the_stop_sequence() -> None:
    chat, _ = convert(stopped("\n\nHuman:"), CHAT, ANTHROPIC)
    back, notes = convert(chat, ANTHROPIC, CHAT)
    (delta,) = [e for e in payloads(back) if e["type"] == "message_delta"]
    assert delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "\n\nHuman:"}
    assert "stop_reason" not in notes.lost_fields


def vllm(stop: Any) -> list[dict[str, Any]]:
    last = chunk({"content": ""}, "stop")
    last["choices"][0]["stop_reason"] = stop
    return [chunk({"role": "assistant", "content": "Ready"}), last, usage_chunk()]


@pytest.mark.parametrize("stop", ["END", 128009, None])
def test_chat_to_chat_writes_vllms_stop_reason_once_as_it_came(stop: Any) -> None:
    data = sse(vllm(stop))
    out, notes = convert(data, CHAT, CHAT)
    assert payloads(out) == payloads(data)
    assert notes.summary() == []


def test_collect_as_chat_puts_the_stop_sequence_on_the_choice() -> None:
    notes = Notes()
    completion = collected(stopped(), "chat", notes)
    (choice,) = completion["choices"]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", "STOP")
    assert [n.message for n in notes.summary() if "stop sequence" in n.message] == []


def test_collect_of_a_vllm_stream_keeps_its_stop_string() -> None:
    notes = Notes()
    (choice,) = collected(sse(vllm("END")), "chat", notes)["choices"]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", "END")
    assert notes.summary() == []
    # A stop token's id says no stop sequence: no stop_reason on the choice.
    (choice,) = collected(sse(vllm(128009)), "chat", Notes())["choices"]
    assert "stop_reason" not in choice


def _stop_sequences() -> list[Any]:
    return [
        p
        for p in captures(ANTHROPIC)
        if b'"stop_reason":"stop_sequence"' in p.read_bytes().replace(b" ", b"")
    ]


@pytest.mark.skipif(not CAPTURES.is_dir(), reason=f"no real captures: {CAPTURES} is absent")
def test_every_capture_stopped_by_a_sequence_keeps_it_through_chat() -> None:
    paths = _stop_sequences()
    assert len(paths) >= 3  # when written: simonw-llm-anthropic's two, mirascope's one
    for path in paths:
        source = [e for e in payloads(path.read_bytes()) if e.get("type") == "message_delta"]
        chat, notes = convert(path.read_bytes(), CHAT, ANTHROPIC)
        assert "finish.stop_sequence" not in notes.lost_fields, path.name
        assert validate_records(chat, CHAT) == [], path.name
        (choice,) = finishing(chat)
        assert choice["stop_reason"] == source[-1]["delta"]["stop_sequence"], path.name
        back, _ = convert(chat, ANTHROPIC, CHAT)
        (delta,) = [e for e in payloads(back) if e["type"] == "message_delta"]
        assert delta["delta"] == {
            "stop_reason": "stop_sequence",
            "stop_sequence": source[-1]["delta"]["stop_sequence"],
        }, path.name
