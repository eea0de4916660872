"""``chatx serve`` as the openai SDK sees it: one server over chatx's own fixtures.

Every capture of each format is asked for through each API, streamed
(``chat.completions.stream``, ``responses.stream``, Llama Stack's endpoint with a plain
HTTP client) and not (``create``): what the client rebuilds is what ``chatx collect``
builds from the capture. A capture through its own API comes back byte for byte.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import orjson
import pytest
from openai.types.chat import ChatCompletion

import chatx
from chatx import codecs
from chatx.codecs.base import EncodeOptions
from tests.live.support import TIMEOUT, Running, final, fixture, plain, post, serving

CAPTURES = [
    "chat-chunk/text.sse",
    "chat-chunk/tool-call-parallel.sse",
    "responses-event/text.sse",
    "responses-event/function-call.sse",
    "llama-stack-event/text.jsonl",
    "llama-stack-event/tool-call-openai-compat.jsonl",
]
# Anthropic's Messages API is served once its codec is registered (chatx.live.endpoints).
ANTHROPIC = "anthropic-event" in codecs.names()
if ANTHROPIC:
    CAPTURES += ["anthropic-event/text.sse", "anthropic-event/tool-use.sse"]
needs_anthropic = pytest.mark.skipif(
    not ANTHROPIC, reason="the anthropic-event codec is not registered: no /v1/messages"
)
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def served() -> Iterator[Running]:
    with serving() as (running, _):
        yield running


@pytest.fixture(scope="module")
def client(served: Running) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{served.url}/v1", api_key="sk-test", max_retries=0) as sdk:
        yield sdk


def header(name: str) -> dict[str, str]:
    return {"X-Chatx-Capture": name}


def source_format(name: str) -> str:
    """The format of a fixture: the directory it is in."""
    return name.split("/")[0]


# -- what a client rebuilds, through the SDK's own types ---------------------------------


def chat_view(completion: ChatCompletion) -> dict[str, Any]:
    return {
        "id": completion.id,
        "model": completion.model,
        "choices": [
            {
                "index": choice.index,
                "finish_reason": choice.finish_reason,
                "content": choice.message.content,
                "refusal": choice.message.refusal,
                "tool_calls": [
                    (call.id, call.function.name, call.function.arguments)  # type: ignore[union-attr]
                    for call in choice.message.tool_calls or []
                ],
            }
            for choice in completion.choices
        ],
        "usage": completion.usage.model_dump() if completion.usage else None,
    }


def response_view(response: dict[str, Any]) -> dict[str, Any]:
    return plain({key: response.get(key) for key in ("id", "status", "output", "usage")})


@pytest.mark.parametrize("name", CAPTURES)
def test_chat_completions_stream(client: openai.OpenAI, name: str) -> None:
    with client.chat.completions.stream(
        model="gpt-test", messages=MESSAGES, extra_headers=header(name)
    ) as stream:
        kinds = [event.type for event in stream]
        got = stream.get_final_completion()
    assert "chunk" in kinds
    expected = ChatCompletion.model_validate(final(fixture(name), "chat-chunk"))
    assert chat_view(got) == chat_view(expected)
    assert got.choices[0].message.content or got.choices[0].message.tool_calls


@pytest.mark.parametrize("name", CAPTURES)
def test_responses_stream(client: openai.OpenAI, name: str) -> None:
    with client.responses.stream(
        model="gpt-test", input="hi", extra_headers=header(name)
    ) as stream:
        kinds = [event.type for event in stream]
        got = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    expected = final(fixture(name), "responses-event")
    assert response_view(got.model_dump(mode="json")) == response_view(expected)
    assert got.output and got.output_text == _output_text(expected)


@pytest.mark.parametrize("name", CAPTURES)
def test_chat_create_not_streamed(client: openai.OpenAI, name: str) -> None:
    got = client.chat.completions.create(
        model="gpt-test", messages=MESSAGES, extra_headers=header(name)
    )
    expected = final(fixture(name), "chat-chunk")
    assert chat_view(got) == chat_view(ChatCompletion.model_validate(expected))


@pytest.mark.parametrize("name", CAPTURES)
def test_responses_create_not_streamed(client: openai.OpenAI, name: str) -> None:
    raw = client.responses.with_raw_response.create(
        model="gpt-test", input="hi", extra_headers=header(name)
    )
    # The body is collect's object itself, not only something that parses like it, with
    # the request's envelope as the stream has it (a capture naming no model: the request's).
    expected = final(fixture(name), "responses-event")
    expected["model"] = expected["model"] or "gpt-test"
    assert orjson.loads(raw.content) == expected
    assert raw.parse().output_text == _output_text(orjson.loads(raw.content))


def _output_text(response: dict[str, Any]) -> str:
    """``Response.output_text``, from the JSON: every output_text part, joined."""
    return "".join(
        part["text"]
        for item in response["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    )


@pytest.mark.parametrize("name", CAPTURES)
def test_llama_stack_endpoint(served: Running, name: str) -> None:
    url = f"{served.url}/v1/inference/chat-completion"
    body = {"model_id": "llama-test", "messages": MESSAGES, "stream": True}
    streamed = post(url, body, name)
    assert streamed.status_code == 200
    assert streamed.headers["content-type"].startswith("text/event-stream")
    expected = final(fixture(name), "llama-stack-event")
    assert final(streamed.content, "llama-stack-event") == expected
    whole = post(url, {**body, "stream": False}, name)
    assert whole.status_code == 200 and whole.json() == orjson.loads(orjson.dumps(expected))


@pytest.mark.parametrize(
    "name", ["chat-chunk/usage-no-total.sse", "chat-chunk/usage-total-reasoning.jsonl"]
)
def test_llama_stack_total_is_the_same_streamed_or_not(served: Running, name: str) -> None:
    """Llama Stack's total is the source's when it states one (xAI's counts reasoning
    tokens too), else prompt + completion, in the stream and the final object alike."""
    url = f"{served.url}/v1/inference/chat-completion"
    streamed = final(post(url, {"stream": True}, name).content, "llama-stack-event")
    whole = post(url, {"stream": False}, name).json()
    assert streamed == whole == final(fixture(name), "llama-stack-event")
    counts = {m["metric"]: m["value"] for m in whole["metrics"]}
    said = {"chat-chunk/usage-no-total.sse": None, "chat-chunk/usage-total-reasoning.jsonl": 171}
    expected = said[name] or counts["prompt_tokens"] + counts["completion_tokens"]
    assert counts["total_tokens"] == expected


# -- bytes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("chat-chunk/text.sse", "/v1/chat/completions"),
        ("responses-event/function-call.sse", "/v1/responses"),
        ("llama-stack-event/tool-calls-end-of-message.sse", "/v1/inference/chat-completion"),
    ],
)
def test_own_api_sends_the_recorded_bytes(served: Running, name: str, path: str) -> None:
    got = post(served.url + path, {"stream": True}, name)
    assert got.status_code == 200
    assert got.headers["x-chatx-capture"] == name
    assert got.content == fixture(name)


def test_recorded_object_sent_as_recorded(served: Running) -> None:
    name = "responses-event/nonstream-response.json"
    got = post(f"{served.url}/v1/responses", {"stream": False}, name)
    assert got.content == fixture(name)
    assert got.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("name", "path", "dst"),
    [
        ("chat-chunk/tool-call-parallel.sse", "/v1/responses", "responses-event"),
        ("responses-event/function-call.sse", "/v1/chat/completions", "chat-chunk"),
        ("llama-stack-event/text.jsonl", "/v1/inference/chat-completion", "llama-stack-event"),
        ("chat-chunk/nonstream-completion.json", "/v1/chat/completions", "chat-chunk"),
    ],
)
def test_transcoded_stream_is_what_convert_writes(
    served: Running, name: str, path: str, dst: str
) -> None:
    request = {"model": "gpt-test", "input": "hi", "instructions": "Be brief.", "stream": True}
    first = post(served.url + path, request, name)
    second = post(served.url + path, request, name)
    cross = source_format(name) != dst
    options = EncodeOptions(request=request) if cross else None
    expected = chatx.convert(fixture(name), dst=dst, out_container="sse", options=options)
    assert first.content == expected
    assert second.content == first.content  # deterministic: no clock, no randomness


def test_responses_envelope_comes_from_the_request(served: Running) -> None:
    request = {"model": "gpt-test", "input": "hi", "instructions": "Be brief.", "stream": True}
    got = post(f"{served.url}/v1/responses", request, "chat-chunk/text.sse")
    _, records = chatx.read_records(got.content)
    created = records[0].data["response"]
    assert created["instructions"] == "Be brief."


def test_models_lists_the_models_of_the_captures(client: openai.OpenAI) -> None:
    models = [model.id for model in client.models.list()]
    assert "gpt-test-2026" in models
    assert len(models) == len(set(models))
    assert all(isinstance(m, str) and m for m in models)


def test_several_clients_at_once(served: Running) -> None:
    names = CAPTURES * 3

    def fetch(name: str) -> bytes:
        with (
            httpx2.Client(timeout=TIMEOUT) as http,
            http.stream(
                "POST",
                f"{served.url}/v1/chat/completions",
                content=b'{"stream": true}',
                headers=header(name),
            ) as response,
        ):
            return b"".join(response.iter_bytes())

    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        got = list(pool.map(fetch, names))
    alone = {name: fetch(name) for name in CAPTURES}
    assert got == [alone[name] for name in names]
    assert alone["chat-chunk/text.sse"] == fixture("chat-chunk/text.sse")


# -- Anthropic's Messages API ----------------------------------------------------------------


@needs_anthropic
@pytest.mark.parametrize("name", CAPTURES)
def test_anthropic_messages_stream(served: Running, name: str) -> None:
    import anthropic

    with (
        anthropic.Anthropic(base_url=served.url, api_key="sk-test", max_retries=0) as client,
        client.messages.stream(
            model="claude-test", max_tokens=100, messages=MESSAGES, extra_headers=header(name)
        ) as stream,
    ):
        kinds = [event.type for event in stream]
        got = stream.get_final_message()
        made = client.messages.create(
            model="claude-test", max_tokens=100, messages=MESSAGES, extra_headers=header(name)
        )
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    expected = final(fixture(name), "anthropic-event")
    assert plain(got.model_dump(mode="json")) == plain(expected)
    assert got.content
    assert plain(made.model_dump(mode="json")) == plain(expected)


@needs_anthropic
def test_anthropic_capture_through_its_own_api_is_verbatim(served: Running) -> None:
    name = "anthropic-event/tool-use.sse"
    got = post(f"{served.url}/v1/messages", {"stream": True}, name)
    assert got.status_code == 200 and got.content == fixture(name)
