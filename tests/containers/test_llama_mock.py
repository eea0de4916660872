"""Llama Stack's early recordable mock files (2025): one JSON object, each key a call's
arguments (JSON, or a Python repr in the first weeks), each value what the call gave,
``{chunks, type: generator}`` or ``{type: value, value}``, wrapped as the recorder wrote
objects (``__pydantic__``, ``__enum__``, ``__datetime__``). Written here in that shape,
never copied: each key is one exchange, through every command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.containers.common import chatx, same_meaning

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
MODULE = "llama_stack.apis.inference.inference"


def _enum(name: str, value: str) -> dict[str, Any]:
    return {"__enum__": name, "__module__": MODULE, "value": value}


def _model(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"__module__": MODULE, "__pydantic__": name, "data": data}


def _chunk(kind: str, delta: dict[str, Any], stop: str | None = None) -> dict[str, Any]:
    """A chunk as the recorder kept it, and as Llama Stack streams it."""
    event = {"delta": delta, "event_type": _enum("ChatCompletionResponseEventType", kind),
             "logprobs": None, "stop_reason": stop and _enum("StopReason", stop)}  # fmt: skip
    return _model("ChatCompletionResponseStreamChunk", {"event": event, "metrics": None})


def _plain(chunk: dict[str, Any]) -> dict[str, Any]:
    """The chunk as Llama Stack streams it: each enum its value."""
    event = dict(chunk["data"]["event"])
    event["event_type"] = event["event_type"]["value"]
    event["stop_reason"] = event["stop_reason"] and event["stop_reason"]["value"]
    if "parse_status" in event["delta"]:
        event["delta"] = {**event["delta"], "parse_status": event["delta"]["parse_status"]["value"]}
    return {"event": event, "metrics": None}


TEXT = [
    _chunk("start", {"text": "", "type": "text"}),
    _chunk("progress", {"text": "Hello", "type": "text"}),
    _chunk("complete", {"text": "", "type": "text"}, "end_of_turn"),
]
CALL = [
    _chunk("start", {"text": "", "type": "text"}),
    _chunk("progress", {"type": "tool_call", "parse_status": _enum("ToolCallParseStatus",
           "succeeded"), "tool_call": {"call_id": "c1", "tool_name": "get_weather",
                                       "arguments": {"city": "Paris"}}}, "end_of_turn"),
    _chunk("complete", {"text": "", "type": "text"}, "end_of_turn"),
]  # fmt: skip
MESSAGES = [_model("SystemMessage", {"content": "Be brief.", "role": "system"}),
            _model("UserMessage", {"content": "Hi", "context": None, "role": "user"})]  # fmt: skip
KWARGS = {"stream": True, "tool_config": _model("ToolConfig", {
    "tool_choice": _enum("ToolChoice", "auto"), "tool_prompt_format": None})}  # fmt: skip
# The later key: [model, messages]_{kwargs} as JSON; the first weeks' one: Python's repr.
JSON_KEY = json.dumps([MODEL, MESSAGES], sort_keys=True) + "_" + json.dumps(KWARGS)
REPR_KEY = f"('{MODEL}', [UserMessage(role='user', content='Weather?', context=None)])_[]"
TOOL_KEY = json.dumps([[], {"kwargs": {"code": "print(1)"}, "tool_name": "code_interpreter"}])


def recorded() -> dict[str, Any]:
    return {
        JSON_KEY: {"chunks": TEXT, "type": "generator"},
        REPR_KEY: {"chunks": CALL, "type": "generator"},
        TOOL_KEY: {"type": "value", "value": _model("ToolInvocationResult", {
            "content": "1", "error_code": None, "metadata": {"at": {
                "__datetime__": "2025-03-06T10:00:00", "__module__": "datetime",
                "__class__": "datetime"}}})},
    }  # fmt: skip


@pytest.fixture
def mock(tmp_path: Path) -> Path:
    path = tmp_path / "chat_completion.json"
    path.write_text(json.dumps(recorded(), indent=2) + "\n")
    return path


def test_ls_lists_each_call(mock: Path) -> None:
    done = chatx("ls", "--output", "json", str(mock))
    assert done.code == 0, done.err
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["address"], r["kind"], r["format"], r["records"], r["model"]) for r in rows] == [
        (f"{mock}#0", "stream", "llama-stack-event", 3, MODEL),
        (f"{mock}#1", "stream", "llama-stack-event", 3, MODEL),
        (f"{mock}#2", "json", None, None, None),
    ]


@pytest.mark.parametrize(("index", "chunks"), [(0, TEXT), (1, CALL)])
def test_each_stream_means_its_chunks_unwrapped(
    mock: Path, tmp_path: Path, index: int, chunks: list[dict[str, Any]]
) -> None:
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps(_plain(c)) + "\n" for c in chunks))
    request = tmp_path / "request.json"
    request.write_text(json.dumps(_request(index)))
    same_meaning(f"{mock}#{index}", str(bare), str(request))


def _request(index: int) -> dict[str, Any]:
    if index == 1:
        return {"model": MODEL}
    return {"model": MODEL, "messages": [{"content": "Be brief.", "role": "system"},
            {"content": "Hi", "context": None, "role": "user"}], "stream": True,
            "tool_config": {"tool_choice": "auto", "tool_prompt_format": None}}  # fmt: skip


def test_validate_collect_and_a_walk(mock: Path, tmp_path: Path) -> None:
    checked = chatx("validate", str(mock))
    assert checked.code == 0, (checked.stdout, checked.err)
    assert checked.stdout.decode().count(": ok (llama-stack-event") == 2
    collected = json.loads(chatx("collect", "-q", "--as", "responses", f"{mock}#0").stdout)
    assert (collected["model"], collected["instructions"]) == (MODEL, "Be brief.")
    called = json.loads(chatx("collect", "-q", "--as", "chat", f"{mock}#1").stdout)
    call = called["choices"][0]["message"]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("get_weather", {"city": "Paris"})
    out = tmp_path / "out"
    done = chatx("convert", str(mock.parent), "--to", "chat-chunk", "--out-dir", str(out), "-q")
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == [
        "chat_completion.0.chat-chunk.sse",
        "chat_completion.1.chat-chunk.sse",
    ]


def test_serve_answers_the_recorded_call(mock: Path) -> None:
    pytest.importorskip("httpx2")
    from tests.live.support import post, serving

    with serving([str(mock)]) as (running, _):
        answer = post(f"{running.url}/v1/inference/chat-completion",
                      {"model_id": MODEL, "messages": [], "stream": True})  # fmt: skip
    assert answer.status_code == 200
    assert b"Hello" in answer.content


def test_a_file_of_values_only_says_none_streaming(tmp_path: Path) -> None:
    path = tmp_path / "invoke_tool.json"
    path.write_text(json.dumps({TOOL_KEY: recorded()[TOOL_KEY]}))
    done = chatx("convert", str(path), "--to", "chat")
    assert done.code == 2
    assert "1 interaction, none streaming" in done.err
