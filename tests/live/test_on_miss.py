"""Matching by recorded request with what varies run to run left out, and ``--on-miss
error``: a request no capture's recorded request matches is a 400 in the API's shape
naming the closest capture and the first difference. Driven by the openai SDK."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import orjson
import pytest

from tests.live.support import serving


def _chunk_stream(text: str) -> bytes:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\ndata: [DONE]\n\n"


def _turn(question: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": question}]}


@pytest.fixture
def captures(tmp_path: Path) -> str:
    for name, question in (("sky", "colour of the sky?"), ("grass", "colour of grass?")):
        (tmp_path / f"{name}.sse").write_bytes(_chunk_stream(name))
        recorded = {**_turn(question), "stream": True, "user": "run-1", "id": "req-1"}
        (tmp_path / f"{name}.sse.request.json").write_bytes(orjson.dumps(recorded))
    return str(tmp_path)


@contextmanager
def client(url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as made:
        yield made


def text(made: openai.OpenAI, question: str, **more: str) -> str | None:
    answer = made.chat.completions.create(**_turn(question), **more)  # type: ignore[call-overload]
    return answer.choices[0].message.content  # type: ignore[no-any-return]


@pytest.mark.parametrize("on_miss", ["next", "error"])
def test_matched_with_what_varies_left_out(captures: str, on_miss: str) -> None:
    # Asked in the other order, by another user: each question gets its own capture.
    with serving([captures], on_miss=on_miss) as (running, _), client(running.url) as made:
        assert text(made, "colour of grass?", user="run-2") == "grass"
        assert text(made, "colour of the sky?") == "sky"


def test_on_miss_error_names_the_closest_and_the_first_difference(captures: str) -> None:
    # Before (and with next): the next capture in order answered, whatever was asked.
    with (
        serving([captures], on_miss="error") as (running, _),
        client(running.url) as made,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        text(made, "colour of the sea?")
    body = raised.value.body
    assert isinstance(body, dict) and body["code"] == "no_matching_capture"
    assert body["param"] == "messages[0].content"
    # Both are as close (model alike): the first in order is named, grass.sse.
    assert "grass.sse, differs first at messages[0].content" in body["message"]
    assert '"colour of the sea?", the capture\'s request "colour of grass?"' in body["message"]


def test_on_miss_next_answers_in_order(captures: str) -> None:
    with serving([captures]) as (running, _), client(running.url) as made:
        assert text(made, "colour of the sea?") == "grass"
        assert text(made, "colour of the sea?") == "sky"


def test_on_miss_error_on_messages_is_anthropic_shaped(captures: str) -> None:
    import anthropic

    with (
        serving([captures], on_miss="error") as (running, _),
        anthropic.Anthropic(base_url=running.url, api_key="k", max_retries=0) as made,
        pytest.raises(anthropic.BadRequestError) as raised,
    ):
        made.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "colour of grass?"}]
        )
    body = raised.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert "grass.sse, differs first at max_tokens" in body["error"]["message"]
