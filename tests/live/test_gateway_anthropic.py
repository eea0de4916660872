"""Anthropic's side of the gateway with real clients: the anthropic SDK's
``messages.stream`` with tools and thinking over a chat upstream, and the openai SDK's
chat stream over an Anthropic upstream, each upstream started by the test on a free
loopback port and keeping what it receives (see test_gateway_clients.py)."""

from __future__ import annotations

import anthropic
import openai
import orjson

from tests.live.gateway_support import (
    USAGE,
    Answer,
    Scripted,
    assert_valid,
    chat_call,
    chat_text,
    gateway,
)
from tests.live.support import FIXTURES

KEY = "sk-ant-client-SECRET-0002"
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def test_anthropic_messages_stream_with_tools_and_thinking_over_chat() -> None:
    upstream = Scripted(
        Answer(
            chat_call("call_t1", "get_weather", '{"city": ', '"Rome"}', reasoning="Rome, so ask.")
        ),
        Answer(chat_text("Rome is warm.")),
    )
    with (
        gateway(upstream, "chat") as (proxy, said),
        anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0) as client,
    ):
        asked = [{"role": "user", "content": "Weather in Rome?"}]
        with client.messages.stream(
            model="claude-test-model",
            max_tokens=2048,
            system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            thinking={"type": "enabled", "budget_tokens": 1024},
            tools=[WEATHER],
            messages=asked,
        ) as stream:
            for _ in stream:
                pass
            first = stream.get_final_message()
        kinds = [block.type for block in first.content]
        assert kinds == ["thinking", "tool_use"]
        assert first.content[0].thinking == "Rome, so ask."
        use = first.content[1]
        assert (use.name, use.input, use.id) == ("get_weather", {"city": "Rome"}, "call_t1")
        assert first.stop_reason == "tool_use"
        assert first.usage.input_tokens == USAGE["prompt_tokens"]
        history = [
            *asked,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use.id, "content": "warm, 28 C"}
                ],
            },
        ]
        with client.messages.stream(
            model="claude-test-model",
            max_tokens=2048,
            thinking={"type": "enabled", "budget_tokens": 1024},
            tools=[WEATHER],
            messages=history,
        ) as stream:
            second = stream.get_final_message()
    assert second.content[-1].type == "text" and second.content[-1].text == "Rome is warm."
    for got in upstream.got:
        assert got.path == "/v1/chat/completions"
        assert_valid("chat", got.body)
        assert got.headers[b"authorization"] == f"Bearer {KEY}".encode()
        assert b"x-api-key" not in got.headers
    opening = upstream.got[0].body["messages"][0]
    assert opening["role"] == "system" and "Be brief." in str(opening["content"])
    assert upstream.got[0].body.get("reasoning_effort") is not None
    messages = upstream.got[1].body["messages"]
    assert messages[-2]["tool_calls"][0]["id"] == "call_t1"
    assert messages[-2].get("reasoning_content") == "Rome, so ask."
    assert messages[-1] == {"role": "tool", "tool_call_id": "call_t1", "content": "warm, 28 C"}
    # what chat has no place for is said: the system block's cache_control, going up
    assert "POST /v1/messages as chat: lost: instructions[0].cache_control" in said


def test_openai_chat_stream_over_an_anthropic_upstream() -> None:
    answer = (FIXTURES / "anthropic-event/text.sse").read_bytes()
    upstream = Scripted(Answer([answer]))
    with (
        gateway(upstream, "anthropic") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as client,
        client.chat.completions.stream(
            model="claude-test-model",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hi"},
            ],
            max_tokens=300,
            stream_options={"include_usage": True},
        ) as stream,
    ):
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (asked,) = upstream.got
    assert asked.path == "/v1/messages"
    assert_valid("anthropic", asked.body)
    assert asked.headers[b"x-api-key"] == KEY.encode()
    assert b"authorization" not in asked.headers
    assert asked.headers[b"anthropic-version"]
    assert "Be brief." in str(asked.body["system"])
    assert final.choices[0].message.content == _anthropic_text(answer)
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None and final.usage.prompt_tokens > 0


def test_an_upstream_error_reaches_an_anthropic_client_in_its_shape() -> None:
    said = {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}
    error = Answer([orjson.dumps(said)], status=429, content_type=b"application/json")
    with (
        gateway(Scripted(error), "chat") as (proxy, _),
        anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0) as client,
    ):
        try:
            client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        except anthropic.RateLimitError as exc:
            caught = exc
    assert caught.status_code == 429
    assert caught.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }


def _anthropic_text(data: bytes) -> str:
    text = ""
    for line in data.splitlines():
        if line.startswith(b"data: "):
            event = orjson.loads(line[6:])
            delta = event.get("delta", {})
            if event.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                text += delta["text"]
    return text


def test_strict_refuses_an_anthropic_client_in_its_shape() -> None:
    upstream = Scripted(Answer(chat_text("never")))
    with (
        gateway(upstream, "chat", strict=True) as (proxy, _),
        anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0) as client,
    ):
        try:
            client.messages.create(
                model="claude-test-model",
                max_tokens=10,
                system=[{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": "hi"}],
            )
        except anthropic.BadRequestError as exc:
            caught = exc
    assert caught.status_code == 400
    error = caught.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    assert "instructions[0].cache_control" in error["message"]
    assert upstream.got == []
