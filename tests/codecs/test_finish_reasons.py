"""Finish reasons are carried, never guessed: a word a target has no place for is reported
``lost`` (``--strict`` exits 1), chat → chat keeps it, and an exact mapping says nothing."""

from __future__ import annotations

from typing import Any

import pytest

from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.builders.chat_chunk import chat_text
from tests.builders.responses_event import ResponsesBuilder
from tests.inprocess import run
from tests.streams import CHAT, RESPONSES, convert, sse

LLAMA = "llama-stack-event"
# Words providers send that no format but chat has: vLLM's abort, Gemini's recitation.
UNKNOWN = ("abort", "recitation", "other")
# Words that say exactly what chat's "stop" says (TGI, Llama Stack's OpenAI-compat layer).
SAME_AS_STOP = ("eos", "eos_token", "stop_sequence")


def _stream(reason: str) -> bytes:
    return sse(chat_text("Hi", finish=reason, usage=False))


def _said(notes: Any, kind: str) -> list[str]:
    return [n.message for n in notes.summary() if n.kind == kind]


def _payloads(data: bytes) -> list[Any]:
    return [r.data for r in read_records(data)[1] if not r.done]


def _errors(data: bytes) -> list[str]:
    return [f.rule for f in validate_records(read_records(data)[1]) if f.severity == "E"]


def _terminal(data: bytes) -> dict[str, Any]:
    (last,) = [p for p in _payloads(data) if p.get("type", "").startswith("response.")][-1:]
    return last


def _stop_reason(data: bytes) -> str:
    return _payloads(data)[-1]["event"]["stop_reason"]


@pytest.mark.parametrize("reason", [*UNKNOWN, "error", *SAME_AS_STOP])
def test_chat_to_chat_keeps_the_finish_reason(reason):
    data = _stream(reason)
    out, notes = convert(data, CHAT, CHAT)
    assert _payloads(out) == _payloads(data)
    assert notes.summary() == []


@pytest.mark.parametrize("reason", UNKNOWN)
def test_unknown_reason_to_responses_is_incomplete_and_lost(reason):
    out, notes = convert(_stream(reason), RESPONSES, CHAT)
    terminal = _terminal(out)
    assert terminal["type"] == "response.incomplete"
    assert terminal["response"]["status"] == "incomplete"
    assert terminal["response"]["incomplete_details"] == {"reason": reason}
    assert [m for m in _said(notes, "lost") if repr(reason) in m] != []
    assert _errors(out) == []


@pytest.mark.parametrize("reason", UNKNOWN)
def test_unknown_reason_to_llama_stack_is_lost(reason):
    out, notes = convert(_stream(reason), LLAMA, CHAT)
    assert _stop_reason(out) == "end_of_turn"
    assert _said(notes, "lost") == [
        f"finish reason {reason!r} has no Llama Stack stop reason: written as end_of_turn"
    ]
    assert _errors(out) == []


@pytest.mark.parametrize("target", [RESPONSES, LLAMA])
def test_strict_stops_at_an_unknown_reason(target):
    result = run(["convert", "--to", target, "--strict"], _stream("abort"))
    assert result.code == 1, result.err
    assert "'abort'" in result.err


@pytest.mark.parametrize("reason", SAME_AS_STOP)
def test_exact_synonyms_of_stop_are_not_reported(reason):
    out, notes = convert(_stream(reason), LLAMA, CHAT)
    assert _stop_reason(out) == "end_of_turn"
    assert notes.summary() == []
    out, notes = convert(_stream(reason), RESPONSES, CHAT)
    assert _terminal(out)["type"] == "response.completed"
    assert notes.summary() == []
    assert run(["convert", "--to", LLAMA, "--strict"], _stream(reason)).code == 0


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("stop", "end_of_turn"), ("length", "out_of_tokens"), ("function_call", "end_of_message")],
)
def test_exact_pairs_to_llama_stack_are_not_reported(reason, stop):
    out, notes = convert(_stream(reason), LLAMA, CHAT)
    assert _stop_reason(out) == stop
    assert _said(notes, "lost") == []


def test_chat_error_reason_to_responses_fails():
    """chat's "error" (OpenRouter) is Responses' failed: said exactly, nothing lost."""
    out, notes = convert(_stream("error"), RESPONSES, CHAT)
    assert _terminal(out)["type"] == "response.failed"
    assert _said(notes, "lost") == []


def test_failed_response_without_error_event_to_chat_is_lost():
    """A Responses stream that failed without saying why: chat has no finish reason for
    it, so "stop" is written and the failure reported."""
    data = ResponsesBuilder().message("par").end("failed").bytes()
    out, notes = convert(data, CHAT, RESPONSES)
    reasons = [c.get("finish_reason") for p in _payloads(out) for c in p.get("choices", ())]
    assert [r for r in reasons if r] == ["stop"]
    assert _said(notes, "lost") == [
        "finish reason 'error' (the generation failed): written as 'stop'"
    ]


@pytest.mark.parametrize("reason", UNKNOWN)
def test_unknown_reason_read_from_responses_is_kept_or_reported(reason):
    # Responses carries the word in incomplete_details.reason. Into chat it becomes the
    # nearest chat word, length (the openai SDK takes no other), and the word is
    # reported lost; Responses -> Responses keeps it.
    responses, _ = convert(_stream(reason), RESPONSES, CHAT)
    back, notes = convert(responses, CHAT, RESPONSES)
    assert _payloads(back)[-1]["choices"][0]["finish_reason"] == "length"
    assert any("incomplete_details.reason" in m for m in _said(notes, "lost"))
    again, notes = convert(responses, RESPONSES, RESPONSES)
    assert again == responses
    assert notes.summary() == []
