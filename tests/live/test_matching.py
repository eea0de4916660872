"""Matching by recorded request: what a client sends differently each run is left out,
and the next turn of an agent's loop is told apart by the tool calls its results
answer, no header needed. Driven by the openai and anthropic SDKs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest

from chatx.live.choose import tool_results
from tests.live.support import serving

QUESTION = [{"role": "user", "content": "weather in Paris?"}]
CALL = {"id": "call_A", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


def _chunks(*deltas: dict[str, Any], finish: str = "stop") -> bytes:
    out = []
    for delta in [*deltas, {}]:
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None if delta else finish}],
        }
        out.append(b"data: " + orjson.dumps(chunk) + b"\n\n")
    return b"".join(out) + b"data: [DONE]\n\n"


def _second_turn(result: str) -> list[dict[str, Any]]:
    return [
        *QUESTION,
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_A", "content": result},
    ]


@pytest.fixture
def loop(tmp_path: Path) -> str:
    """turn1.sse calls the tool (call_A); turn2.sse answers once its result is in."""
    calls = _chunks(
        {"role": "assistant", "tool_calls": [{"index": 0, **CALL}]}, finish="tool_calls"
    )
    for name, stream, messages in (
        ("turn1", calls, QUESTION),
        ("turn2", _chunks({"content": "sunny"}), _second_turn("21 C")),
    ):
        (tmp_path / f"{name}.sse").write_bytes(stream)
        request = {"model": "m", "messages": messages, "stream": True}
        (tmp_path / f"{name}.sse.request.json").write_bytes(orjson.dumps(request))
    return str(tmp_path)


def ask(url: str, messages: list[dict[str, Any]], **more: Any) -> tuple[str | None, str]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="m",
            messages=messages,  # type: ignore[arg-type]
            **more,
        )
    answer = raw.parse()
    message = answer.choices[0].message
    said = message.content if message.tool_calls is None else message.tool_calls[0].id
    return said, raw.headers["x-chatx-capture"]


@pytest.mark.parametrize("on_miss", ["next", "error"])
def test_the_next_turn_is_told_by_the_calls_its_results_answer(loop: str, on_miss: str) -> None:
    # The tool said 22 C this run (21 C when recorded): the request equals no recorded
    # one. Before: with next, the next capture in order (turn1 again after turn1); with
    # error, a 400.
    with serving([loop], on_miss=on_miss) as (running, _):
        first = ask(running.url, QUESTION)
        second = ask(running.url, _second_turn("22 C"))
    assert first == ("call_A", f"{Path(loop).name}/turn1.sse")
    assert second == ("sunny", f"{Path(loop).name}/turn2.sse")


def test_turns_asked_out_of_order_and_again_get_their_own(loop: str) -> None:
    with serving([loop]) as (running, _):
        said = [
            ask(running.url, _second_turn("0 C"))[0],
            ask(running.url, [{"role": "user", "content": "weather in Rome?"}])[0],
            ask(running.url, [{"role": "user", "content": "weather in Oslo?"}])[0],
            ask(running.url, _second_turn("5 C"))[0],
        ]
    # Before: sunny, sunny, call_A, call_A (the model's captures in turn).
    assert said == ["sunny", "call_A", "call_A", "sunny"]


def test_results_for_calls_no_capture_made_are_a_miss(loop: str) -> None:
    other = _second_turn("21 C")
    other[1] = {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "call_B"}]}
    other[2] = {"role": "tool", "tool_call_id": "call_B", "content": "21 C"}
    with (
        serving([loop], on_miss="error") as (running, _),
        pytest.raises(openai.BadRequestError) as raised,
    ):
        ask(running.url, other)
    body = raised.value.body
    assert isinstance(body, dict) and body["code"] == "no_matching_capture"
    assert body["param"] == "messages[1].tool_calls[0].id"
    assert "turn2.sse" in body["message"]


def test_what_an_sdk_fills_per_run_is_left_out(loop: str) -> None:
    with serving([loop], on_miss="error") as (running, _):
        said = ask(
            running.url,
            QUESTION,
            user="someone",
            metadata={"session": "8e24f6d6"},
            prompt_cache_key="run-42",
            safety_identifier="h-1",
        )
        assert said[0] == "call_A"
        with pytest.raises(openai.BadRequestError) as raised:
            ask(running.url, QUESTION, temperature=0.5)  # a setting is no volatile field
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == "temperature"


def _anthropic_stream(*blocks: tuple[str, dict[str, Any], list[dict[str, Any]]]) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        }
    ]
    stop = "end_turn"
    for index, (_, start, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
        stop = "tool_use" if start["type"] == "tool_use" else stop
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop},
            "usage": {"output_tokens": 1},
        }
    )
    events.append({"type": "message_stop"})
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


def test_anthropic_tool_results_tell_the_turn(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}
    question = [{"role": "user", "content": "weather in Paris?"}]

    def then(result: str) -> list[dict[str, Any]]:
        return [
            *question,
            {"role": "assistant", "content": [use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}],
            },
        ]

    tool = ("tool", use, [{"type": "input_json_delta", "partial_json": "{}"}])
    text = ("text", {"type": "text", "text": ""}, [{"type": "text_delta", "text": "sunny"}])
    for name, stream, messages in (
        ("one", _anthropic_stream(tool), question),
        ("two", _anthropic_stream(text), then("21 C")),
    ):
        (tmp_path / f"{name}.sse").write_bytes(stream)
        request = {"model": "claude", "max_tokens": 100, "messages": messages, "stream": True}
        (tmp_path / f"{name}.sse.request.json").write_bytes(orjson.dumps(request))
    with (
        serving([str(tmp_path)], on_miss="error") as (running, _),
        anthropic.Anthropic(base_url=running.url, api_key="k", max_retries=0) as client,
    ):
        second = client.messages.create(model="claude", max_tokens=100, messages=then("9 C"))  # type: ignore[arg-type]
        first = client.messages.create(model="claude", max_tokens=100, messages=question)  # type: ignore[arg-type]
    assert [b.type for b in first.content] == ["tool_use"]
    assert [getattr(b, "text", None) for b in second.content] == ["sunny"]


@pytest.mark.parametrize(
    ("request_body", "ids"),
    [
        ({"messages": _second_turn("x")}, ("call_A",)),
        (
            {
                "input": [
                    {"type": "function_call", "call_id": "fc_1", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "fc_1", "output": "x"},
                    {"type": "custom_tool_call_output", "call_id": "ct_2", "output": "y"},
                ]
            },
            ("fc_1", "ct_2"),
        ),
        (
            {"messages": [{"role": "tool", "call_id": "ls_1", "content": "x"}]},
            ("ls_1",),
        ),
        ({"messages": QUESTION}, ()),
        ({"input": "hi"}, ()),
    ],
)
def test_tool_results_read_per_api(request_body: dict[str, Any], ids: tuple[str, ...]) -> None:
    assert tool_results(request_body) == ids
