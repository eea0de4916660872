"""Llama Stack's side of the gateway: the openai SDK's chat stream over a Llama Stack
upstream, and a Llama Stack client's inference request over a chat upstream, each
upstream started by the test on a free loopback port and keeping what it receives (see
test_gateway_clients.py). The Llama Stack client is a plain HTTP post: its SDK is not a
dependency, and its request is the body its inference API documents."""

from __future__ import annotations

import httpx2
import openai
import orjson

from tests.live.gateway_support import Answer, Scripted, assert_valid, chat_call, chat_text, gateway
from tests.live.support import FIXTURES, post

KEY = "sk-llama-client-SECRET-0003"
LLAMA_PATH = "/v1/inference/chat-completion"


def _llama_sse(path: str) -> bytes:
    """A Llama Stack JSON-lines fixture as the SSE its server streams."""
    lines = (FIXTURES / "llama-stack-event" / path).read_bytes().splitlines()
    return b"".join(b"data: " + line + b"\n\n" for line in lines if line.strip())


def _llama_events(data: bytes) -> list[dict]:
    return [
        orjson.loads(line[6:])["event"] for line in data.splitlines() if line.startswith(b"data: ")
    ]


def test_openai_chat_stream_over_a_llama_stack_upstream() -> None:
    answer = _llama_sse("text.jsonl")
    upstream = Scripted(Answer([answer]))
    with (
        gateway(upstream, "llama-stack") as (proxy, _),
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0) as client,
        client.chat.completions.stream(
            model="meta-llama/Llama-3.3-70B-Instruct",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is the capital of France?"},
            ],
            temperature=0.2,
        ) as stream,
    ):
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (asked,) = upstream.got
    assert asked.path == LLAMA_PATH
    assert asked.body["model_id"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert "model" not in asked.body
    assert asked.body["stream"] is True
    roles = [message["role"] for message in asked.body["messages"]]
    assert roles == ["system", "user"]
    assert asked.body["messages"][1]["content"] == "What is the capital of France?"
    assert asked.headers[b"authorization"] == b"Bearer " + KEY.encode()
    text = "".join(e["delta"].get("text", "") for e in _llama_events(answer))
    assert final.choices[0].message.content == text == "Paris is the capital of France."
    assert final.choices[0].finish_reason == "stop"


def _llama_request(**more: object) -> dict:
    return {
        "model_id": "upstream-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
        "stream": True,
        **more,
    }


def _post(url: str, body: dict) -> httpx2.Response:
    return post(f"{url}{LLAMA_PATH}", body, authorization=f"Bearer {KEY}")


def test_a_llama_stack_client_over_a_chat_upstream_gets_its_own_stream() -> None:
    upstream = Scripted(Answer(chat_text("Hello", " there.")))
    with gateway(upstream, "chat") as (proxy, _):
        answer = _post(proxy.url, _llama_request())
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    (asked,) = upstream.got
    assert asked.path == "/v1/chat/completions"
    assert_valid("chat", asked.body)
    assert asked.body["model"] == "upstream-model"
    assert asked.body["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in asked.body["messages"]] == ["system", "user"]
    events = _llama_events(answer.content)
    assert events[0]["event_type"] == "start"
    assert events[-1]["event_type"] == "complete"
    assert events[-1]["stop_reason"] == "end_of_turn"
    assert "".join(e["delta"].get("text", "") for e in events) == "Hello there."


def test_a_llama_stack_clients_tool_call_over_a_chat_upstream() -> None:
    tool = {
        "tool_name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"city": {"param_type": "string", "required": True}},
    }
    upstream = Scripted(Answer(chat_call("call_w1", "get_weather", '{"city"', ': "Paris"}')))
    with gateway(upstream, "chat") as (proxy, _):
        answer = _post(proxy.url, _llama_request(tools=[tool]))
    assert answer.status_code == 200
    (asked,) = upstream.got
    assert_valid("chat", asked.body)
    (offered,) = asked.body["tools"]
    assert offered["type"] == "function"
    assert offered["function"]["name"] == "get_weather"
    events = _llama_events(answer.content)
    calls = [
        e["delta"]["tool_call"]
        for e in events
        if e["delta"].get("type") == "tool_call" and e["delta"].get("parse_status") == "succeeded"
    ]
    assert len(calls) == 1
    call = calls[0]
    assert call["tool_name"] == "get_weather"
    assert call["call_id"] == "call_w1"
    arguments = call["arguments"]
    assert (orjson.loads(arguments) if isinstance(arguments, str) else arguments) == {
        "city": "Paris"
    }
    assert events[-1]["stop_reason"] == "end_of_message"


def test_an_upstream_error_reaches_a_llama_stack_client_with_its_status() -> None:
    error = {"error": {"message": "slow down", "type": "rate_limit_error", "code": None}}
    upstream = Scripted(
        Answer(
            [orjson.dumps(error)],
            status=429,
            content_type=b"application/json",
            headers=[(b"retry-after", b"7")],
        )
    )
    with gateway(upstream, "chat") as (proxy, _):
        answer = _post(proxy.url, _llama_request())
    assert answer.status_code == 429
    assert answer.headers.get("retry-after") == "7"
    assert "slow down" in answer.text
    assert KEY not in answer.text
