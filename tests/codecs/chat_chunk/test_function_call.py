"""The functions API's calls (openai-python 0.27 and the servers that copied it): a
delta's ``function_call`` ({name, arguments} fragments, no index nor id) and
``finish_reason: function_call``. Another format gets a tool call; chat output, and
collect from chat, keep the field as it came. Both were wrong before: the call was
'lost' on the way to every other format (no item, empty Responses output)."""

from __future__ import annotations

import json

import pytest

from tests.builders.chat_chunk import chunk
from tests.inprocess import run
from tests.streams import CHAT, RESPONSES, convert, payloads, sse

ARGS = ['{"city"', ': "Par', 'is"}']
CHUNKS = [
    chunk({"role": "assistant", "content": None,
           "function_call": {"name": "get_weather", "arguments": ""}}),
    *(chunk({"function_call": {"arguments": piece}}) for piece in ARGS),
    chunk({}, "function_call"),
]  # fmt: skip


def test_chat_to_chat_writes_the_field_back_unchanged() -> None:
    out, notes = convert(sse(CHUNKS), CHAT, CHAT)
    assert payloads(out) == CHUNKS
    assert not notes.lost_fields


@pytest.mark.parametrize("target", ["responses-event", "anthropic-event", "llama-stack-event"])
def test_another_format_gets_a_tool_call(target: str) -> None:
    out, notes = convert(sse(CHUNKS), target, CHAT)
    assert not notes.lost_fields  # the call is carried, nothing of it said lost
    checked = run(["validate", "-"], out)  # a Responses call has the call_id it needs
    assert checked.code == 0, checked.stdout
    back, _ = convert(out, CHAT, target)
    calls = [entry for p in payloads(back) for c in p.get("choices", [])
             for entry in c["delta"].get("tool_calls", [])]  # fmt: skip
    assert calls[0]["function"]["name"] == "get_weather"
    assert json.loads("".join(c["function"].get("arguments", "") for c in calls)) == {
        "city": "Paris"
    }


def test_collect_as_responses_has_the_call_and_as_chat_the_field() -> None:
    out, _ = convert(sse(CHUNKS), RESPONSES, CHAT)
    (item,) = [i for i in payloads(out)[-1]["response"]["output"]]
    assert (item["type"], item["name"], item["arguments"]) == (
        "function_call", "get_weather", '{"city": "Paris"}',
    )  # fmt: skip
    collected = run(["collect", "-q", "-"], sse(CHUNKS))
    assert collected.code == 0, collected.err
    message = json.loads(collected.stdout)["choices"][0]["message"]
    assert message["function_call"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert "tool_calls" not in message


def test_an_empty_stub_beside_tool_calls_is_no_call() -> None:
    """Some servers send ``function_call: {name: "", arguments: ""}`` on a delta of a
    stream whose calls are tool_calls: it opens no call of its own."""
    stub = {"role": "assistant", "function_call": {"name": "", "arguments": ""}}
    calls = {"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                             "function": {"name": "f", "arguments": "{}"}}]}  # fmt: skip
    out, _ = convert(sse([chunk(stub), chunk(calls), chunk({}, "tool_calls")]), RESPONSES, CHAT)
    items = payloads(out)[-1]["response"]["output"]
    assert [(i["type"], i["call_id"], i["name"]) for i in items] == [
        ("function_call", "call_a", "f")
    ]
