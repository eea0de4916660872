"""``chatx serve`` of long streams, whose runs the encoders write from byte templates
(:mod:`chatx.codecs.byte_template`): what the openai and anthropic SDKs rebuild from the
served events is what ``chatx collect`` builds from the capture, and the records did go
out as template bytes (counted, so that a capture too short for a template cannot pass
unseen). The bench's mixed stream holds reasoning, text and tool calls, each in runs of
tens of records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import openai
import pytest

from chatx.codecs.byte_template import PayloadTemplate
from chatx.record import Dumped
from tests.bench_streams import generate
from tests.live.support import Running, final, plain, serving

MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]
NAME = "chat-chunk/mixed.sse"


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    folder = tmp_path_factory.mktemp("captures") / "chat-chunk"
    folder.mkdir()
    data = generate.chat_bytes("mixed", 1500)
    (folder / "mixed.sse").write_bytes(data)
    return folder, data  # served as a directory: its files are named chat-chunk/…


@pytest.fixture(scope="module")
def served(stream: tuple[Path, bytes]) -> Iterator[Running]:
    with serving([str(stream[0])]) as (running, _):
        yield running


@pytest.fixture
def templated() -> Iterator[list[int]]:
    """The records written from a template while the test runs (the server is in this
    process: its transcoding threads write through the same class)."""
    written = [0]
    write = PayloadTemplate.write

    def counted(self: PayloadTemplate, *args: Any, **kwargs: Any) -> list[Any]:
        out = write(self, *args, **kwargs)
        written[0] += sum(len(p.payloads) for p in out if type(p) is Dumped)
        return out

    with mock.patch.object(PayloadTemplate, "write", counted):
        yield written


def test_responses_stream(
    served: Running, stream: tuple[Path, bytes], templated: list[int]
) -> None:
    with (
        openai.OpenAI(base_url=f"{served.url}/v1", api_key="sk-test", max_retries=0) as client,
        client.responses.stream(
            model="gpt-test", input="hi", extra_headers={"X-Chatx-Capture": NAME}
        ) as sent,
    ):
        numbers = [event.sequence_number for event in sent]
        got = sent.get_final_response().model_dump(mode="json")
    assert numbers == list(range(len(numbers)))
    expected = final(stream[1], "responses-event")
    for key in ("id", "status", "output", "usage"):
        assert plain(got[key]) == plain(expected[key]), key
    assert {item["type"] for item in got["output"]} >= {"reasoning", "message", "function_call"}
    assert templated[0] > 1000


def test_anthropic_messages_stream(
    served: Running, stream: tuple[Path, bytes], templated: list[int]
) -> None:
    anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK")
    with (
        anthropic.Anthropic(base_url=served.url, api_key="sk-test", max_retries=0) as client,
        client.messages.stream(
            model="claude-test",
            max_tokens=100,
            messages=MESSAGES,
            extra_headers={"X-Chatx-Capture": NAME},
        ) as sent,
    ):
        got = sent.get_final_message().model_dump(mode="json")
    expected = final(stream[1], "anthropic-event")
    assert plain(got) == plain(expected)
    assert {block["type"] for block in got["content"]} >= {"thinking", "text", "tool_use"}
    # A live stream's records come one by one, each a run of its own: a block's deltas
    # after its first go out from the template kept for the block.
    assert templated[0] > 1000


def test_chat_completions_stream(
    served: Running, stream: tuple[Path, bytes], templated: list[int]
) -> None:
    """A chat capture through the chat API goes out as it came, no template needed."""
    with (
        openai.OpenAI(base_url=f"{served.url}/v1", api_key="sk-test", max_retries=0) as client,
        client.chat.completions.stream(
            model="gpt-test", messages=MESSAGES, extra_headers={"X-Chatx-Capture": NAME}
        ) as sent,
    ):
        for _ in sent:
            pass
        got = sent.get_final_completion().model_dump(mode="json")
    expected = final(stream[1], "chat-chunk")
    said, meant = got["choices"][0]["message"], expected["choices"][0]["message"]
    assert said["content"] == meant["content"]
    assert said["content"] and said["tool_calls"]
    assert [_call(c) for c in said["tool_calls"]] == [_call(c) for c in meant["tool_calls"]]


def _call(call: dict[str, Any]) -> tuple[str, str, str]:
    return call["id"], call["function"]["name"], call["function"]["arguments"]
