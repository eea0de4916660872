"""Anthropic clients over chat and Responses upstreams, and the reverse (issue 25):
system blocks with cache_control, tool_use/tool_result pairs, thinking with its signature,
the thinking budget as reasoning_effort, stop_sequences, metadata.user_id."""

from __future__ import annotations

import json
from typing import Any

from chatx import codecs
from chatx.request import Mapped, Reasoning, Request
from tests.requests.bodies import fixture

CHAT, RESPONSES, ANTHROPIC = "chat-chunk", "responses-event", "anthropic-event"
CLAUDE_CODE = "anthropic-messages__claude_code_tools_thinking.json"


def translate(body: Any, source: str, target: str) -> Mapped:
    read = codecs.get(source).requests
    write = codecs.get(target).requests
    assert read is not None and write is not None
    return write.write(read.read(body).body)


def write(request: Request, target: str) -> Mapped:
    mapping = codecs.get(target).requests
    assert mapping is not None
    return mapping.write(request)


def test_claude_code_over_chat() -> None:
    up = translate(fixture(CLAUDE_CODE), ANTHROPIC, CHAT)
    body = up.body
    system, user, assistant, result1, result2, after, thanks = body["messages"]
    assert system["role"] == "system"
    assert [p["text"] for p in system["content"]] == [
        "You are Claude Code, Anthropic's official CLI for Claude.",
        "Work in /repo. Be brief.",
    ]
    assert user["content"][2] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    # thinking, text and tool uses: one assistant message; the signature cannot go
    assert assistant["reasoning_content"] == "I should run ls."
    assert assistant["content"] == "Listing the files."
    assert [(c["id"], c["function"]["name"]) for c in assistant["tool_calls"]] == [
        ("toolu_01", "Bash"),
        ("toolu_02", "Glob"),
    ]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "command": "ls",
        "description": "List files",
    }
    assert (result1["role"], result1["tool_call_id"], result1["content"]) == (
        "tool",
        "toolu_01",
        "a.py\nb.py",
    )
    assert (result2["tool_call_id"], result2["content"]) == ("toolu_02", "a.py")
    assert after == {"role": "assistant", "content": "Two files."}
    assert thanks == {"role": "user", "content": "Thanks."}
    assert body["tool_choice"] == "required" and body["parallel_tool_calls"] is False
    assert body["reasoning_effort"] == "medium"  # a 10000-token budget
    assert body["stop"] == ["</answer>"]
    assert body["user"] == "user_abc_account_1234_session_5678"
    assert body["max_tokens"] == 21333
    assert body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in body["tools"]] == ["Bash", "Glob"]
    assert up.lost == [
        "tools[1].cache_control",
        "tools[2] (web_search_20250305)",
        "instructions[0].cache_control",
        "instructions[1].cache_control",
        "turns[0].parts[1].cache_control",
        "turns[1].signature",
        "turns[7] (encrypted reasoning)",
        "reasoning_budget (10000 tokens, sent as effort medium)",
    ]
    assert "EmwKAhgBEgy-redacted" not in json.dumps(body)


def test_chat_over_anthropic() -> None:
    up = translate(fixture("chat__deepseek_thinking_tools.json"), CHAT, ANTHROPIC)
    body = up.body
    assert body["system"] == "You are a weather bot."
    roles = [(m["role"], [b["type"] for b in m["content"]]) for m in body["messages"][:3]]
    assert roles == [
        ("user", ["text", "image"]),
        ("assistant", ["tool_use", "tool_use"]),
        ("user", ["tool_result", "tool_result"]),  # chat's tool messages, one user turn
    ]
    assert body["messages"][1]["content"][0]["input"] == {"city": "Paris"}
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert body["stop_sequences"] == ["END"]
    assert body["metadata"] == {"user_id": "u-42"}
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert "thinking" not in body  # Anthropic does not think with a forced tool
    assert "reasoning (Anthropic does not think when a tool is forced)" in up.lost
    assert "turns[1] (reasoning without a signature)" in up.lost
    assert "The user wants the weather" not in json.dumps(body)


def test_reasoning_effort_is_a_thinking_budget_that_leaves_room_to_answer() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    said = translate({**body, "reasoning_effort": "high"}, CHAT, ANTHROPIC)
    assert said.body["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert said.body["max_tokens"] > 24576 and said.lost == []
    off = translate({**body, "reasoning_effort": "none"}, CHAT, ANTHROPIC).body
    assert off["thinking"] == {"type": "disabled"}
    hot = translate({**body, "reasoning_effort": "low", "temperature": 0.3}, CHAT, ANTHROPIC)
    assert "temperature" not in hot.body
    assert hot.lost == ["temperature (0.3: Anthropic thinks at 1 only)"]


def test_thinking_signature_goes_back_to_anthropic_as_it_came() -> None:
    # a reasoning item chatx made of an Anthropic thinking block keeps the signature as
    # its encrypted_content beside the summary; sent back up it is that thinking block
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "I should run ls."}],
        "encrypted_content": "EqQBCkYIBxgCKkBsig==",
    }
    body = {"model": "claude", "input": [{"role": "user", "content": "ls"}, item]}
    up = translate(body, RESPONSES, ANTHROPIC)
    assert up.body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "I should run ls.", "signature": "EqQBCkYIBxgCKkBsig=="}
    ]
    # OpenAI's own encrypted reasoning is no signature: said lost, never sent
    openai = {**item, "encrypted_content": "gAAAAABopaque"}
    up = translate({**body, "input": [body["input"][0], openai]}, RESPONSES, ANTHROPIC)
    assert "gAAAAABopaque" not in json.dumps(up.body)
    assert "turns[1].encrypted_content (OpenAI's)" in up.lost
    redacted = write(Request(turns=[Reasoning(encrypted="gAAAAABx")]), ANTHROPIC)
    assert redacted.body["messages"] == [] and redacted.lost
