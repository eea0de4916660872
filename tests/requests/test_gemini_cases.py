"""Gemini request bodies to the other APIs and back (issue 28): calls without ids get ids
from their place and results pair by name and order, thoughtSignature travels as the
signature of the thinking before it, generationConfig's settings and thinkingConfig find
their names, safety settings are said lost, and a body that is no request is an
InputError naming its place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatx import codecs
from chatx.errors import InputError
from chatx.request import Mapped, Reasoning, Request, ToolCall, ToolResult
from tests.requests.bodies import fixture

CHAT, RESPONSES, ANTHROPIC, GEMINI = (
    "chat-chunk",
    "responses-event",
    "anthropic-event",
    "gemini-event",
)


def read(body: Any, source: str = GEMINI) -> Request:
    mapping = codecs.get(source).requests
    assert mapping is not None
    request: Request = mapping.read(body).body
    return request


def translate(body: Any, source: str, target: str) -> Mapped:
    write = codecs.get(target).requests
    assert write is not None
    return write.write(read(body, source))


def test_calls_without_ids_pair_with_results_by_name_and_order() -> None:
    request = read(fixture("gemini__rest_thinking_calls.json"))
    calls = [t for t in request.turns if isinstance(t, ToolCall)]
    results = [t for t in request.turns if isinstance(t, ToolResult)]
    assert [c.call_id for c in calls] == ["call_1_1", "call_1_2"]  # content 1, parts 1 and 2
    assert [r.call_id for r in results] == ["call_1_1", "call_1_2"]
    assert [json.loads(c.arguments) for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert results[0].parts[0].text == "sunny, 25C"
    assert json.loads(results[1].parts[0].text or "") == {"temperature": 19, "sky": "cloudy"}
    # the same body read twice gives the same ids: never random
    assert [c.call_id for c in calls] == [
        t.call_id
        for t in read(fixture("gemini__rest_thinking_calls.json")).turns
        if isinstance(t, ToolCall)
    ]


def test_given_ids_are_kept_and_an_error_response_is_an_error() -> None:
    request = read(fixture("gemini__rest_call_ids_json.json"))
    call = next(t for t in request.turns if isinstance(t, ToolCall))
    result = next(t for t in request.turns if isinstance(t, ToolResult))
    assert call.call_id == result.call_id == "96c1su3s"
    assert result.is_error is True
    up = translate(fixture("gemini__rest_call_ids_json.json"), GEMINI, ANTHROPIC).body
    blocks = [b for m in up["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {"type": "tool_result", "tool_use_id": "96c1su3s", "content": "the index is down",
            "is_error": True} in blocks  # fmt: skip


def test_gemini_over_chat() -> None:
    up = translate(fixture("gemini__rest_thinking_calls.json"), GEMINI, CHAT)
    body = up.body
    system = body["messages"][0]
    assert system["role"] == "system"
    assert [p["text"] for p in system["content"]] == ["You are a weather bot.", "Be brief."]
    assistant = next(m for m in body["messages"] if m.get("tool_calls"))
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1_1", "call_1_2"]
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == ["call_1_1", "call_1_2"]
    weather = body["tools"][0]["function"]
    assert weather["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": ["string", "null"], "enum": ["C", "F"]},
        },
        "required": ["city"],
    }
    assert body["tool_choice"]["allowed_tools"]["mode"] == "required"  # ANY with two names
    assert body["temperature"] == 0.7 and body["max_tokens"] == 1024
    assert body["presence_penalty"] == 0.5
    for said in ("safetySettings", "cachedContent", "generationConfig.responseModalities",
                 "top_k", "generationConfig.thinkingConfig.thinkingBudget"):  # fmt: skip
        assert said in up.lost, up.lost
    assert any(p.startswith("tools[2]") and "urlContext" in p for p in up.lost)
    assert any("executableCode" in p or "(other)" in p for p in up.lost)


def test_a_signature_on_a_call_signs_the_thinking_before_it() -> None:
    request = read(fixture("gemini__rest_thinking_calls.json"))
    thinking = [t for t in request.turns if isinstance(t, Reasoning)]
    assert (thinking[0].text, thinking[0].signature) == (
        "Two cities: two calls.",
        "CiQBcsjafE1xd2h0",
    )
    assert (thinking[1].text, thinking[1].signature) == ("", "CiQBcsjafE2lYXN0")
    up = translate(fixture("gemini__rest_thinking_calls.json"), GEMINI, ANTHROPIC).body
    first = up["messages"][1]["content"]
    assert first[0] == {
        "type": "thinking",
        "thinking": "Two cities: two calls.",
        "signature": "CiQBcsjafE1xd2h0",
    }
    assert [b["type"] for b in first] == ["thinking", "tool_use", "tool_use"]
    # and back: the signature rides the call again, as Gemini 3 requires
    back = translate(up, ANTHROPIC, GEMINI).body
    model = back["contents"][1]["parts"]
    assert model[0] == {"text": "Two cities: two calls.", "thought": True}
    assert model[1]["thoughtSignature"] == "CiQBcsjafE1xd2h0" and "functionCall" in model[1]
    assert "thoughtSignature" not in model[2]


def test_settings_from_chat() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}},
                {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": "two"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
                  {"type": "function", "function": {"name": "g"}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "n": 2, "seed": 3, "stop": ["x"], "max_completion_tokens": 99, "top_p": 0.5,
        "reasoning_effort": "low", "user": "u1",
        "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}},
    }  # fmt: skip
    up = translate(body, CHAT, GEMINI)
    sent = up.body
    assert "model" not in sent and "stream" not in sent  # the path says them
    assert sent["systemInstruction"] == {"parts": [{"text": "Be terse."}]}
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    # the two results in one content, as Gemini requires for parallel calls, named
    assert sent["contents"][2]["parts"] == [
        {"functionResponse": {"name": "f", "id": "c1", "response": {"output": "one"}}},
        {"functionResponse": {"name": "g", "id": "c2", "response": {"output": "two"}}},
    ]
    assert sent["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}
    }
    assert sent["generationConfig"] == {
        "topP": 0.5, "maxOutputTokens": 99, "stopSequences": ["x"], "candidateCount": 2,
        "seed": 3, "responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object"}, "thinkingConfig": {"thinkingBudget": 2048},
    }  # fmt: skip
    assert "user (u1)" in up.lost


def test_safety_settings_are_said_lost_elsewhere() -> None:
    for target in (CHAT, RESPONSES, ANTHROPIC, "llama-stack-event"):
        up = translate(fixture("gemini__sdk_builtins_safety.json"), GEMINI, target)
        assert "safetySettings" in up.lost, (target, up.lost)


def test_web_search_is_google_search() -> None:
    up = translate(fixture("gemini__rest_call_ids_json.json"), GEMINI, RESPONSES).body
    assert {"type": "web_search"} in up["tools"]
    back = translate(up, RESPONSES, GEMINI).body
    assert {"googleSearch": {}} in back["tools"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ([], "the request: expected a Gemini generateContent request object"),
        ({"contents": {}}, "contents: expected an array of contents"),
        ({"contents": [{"parts": "hi"}]}, "contents[0].parts: expected an array of parts"),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            "contents[0].parts[0].functionCall.name: expected the function's name",
        ),  # fmt: skip
        (
            {"contents": [], "tools": [{"functionDeclarations": [{}]}]},
            "tools[0].functionDeclarations[0].name: expected the function's name",
        ),  # fmt: skip
    ],
)
def test_a_body_that_is_no_request(body: Any, said: str) -> None:
    with pytest.raises(InputError) as caught:
        read(body)
    assert said in str(caught.value)
