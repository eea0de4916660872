"""The anthropic SDK's own stream accumulator (``accumulate_event``, what ``MessageStream``
builds a ``Message`` with) rebuilds from chatx's anthropic output what the source says:
text, thinking, tool calls with their parsed input, the stop reason, and usage.

Sources: every fixture of every format, and every real capture when ``../shared`` is
there. The SDK's reader skips ``ping`` events and raises at an ``error`` event: the
accumulator is fed what comes before it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.builders.anthropic_event import ANTHROPIC
from tests.captures import capture_params
from tests.meaning import lanes_of, summarize
from tests.streams import CHAT, RESPONSES, convert, payloads

pytest.importorskip(
    "anthropic", reason="the anthropic SDK (the `anthropic` extra) is not installed"
)

LLAMA = "llama-stack-event"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
STOP_WORDS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
STOP_WORDS |= {"tool_use": "tool_calls", "refusal": "content_filter", "pause_turn": "pause_turn"}


def sdk_messages(data: bytes) -> list[Any]:
    """The message the SDK accumulates from each stream of ``data`` (``Message`` models)."""
    from anthropic.lib.streaming._messages import accumulate_event

    messages: list[Any] = []
    snapshot, buffers = None, {}
    for event in payloads(data):
        if event["type"] == "ping":
            continue
        if event["type"] == "error":
            break
        if event["type"] == "message_start" and snapshot is not None:
            messages.append(snapshot)
            snapshot, buffers = None, {}
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    if snapshot is not None:
        messages.append(snapshot)
    return messages


def says(message: Any) -> dict[str, Any]:
    """What one SDK message says, in the terms of ``tests.meaning.summarize``."""
    text = "".join(b.text for b in message.content if b.type == "text")
    thinking = "".join(b.thinking for b in message.content if b.type == "thinking")
    calls = [
        (b.name, b.id, ("json", json.dumps(b.input, sort_keys=True)))
        for b in message.content
        if b.type == "tool_use"
    ]
    usage = message.usage
    counted = usage.input_tokens + (usage.cache_creation_input_tokens or 0)
    counted += usage.cache_read_input_tokens or 0
    finish = STOP_WORDS.get(message.stop_reason) if message.stop_reason else None
    if finish == "stop" and calls:
        finish = "tool_calls"
    return {
        "text": text,
        "reasoning": thinking,
        "calls": calls,
        "finish": finish,
        "usage": (counted, usage.output_tokens),
    }


def source_says(data: bytes, src: str, choice: int | None) -> list[dict[str, Any]]:
    """What the source says, as an Anthropic message can say it (a refusal is text, a
    call without arguments has the input {}, a usage-less stream zero counts)."""
    out = []
    for stream in summarize(data, src, lane=choice):
        lane = stream["lanes"].get(0, {"text": "", "reasoning": "", "refusal": "", "calls": []})
        calls = [
            (name or "", cid, ("json", "{}") if args in (("text", ""), ("json", "{}")) else args)
            for name, cid, args in lane["calls"]
        ]
        usage = stream["usage"] or (0, 0, 0)
        out.append(
            {
                "text": lane["text"] + lane["refusal"],
                "reasoning": lane["reasoning"],
                "calls": calls,
                "finish": lane.get("finish"),
                "usage": (usage[0], usage[1]),
            }
        )
    return out


def cases() -> list[Any]:
    out = []
    for fmt in (CHAT, RESPONSES, LLAMA, ANTHROPIC):
        params = [pytest.param(p, id=p.name) for p in sorted((FIXTURES / fmt).glob("*.*"))]
        for param in [*params, *capture_params(fmt)]:
            path = param.values[0]
            if path is None:
                out.append(pytest.param(None, None, None, marks=param.marks, id=param.id))
                continue
            choices: list[int | None] = [None]
            if fmt == CHAT:  # several choices: each, as --choice writes it
                lanes = sorted(lanes_of(path.read_bytes(), CHAT))
                choices = lanes if len(lanes) > 1 else [None]
            for choice in choices:
                suffix = "" if choice is None else f"-choice{choice}"
                out.append(pytest.param(fmt, path, choice, id=f"{fmt}/{path.name}{suffix}"))
    return out


# Sources whose message the SDK cannot rebuild as the source says it, and why.
UNSAID = {
    # The call's input was cut at max_tokens: the SDK's partial JSON parser makes what it
    # can of it, which is not the text the model wrote.
    "missing-block-stop.sse": "calls",
    "anthropic-sdk-python__incomplete_partial_json_response.sse": "calls",
}


@pytest.mark.parametrize(("src", "path", "choice"), cases())
def test_the_sdk_rebuilds_what_the_source_says(src: str, path: Path, choice: int | None) -> None:
    data = path.read_bytes()
    out, _ = convert(data, ANTHROPIC, src, choice=choice)
    rebuilt = [says(message) for message in sdk_messages(out)]
    expected = source_says(data, src, choice)
    if path.name in UNSAID:
        for one in (*rebuilt, *expected):
            one.pop(UNSAID[path.name])
    if not rebuilt:  # an error before any message: the SDK raises at once
        assert payloads(out)[0]["type"] == "error"
        return
    # A stream that ends in an error or stops short has no stop reason the SDK sees, and
    # its usage is message_start's, not a final count.
    for one, two in zip(rebuilt, expected, strict=False):
        if one["finish"] is None:
            two["finish"] = None
            one["usage"] = two["usage"] = None
        elif two["finish"] is None:  # chatx gives a message without one a stop reason
            two["finish"] = "tool_calls" if two["calls"] else "stop"
        if two["finish"] in ("function_call", "error") or two["finish"] not in STOP_WORDS.values():
            two["finish"] = one["finish"]  # said lost: a word Anthropic has none for
    assert rebuilt == expected


def server_cases() -> list[Any]:
    """Every fixture and capture of Anthropic's with a server tool's call in it."""
    params = [pytest.param(p, id=p.name) for p in sorted((FIXTURES / ANTHROPIC).glob("*.*"))]
    out = []
    for param in [*params, *capture_params(ANTHROPIC)]:
        path = param.values[0]
        if path is None or re.search(rb'"type": ?"server_tool_use"', path.read_bytes()):
            out.append(param)
    return out


@pytest.mark.parametrize("path", server_cases())
def test_collect_gives_a_server_tool_call_the_input_the_sdk_parses(path: Path) -> None:
    from chatx.collect import collect
    from chatx.collect.streams import streams_of
    from chatx.reading.framing import load

    data = path.read_bytes()
    side = load(data, path.name)
    built = [collect(stream, "anthropic", source=ANTHROPIC) for stream in streams_of(side)]

    def calls(blocks: list[Any]) -> list[Any]:
        return [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "server_tool_use"]

    sdk = [calls([b.model_dump(mode="json") for b in m.content]) for m in sdk_messages(data)]
    assert [calls(message["content"]) for message in built] == sdk
    assert any(sdk)
