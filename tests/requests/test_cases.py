"""The cases issue 25 names, each as a body going from one API to another: Codex's
custom tools and tool sets, built-ins, reasoning between turns, usage when streaming,
tool choice, response format and settings, and what is said lost."""

from __future__ import annotations

import json
from typing import Any

from chatx import codecs
from chatx.request import Mapped, Request, ToolCall, ToolResult
from chatx.tool_shapes import client_call, restore
from tests.requests.bodies import fixture

CHAT, RESPONSES = "chat-chunk", "responses-event"


def translate(body: Any, source: str, target: str) -> Mapped:
    read = codecs.get(source).requests
    write = codecs.get(target).requests
    assert read is not None and write is not None
    request = read.read(body).body
    return write.write(request)


def read(body: Any, codec: str) -> Request:
    mapping = codecs.get(codec).requests
    assert mapping is not None
    got: Request = mapping.read(body).body
    return got


def codex_over_chat() -> Mapped:
    return translate(fixture("responses__codex_apply_patch.json"), RESPONSES, CHAT)


def tool(body: dict[str, Any], name: str) -> dict[str, Any]:
    found = [t["function"] for t in body["tools"] if t["function"]["name"] == name]
    assert len(found) == 1, name
    return found[0]


def test_a_custom_tool_is_a_chat_function_of_one_string_with_its_grammar() -> None:
    said = tool(codex_over_chat().body, "apply_patch")
    assert said["parameters"]["properties"] == {
        "input": {"type": "string", "description": "The tool's input."}
    }
    assert said["parameters"]["required"] == ["input"]
    assert said["description"].startswith("Use the `apply_patch` tool to edit files.")
    assert "start: begin_patch hunk+ end_patch" in said["description"]
    assert "lark" in said["description"]


def test_custom_tool_history_is_an_assistant_call_and_a_tool_message() -> None:
    messages = codex_over_chat().body["messages"]
    calls = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    patch = calls[0]["tool_calls"][0]
    assert patch["id"] == "call_patch" and patch["function"]["name"] == "apply_patch"
    # the raw input, as the function the tool became takes it
    assert json.loads(patch["function"]["arguments"]) == {
        "input": '*** Begin Patch\n*** Add File: a.py\n+print("hello")\n*** End Patch\n'
    }
    answer = messages[messages.index(calls[0]) + 1]
    assert answer == {
        "role": "tool",
        "tool_call_id": "call_patch",
        "content": "Success. Updated the following files:\nA a.py\n",
    }


def test_namespace_members_go_up_under_names_that_come_back() -> None:
    written = codex_over_chat()
    body = written.body
    assert tool(body, "multi_agent_v1__spawn_agent")["description"] == "Spawn a sub-agent."
    assert tool(body, "multi_agent_v1__wait_agent")
    spawned = [
        c for m in body["messages"] for c in m.get("tool_calls") or [] if c["id"] == "call_spawn"
    ]
    assert spawned[0]["function"]["name"] == "multi_agent_v1__spawn_agent"
    # the names the gateway reads a call back by
    assert {n: (t.kind, t.namespace, t.name) for n, t in written.names.items()} == {
        "apply_patch": ("custom", None, "apply_patch"),
        "multi_agent_v1__spawn_agent": ("function", "multi_agent_v1", "spawn_agent"),
        "multi_agent_v1__wait_agent": ("function", "multi_agent_v1", "wait_agent"),
    }


def test_a_chat_call_of_a_reshaped_tool_comes_back_in_the_clients_shape() -> None:
    names = codex_over_chat().names
    patch = client_call(
        ToolCall(call_id="c1", name="apply_patch", arguments='{"input": "*** Begin Patch\\n"}'),
        names,
    )
    assert (patch.kind, patch.name, patch.arguments) == (
        "custom",
        "apply_patch",
        "*** Begin Patch\n",
    )
    spawn = client_call(
        ToolCall(call_id="c2", name="multi_agent_v1__spawn_agent", arguments="{}"), names
    )
    assert (spawn.kind, spawn.namespace, spawn.name) == (
        "function",
        "multi_agent_v1",
        "spawn_agent",
    )
    other = ToolCall(call_id="c3", name="exec_command", arguments="{}")
    assert client_call(other, names) is other


def test_codex_over_chat_and_back_is_the_same_request_but_its_losses() -> None:
    body = fixture("responses__codex_apply_patch.json")
    written = codex_over_chat()
    assert written.lost == [
        "tools[4] (web_search)",
        "turns[2].encrypted_content",
        "reasoning_summary (auto)",
        "tool_sets.multi_agent_v1.description",
        "include",
    ]
    back = restore(read(written.body, CHAT), written.names)
    again = codecs.get(RESPONSES).requests.write(back).body  # type: ignore[union-attr]
    # the reasoning went up as reasoning_content, which Responses takes back only as its own
    assert [i.get("type") for i in again["input"]] == [
        "message", "message", "custom_tool_call", "custom_tool_call_output", "function_call",
        "function_call_output",
    ]  # fmt: skip
    assert again["input"][2]["input"] == body["input"][3]["input"]
    assert again["input"][4]["namespace"] == "multi_agent_v1"
    assert again["input"][4]["name"] == "spawn_agent"
    assert [t["type"] for t in again["tools"]] == ["function", "custom", "namespace"]


def test_encrypted_reasoning_is_lost_never_sent_as_text() -> None:
    body = codex_over_chat().body
    assert "gAAAAABopaque-reasoning" not in json.dumps(body)
    # its readable summary goes back as the assistant message's reasoning_content
    assistant = [m for m in body["messages"] if m["role"] == "assistant"][0]
    assert assistant["reasoning_content"] == "**Planning the edit**"


def test_reasoning_content_goes_back_on_the_assistant_message() -> None:
    body = fixture("chat__deepseek_thinking_tools.json")
    request = read(body, CHAT)
    assert [type(t).__name__ for t in request.turns] == [
        "Message", "Reasoning", "Message", "ToolCall", "ToolCall", "ToolResult", "ToolResult",
        "Message",
    ]  # fmt: skip
    up = translate(body, CHAT, RESPONSES)
    # Responses takes back only its own reasoning items: said, not sent as text
    assert "turns[1] (reasoning from another API)" in up.lost
    assert "The user wants the weather" not in json.dumps(up.body)


def test_streaming_to_chat_asks_for_usage() -> None:
    body = translate(fixture("responses__codex_apply_patch.json"), RESPONSES, CHAT).body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    whole = translate(fixture("responses__agents_handoff.json"), RESPONSES, CHAT).body
    assert "stream" not in whole and "stream_options" not in whole


def test_settings_between_chat_and_responses() -> None:
    up = translate(fixture("chat__deepseek_thinking_tools.json"), CHAT, RESPONSES)
    body = up.body
    assert body["instructions"] == "You are a weather bot."
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Forecast",
            "schema": {
                "type": "object",
                "properties": {"sky": {"type": "string"}},
                "required": ["sky"],
                "additionalProperties": False,
            },
            "strict": True,
        }
    }
    assert body["reasoning"] == {"effort": "high"}
    assert body["max_output_tokens"] == 2048
    assert (body["temperature"], body["top_p"], body["user"]) == (0.2, 0.9, "u-42")
    # chat's tools took no strict: Responses would make them strict
    assert [t["strict"] for t in body["tools"]] == [False, False]
    assert sorted(up.lost) == sorted(["turns[1] (reasoning from another API)", "stop", "seed"])
    down = translate(fixture("responses__agents_handoff.json"), RESPONSES, CHAT).body
    assert down["response_format"]["json_schema"]["name"] == "Tune"
    assert down["tool_choice"] == {"type": "function", "function": {"name": "transfer_to_composer"}}
    assert (down["max_tokens"], down["verbosity"], down["metadata"]) == (500, "low", {"run": "r1"})
    assert down["messages"][0] == {
        "role": "system",
        "content": "Hand off to the composer when asked for music.",
    }


def test_tool_results_pair_with_their_calls_both_ways() -> None:
    request = read(fixture("chat__deepseek_thinking_tools.json"), CHAT)
    calls = [t.call_id for t in request.turns if isinstance(t, ToolCall)]
    results = [t.call_id for t in request.turns if isinstance(t, ToolResult)]
    assert calls == results == ["call_1", "call_2"]
    items = translate(fixture("chat__deepseek_thinking_tools.json"), CHAT, RESPONSES).body["input"]
    assert [(i["type"], i["call_id"]) for i in items if "call_id" in i] == [
        ("function_call", "call_1"),
        ("function_call", "call_2"),
        ("function_call_output", "call_1"),
        ("function_call_output", "call_2"),
    ]
