"""A request's ``n`` is honoured: a capture with several choices serves the first a
request asks for when it asks for one (chat's default), every one when it asks for as
many as it has, and a clear 400 when it asks for more. Driven by the openai SDK."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import orjson
import pytest

from tests.live.support import post, serving

TEXTS = ["red", "green", "blue"]


def _three_choices() -> bytes:
    out = []
    for index, text in enumerate(TEXTS):
        for piece in (text[:2], text[2:]):
            chunk = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": index, "delta": {"content": piece}, "finish_reason": None}],
            }
            out.append(b"data: " + orjson.dumps(chunk) + b"\n\n")
    for index in range(len(TEXTS)):
        end = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": index, "delta": {}, "finish_reason": "stop"}],
        }
        out.append(b"data: " + orjson.dumps(end) + b"\n\n")
    return b"".join(out) + b"data: [DONE]\n\n"


THREE = _three_choices()
MESSAGES = [{"role": "user", "content": "a colour"}]


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "three.sse").write_bytes(THREE)
    with serving([str(tmp_path)]) as (running, _):
        yield running.url


@contextmanager
def client(url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as made:
        yield made


def streamed(url: str, **asked: int) -> dict[int, str]:
    texts: dict[int, str] = {}
    with client(url) as made:
        stream = made.chat.completions.create(
            model="m",
            messages=MESSAGES,  # type: ignore[arg-type]
            stream=True,
            **asked,  # type: ignore[arg-type]
        )
        for chunk in stream:
            for choice in chunk.choices:
                texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
    return texts


def test_one_choice_asked_for_by_default_gets_the_first(url: str) -> None:
    # Before: choices 0, 1 and 2 all came, and a client that reads every delta as one
    # text (most do, as they asked for one) read the three interleaved.
    assert streamed(url) == {0: "red"}
    assert streamed(url, n=1) == {0: "red"}


def test_as_many_as_recorded_are_sent_as_recorded(url: str) -> None:
    assert streamed(url, n=3) == dict(enumerate(TEXTS))
    answer = post(
        f"{url}/v1/chat/completions", {"model": "m", "messages": MESSAGES, "stream": True, "n": 3}
    )
    assert answer.content == THREE


def test_not_streamed_gets_the_choices_asked_for(url: str) -> None:
    with client(url) as made:
        one = made.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        three = made.chat.completions.create(model="m", messages=MESSAGES, n=3)  # type: ignore[arg-type]
    assert [c.message.content for c in one.choices] == ["red"]
    assert [c.message.content for c in three.choices] == TEXTS


def test_more_than_recorded_is_a_400_naming_both(url: str) -> None:
    with client(url) as made, pytest.raises(openai.BadRequestError) as raised:
        made.chat.completions.create(model="m", messages=MESSAGES, n=4)  # type: ignore[arg-type]
    body = raised.value.body
    assert isinstance(body, dict) and body["param"] == "n"
    assert body["code"] == "too_many_choices"
    assert "n=4" in body["message"] and "three.sse has 3" in body["message"]


@pytest.mark.parametrize("n", [0, -1, "2", True, 2.0])
def test_a_number_that_is_no_count_is_a_400(url: str, n: object) -> None:
    answer = post(f"{url}/v1/chat/completions", {"model": "m", "messages": MESSAGES, "n": n})
    assert answer.status_code == 400
    error = orjson.loads(answer.content)["error"]
    assert error["param"] == "n" and error["type"] == "invalid_request_error"


def test_some_of_the_choices_are_the_first_asked_for(url: str) -> None:
    # Before: n=2 of a three-choice capture was a 400 (choices_not_served).
    assert streamed(url, n=2) == {0: "red", 1: "green"}
    with client(url) as made:
        two = made.chat.completions.create(model="m", messages=MESSAGES, n=2)  # type: ignore[arg-type]
    assert [(c.index, c.message.content) for c in two.choices] == [(0, "red"), (1, "green")]


def test_some_of_the_choices_leave_the_others_events_out_and_keep_the_rest_as_sent(
    url: str,
) -> None:
    answer = post(
        f"{url}/v1/chat/completions", {"model": "m", "messages": MESSAGES, "stream": True, "n": 2}
    )
    events = [e + b"\n\n" for e in THREE.split(b"\n\n") if e]
    kept = [e for e in events if b'"index":2' not in e]
    assert answer.content == b"".join(kept)


def test_a_chunk_holding_several_choices_keeps_those_asked_for(tmp_path: Path) -> None:
    both = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": i, "delta": {"content": t}, "finish_reason": "stop"}
            for i, t in enumerate(TEXTS)
        ],
    }
    (tmp_path / "packed.jsonl").write_bytes(orjson.dumps(both) + b"\n")
    with serving([str(tmp_path)]) as (running, _):
        assert streamed(running.url, n=2) == {0: "red", 1: "green"}
        with client(running.url) as made:
            two = made.chat.completions.create(model="m", messages=MESSAGES, n=2)  # type: ignore[arg-type]
    assert [c.message.content for c in two.choices] == ["red", "green"]


def test_a_recorded_final_object_sends_the_first_choices(tmp_path: Path) -> None:
    final = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": t},
                "finish_reason": "stop",
            }
            for i, t in enumerate(TEXTS)
        ],
    }
    (tmp_path / "final.json").write_bytes(orjson.dumps(final))
    with serving([str(tmp_path)]) as (running, _), client(running.url) as made:
        two = made.chat.completions.create(model="m", messages=MESSAGES, n=2)  # type: ignore[arg-type]
        four = post(f"{running.url}/v1/chat/completions", {"model": "m", "n": 4})
    assert [c.message.content for c in two.choices] == ["red", "green"]
    assert four.status_code == 400
    assert orjson.loads(four.content)["error"]["code"] == "too_many_choices"


def test_responses_has_no_n_and_gets_the_first(url: str) -> None:
    with client(url) as made:
        response = made.responses.create(model="m", input="a colour")
    assert response.output_text == "red"
