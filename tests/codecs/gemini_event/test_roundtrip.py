"""Every real Gemini capture through chatx, both ways, and every capture of the other
formats into Gemini.

* gemini → gemini gives back the same JSON values, record for record, with no note.
* gemini → B → gemini says the same (``tests.meaning.summarize``: text, reasoning,
  calls, finish, usage, errors) for B in chat, Responses, Anthropic and Llama Stack, but
  where B has no word for what the capture says; each such capture is listed with why,
  so a new difference fails, and a listed one that goes away fails too.
* A ``thoughtSignature`` comes back through Anthropic and Responses, on the same kind of
  part (a call, an answer, a part of its own).
* Every capture of every format converted into Gemini matches the google-genai SDK's
  ``GenerateContentResponse``, but for fields a Gemini source has that the SDK does
  not know (the same error on the source).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatx.notes import Notes
from chatx.pipeline import convert as pipeline_convert
from chatx.reading.framing import read_records
from chatx.validation import validate_records
from tests.captures import CAPTURES, capture_params, captures, skip_without_captures
from tests.meaning import summarize
from tests.streams import convert, records

GEMINI = "gemini-event"
CHAT, RESPONSES = "chat-chunk", "responses-event"
ANTHROPIC, LLAMA = "anthropic-event", "llama-stack-event"

# Finish words only Gemini has: another format reports them lost and writes its nearest.
_ONLY_GEMINI = {
    "firebase-sdk-test-data__googleai-streaming-failure-recitation-no-content.sse": "RECITATION",
    "js-genai__Chats_Tests_streamFunctionCallingArguments_enabled_Vertex_AI_should_stream_"
    "arguments_when_afc_is_disabled_explicitly-f940339d__i0.jsonl": "MALFORMED_FUNCTION_CALL",
}
_ERRORS = (
    "firebase-sdk-test-data__vertexai-streaming-failure-api-key.json",
    "firebase-sdk-test-data__vertexai-streaming-failure-unknown-model.json",
    "js-genai__Chats_Tests_sendMessage_Send_message_stream_with_error__i0.jsonl",
    "mirascope__authentication_error_stream-google_gemini_2_5_flash__i0.json",
    "mirascope__call_with_params-google-async_stream-a6f93234__i0.json",
    "mirascope__model_not_found_stream-google_gemini_2_5_flash__i0.json",
)

# What a round trip through B cannot keep, because B has no way to say it.
EXPECTED: dict[str, dict[str, tuple[set[str], str]]] = {
    CHAT: {
        name: ({"finish"}, f"{word}: chat has no such finish_reason")
        for name, word in _ONLY_GEMINI.items()
    },
    RESPONSES: {
        name: ({"finish"}, f"{word}: a Responses status has no such reason")
        for name, word in _ONLY_GEMINI.items()
    },
    ANTHROPIC: {
        **{
            name: ({"finish"}, f"{word}: Anthropic has no such stop_reason")
            for name, word in _ONLY_GEMINI.items()
        },
        **{
            name: (
                {"usage"},
                "no usage in the source: an Anthropic message always says one (zeros)",
            )
            for name in (
                "firebase-sdk-test-data__vertexai-streaming-success-citations.sse",
                "generative-ai-js__streaming-failure-prompt-blocked-safety.sse",
            )
        },
    },
}


def differences(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> set[str]:
    if len(before) != len(after):
        return {"streams"}
    out: set[str] = set()
    for a, b in zip(before, after, strict=True):
        out |= {key for key in ("usage", "errors") if a[key] != b[key]}
        if a["lanes"].keys() != b["lanes"].keys():
            out.add("lanes")
            continue
        for number, lane in a["lanes"].items():
            out |= {k for k, v in lane.items() if b["lanes"][number][k] != v}
    return out


def _llama_view(summary: list[dict[str, Any]]) -> list[Any]:
    """What Llama Stack events can say (as tests/codecs/llama_stack_event/test_roundtrip.py
    compares): no reasoning, a filtered finish as a stop, an error with no finish."""
    out = []
    for stream in summary:
        lanes = {}
        for number, lane in stream["lanes"].items():
            finish = {"content_filter": "stop", "error": None}.get(lane["finish"], lane["finish"])
            if finish in ("recitation", "malformed_function_call"):
                finish = "stop"  # reported lost on the way
            if lane["text"] or lane["calls"] or finish:
                lanes[number] = (lane["text"], lane["calls"], finish)
        out.append((lanes, stream["usage"], stream["errors"]))
    return out


def through(path: Path, other: str) -> tuple[Any, Any, bytes]:
    data = path.read_bytes()
    middle, _ = convert(data, other, GEMINI)
    back, _ = convert(middle, GEMINI, other)
    return summarize(data, GEMINI), summarize(back, GEMINI), middle


@pytest.mark.parametrize("path", capture_params(GEMINI))
def test_gemini_to_gemini_keeps_the_json_values(path: Path) -> None:
    data = path.read_bytes()
    out, notes = convert(data, GEMINI, GEMINI)
    before = [r.data for r in records(data) if r.error is None]
    after = [r.data for r in records(out) if r.error is None]
    assert after == before
    assert [n for n in notes.items if n.kind in ("lost", "repaired")] == []


@pytest.mark.parametrize("other", [CHAT, RESPONSES, ANTHROPIC])
@pytest.mark.parametrize("path", capture_params(GEMINI))
def test_gemini_through_another_format_says_the_same(path: Path, other: str) -> None:
    before, after, _ = through(path, other)
    found = differences(before, after)
    expected, reason = EXPECTED[other].get(path.name, (set(), ""))
    if expected and not found:
        pytest.fail(f"now the same: drop it from EXPECTED[{other!r}] ({reason})")
    assert found == expected, (before, after)


@pytest.mark.parametrize("path", capture_params(GEMINI))
def test_gemini_through_llama_stack_says_what_llama_stack_can(path: Path) -> None:
    if path.name in _ERRORS:
        # Llama Stack's error frame reads back as a chat error frame (sniffing); the
        # Llama Stack tests hold its own round trip of errors.
        data = path.read_bytes()
        middle, _ = convert(data, LLAMA, GEMINI)
        assert b'"error"' in middle
        return
    before, after, _ = through(path, LLAMA)
    assert _llama_view(after) == _llama_view(before)


def _signatures(data: bytes) -> list[tuple[str, str]]:
    out = []
    for record in records(data):
        chunk = record.data
        if not isinstance(chunk, dict):
            continue
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "thoughtSignature" in part:
                    kind = (
                        "call"
                        if "functionCall" in part
                        else "text"
                        if part.get("text")
                        else "alone"
                    )
                    out.append((part["thoughtSignature"], kind))
    return out


# Signatures on a built-in tool's parts (toolCall, toolResponse), which no other format
# holds: those parts are reported lost, and the signature comes back on the next part.
SIGNATURE_MOVES = {
    "pydantic-ai__test_code_execution_stream__i0.sse",
    "pydantic-ai__test_google_model_file_search_grounding_gemini_3-True__i3.sse",
    "pydantic-ai__test_native_output_with_builtin_tools_stream__i0.sse",
}


@skip_without_captures
@pytest.mark.parametrize("other", [ANTHROPIC, RESPONSES])
def test_thought_signatures_come_back(other: str) -> None:
    kept = signed = 0
    moved = set()
    for path in captures(GEMINI):
        data = path.read_bytes()
        source = _signatures(data)
        if not source:
            continue
        signed += 1
        middle, _ = convert(data, other, GEMINI)
        back = _signatures(convert(middle, GEMINI, other)[0])
        if back == source:
            kept += 1
        else:
            moved.add(path.name)
            assert {s for s, _ in back} <= {s for s, _ in source}
    assert moved == SIGNATURE_MOVES
    assert (kept, signed) == (39, 42)


def _sdk_errors(data: bytes) -> list[str]:
    container, recs = read_records(data)
    findings = validate_records(recs, GEMINI, container=container, schema=True)
    return [f.message for f in findings if f.rule == "GEM100"]


def _all_captures() -> list[Any]:
    if not CAPTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{CAPTURES} is absent"))]
    fmts = (CHAT, RESPONSES, ANTHROPIC, LLAMA, GEMINI)
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for fmt in fmts for p in captures(fmt)]


@pytest.mark.parametrize("path", _all_captures())
def test_converted_into_gemini_matches_the_sdk_types(path: Path) -> None:
    pytest.importorskip("google.genai", reason="the google-genai SDK (dev extra) is not installed")
    data = path.read_bytes()
    out = pipeline_convert(data, dst=GEMINI, notes=Notes())
    errors = _sdk_errors(out)
    if path.parent.name == GEMINI:
        # A Gemini source keeps its own fields; those google-genai does not know fail the
        # source as they fail the output.
        assert errors == _sdk_errors(data)
    else:
        assert errors == []
