"""Errors as a provider sends them: a capture that ends in an error, asked for whole,
answers the error's status with the body of the API called; ``--status`` answers in the
shape of the API called, with the headers its provider sends. Driven by the openai and
anthropic SDKs, which pick their exception's class by the status and read the body."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import openai
import orjson
import pytest

from tests.live.support import post, serving
from tests.paths import SHARED

CHAT_RATE_LIMITED = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},'
    b'"finish_reason":null}]}\n\n'
    b'data: {"error":{"message":"Rate limit reached for requests","type":"requests",'
    b'"code":"rate_limit_exceeded"}}\n\n'
)
ANTHROPIC_OVERLOADED = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude-x","content":[],"stop_reason":null,'
    b'"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
    b"event: error\n"
    b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
)
GROQ = SHARED / "captures/chat-chunk/pydantic-ai__groq-tool_use_failed_error_streaming__i0.sse"
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def captures(tmp_path: Path) -> str:
    (tmp_path / "limited.sse").write_bytes(CHAT_RATE_LIMITED)
    (tmp_path / "overloaded.sse").write_bytes(ANTHROPIC_OVERLOADED)
    return str(tmp_path)


@contextmanager
def openai_client(url: str, name: str) -> Iterator[openai.OpenAI]:
    # No retries: the error is the answer under test.
    headers = {"x-chatx-capture": name}
    with openai.OpenAI(
        base_url=f"{url}/v1", api_key="k", max_retries=0, default_headers=headers
    ) as client:
        yield client


@contextmanager
def anthropic_client(url: str, name: str | None = None) -> Iterator[anthropic.Anthropic]:
    headers = {"x-chatx-capture": name} if name else None
    with anthropic.Anthropic(
        base_url=url, api_key="k", max_retries=0, default_headers=headers
    ) as client:
        yield client


def test_chat_error_capture_not_streamed_is_the_error(captures: str) -> None:
    # Before: HTTP 200, a chat.completion with finish_reason null; the SDK said success.
    with (
        serving([captures]) as (running, _),
        openai_client(running.url, "limited") as client,
        pytest.raises(openai.RateLimitError) as raised,
    ):
        client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    error = raised.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "1"
    assert error.body == {
        "message": "Rate limit reached for requests",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


def test_chat_error_capture_streamed_is_still_the_stream(captures: str) -> None:
    with serving([captures]) as (running, _):
        answer = post(
            f"{running.url}/v1/chat/completions",
            {"model": "m", "messages": MESSAGES, "stream": True},
            "limited",
        )
    assert answer.status_code == 200
    assert answer.content == CHAT_RATE_LIMITED


def test_anthropic_error_capture_not_streamed_is_the_error(captures: str) -> None:
    # Before: HTTP 200, content [] and stop_reason null.
    with (
        serving([captures]) as (running, _),
        anthropic_client(running.url, "overloaded") as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        client.messages.create(model="claude-x", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    assert raised.value.status_code == 529
    assert raised.value.response.headers["x-should-retry"] == "true"
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_anthropic_error_capture_through_chat_is_openai_shaped(captures: str) -> None:
    with (
        serving([captures]) as (running, _),
        openai_client(running.url, "overloaded") as client,
        pytest.raises(openai.APIStatusError) as raised,
    ):
        client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert raised.value.status_code == 529
    assert raised.value.body == {
        "message": "Overloaded",
        "type": "server_error",
        "param": None,
        "code": None,
    }


def test_responses_error_capture_not_streamed_is_the_error(captures: str) -> None:
    with (
        serving([captures]) as (running, _),
        openai_client(running.url, "limited") as client,
        pytest.raises(openai.RateLimitError),
    ):
        client.responses.create(model="m", input="hi")


@pytest.mark.skipif(not GROQ.is_file(), reason="needs /work/shared/captures")
def test_recorded_status_code_is_answered() -> None:
    # Groq's error frame says status_code 400 and code tool_use_failed.
    with (
        serving([str(GROQ)]) as (running, _),
        openai_client(running.url, GROQ.name) as client,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "tool_use_failed"
    assert raised.value.body["type"] == "invalid_request_error"


def test_status_on_messages_is_anthropic_shaped(captures: str) -> None:
    # Before: {"error": {"message", "type": "server_error", ...}}, OpenAI's shape.
    with (
        serving([captures], status=529) as (running, _),
        anthropic_client(running.url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        client.messages.create(model="claude-x", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    assert raised.value.status_code == 529
    body = raised.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "overloaded_error"
    assert body["error"]["message"].startswith("Overloaded")


def test_status_429_on_messages_is_a_rate_limit_with_retry_after(captures: str) -> None:
    with (
        serving([captures], status=429) as (running, _),
        anthropic_client(running.url) as client,
        pytest.raises(anthropic.RateLimitError) as raised,
    ):
        client.messages.create(model="claude-x", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    assert raised.value.response.headers["retry-after"] == "1"
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["error"]["type"] == "rate_limit_error"


def test_status_on_chat_is_openai_shaped(captures: str) -> None:
    with (
        serving([captures], status=503) as (running, _),
        openai_client(running.url, "limited") as client,
        pytest.raises(openai.InternalServerError) as raised,
    ):
        client.chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
    assert raised.value.status_code == 503
    assert raised.value.response.headers["x-should-retry"] == "true"
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "overloaded"


def test_status_on_llama_stack_is_its_own_shape(captures: str) -> None:
    with serving([captures], status=503) as (running, _):
        answer = post(
            f"{running.url}/v1/inference/chat-completion",
            {"model_id": "m", "messages": MESSAGES, "stream": True},
        )
    assert answer.status_code == 503
    detail = orjson.loads(answer.content)["error"]["detail"]
    assert detail.startswith("Service Unavailable.")


def test_bad_json_on_messages_is_anthropic_shaped(captures: str) -> None:
    with serving([captures]) as (running, _):
        answer = post(f"{running.url}/v1/messages", b"{nope")
    assert answer.status_code == 400
    body = orjson.loads(answer.content)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"


def test_unknown_path_stays_openai_shaped(captures: str) -> None:
    with serving([captures]) as (running, _):
        answer = post(f"{running.url}/v1/nothing", {})
    assert answer.status_code == 404
    assert orjson.loads(answer.content)["error"]["code"] == "unknown_url"
