"""A small request mapping for chat and Responses, only as much as the gateway's own
tests need (text turns, function calls and results, function, custom, namespace and
built-in tools), so that they test the gateway's machinery and not a codec's mapping:
:func:`installed` puts it in place of the codecs' own for one test."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chatx import codecs
from chatx.codecs.base import RequestMapping
from chatx.request import Mapped, Message, Part, Request, Tool, ToolCall, ToolResult

SEP = "__"  # a namespace member's name on chat: NAMESPACE__NAME


def _text(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Part(kind="text", text=content)]
    return [Part(kind="text", text=p.get("text", "")) for p in content or []]


def chat_read(body: dict[str, Any]) -> Mapped:
    request = Request(model=body.get("model"), stream=body.get("stream") is True)
    for message in body.get("messages", []):
        role = message["role"]
        if role == "system" and not request.turns:
            request.instructions += _text(message["content"])
        elif role == "tool":
            request.turns.append(
                ToolResult(call_id=message["tool_call_id"], parts=_text(message["content"]))
            )
        else:
            if message.get("content"):
                request.turns.append(Message(role=role, parts=_text(message["content"])))
            for call in message.get("tool_calls") or []:
                function = call["function"]
                request.turns.append(
                    ToolCall(
                        call_id=call["id"], name=function["name"], arguments=function["arguments"]
                    )
                )
    for tool in body.get("tools", []):
        function = tool["function"]
        request.tools.append(
            Tool(kind="function", name=function["name"], parameters=function.get("parameters"))
        )
    lost = [k for k in body if k not in ("model", "stream", "messages", "tools", "stream_options")]
    return Mapped(body=request, lost=lost)


def chat_write(request: Request) -> Mapped:
    messages: list[dict[str, Any]] = []
    lost = []
    if request.instructions:
        messages.append(
            {"role": "system", "content": "".join(p.text or "" for p in request.instructions)}
        )
    for turn in request.turns:
        if isinstance(turn, Message):
            messages.append(
                {"role": turn.role, "content": "".join(p.text or "" for p in turn.parts)}
            )
        elif isinstance(turn, ToolCall):
            name = f"{turn.namespace}{SEP}{turn.name}" if turn.namespace else turn.name
            call = {
                "id": turn.call_id,
                "type": "function",
                "function": {"name": name, "arguments": turn.arguments},
            }
            if messages and messages[-1]["role"] == "assistant":
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(turn, ToolResult):
            text = "".join(p.text or "" for p in turn.parts)
            messages.append({"role": "tool", "tool_call_id": turn.call_id, "content": text})
    tools, names = _chat_tools(request, lost)
    body: dict[str, Any] = {"model": request.model, "messages": messages, "stream": request.stream}
    if tools:
        body["tools"] = tools
    if request.stream:
        body["stream_options"] = {"include_usage": True}
    return Mapped(body=body, lost=lost, names=names)


def _chat_tools(request: Request, lost: list[str]) -> tuple[list[Any], dict[str, Tool]]:
    tools = []
    names = {}
    for number, tool in enumerate(request.tools):
        if tool.kind == "builtin":
            lost.append(f"tools[{number}] ({tool.name})")
            continue
        name = f"{tool.namespace}{SEP}{tool.name}" if tool.namespace else tool.name
        parameters = tool.parameters
        if tool.kind == "custom":
            parameters = {"type": "object", "properties": {"input": {"type": "string"}}}
        if tool.kind == "custom" or name != tool.name:
            names[name] = tool
        tools.append(
            {"type": "function", "function": {"name": name, "parameters": parameters or {}}}
        )
    return tools, names


def responses_read(body: dict[str, Any]) -> Mapped:
    request = Request(model=body.get("model"), stream=body.get("stream") is True)
    if body.get("instructions"):
        request.instructions = _text(body["instructions"])
    items = body.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
        kind = item.get("type", "message")
        if kind == "message":
            request.turns.append(Message(role=item["role"], parts=_text(item["content"])))
        elif kind in ("function_call", "custom_tool_call"):
            request.turns.append(
                ToolCall(
                    call_id=item["call_id"],
                    name=item["name"],
                    arguments=item.get("arguments", item.get("input", "")),
                    kind="custom" if kind == "custom_tool_call" else "function",
                    namespace=item.get("namespace"),
                )
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            request.turns.append(ToolResult(call_id=item["call_id"], parts=_text(item["output"])))
    for tool in body.get("tools", []):
        request.tools += _responses_tools(tool, None)
    return Mapped(body=request, lost=[])


def _responses_tools(tool: dict[str, Any], namespace: str | None) -> list[Tool]:
    kind = tool["type"]
    if kind == "namespace":
        return [t for inner in tool["tools"] for t in _responses_tools(inner, tool["name"])]
    if kind == "function":
        return [
            Tool(
                kind="function",
                name=tool["name"],
                parameters=tool.get("parameters"),
                namespace=namespace,
            )
        ]
    if kind == "custom":
        return [
            Tool(kind="custom", name=tool["name"], grammar=tool.get("format"), namespace=namespace)
        ]
    return [Tool(kind="builtin", name=kind)]


def responses_write(request: Request) -> Mapped:
    items: list[dict[str, Any]] = []
    for turn in request.turns:
        if isinstance(turn, Message):
            kind = "output_text" if turn.role == "assistant" else "input_text"
            items.append(
                {"role": turn.role, "content": [{"type": kind, "text": p.text} for p in turn.parts]}
            )
        elif isinstance(turn, ToolCall):
            items.append(
                {
                    "type": "function_call",
                    "call_id": turn.call_id,
                    "name": turn.name,
                    "arguments": turn.arguments,
                }
            )
        elif isinstance(turn, ToolResult):
            output = "".join(p.text or "" for p in turn.parts)
            items.append(
                {"type": "function_call_output", "call_id": turn.call_id, "output": output}
            )
    body: dict[str, Any] = {"model": request.model, "input": items, "stream": request.stream}
    if request.instructions:
        body["instructions"] = "".join(p.text or "" for p in request.instructions)
    if request.tools:
        body["tools"] = [
            {"type": "function", "name": t.name, "parameters": t.parameters or {}}
            for t in request.tools
        ]
    return Mapped(body=body, lost=[])


TOY = {
    "chat-chunk": RequestMapping(chat_read, chat_write),
    "responses-event": RequestMapping(responses_read, responses_write),
}


@contextmanager
def installing(mappings: dict[str, RequestMapping] | None = None) -> Iterator[None]:
    """The toy mappings in place of the codecs' own while the block runs."""
    mappings = TOY if mappings is None else mappings
    saved = codecs.CODECS
    codecs.CODECS = tuple(
        dataclasses.replace(c, requests=mappings[c.name]) if c.name in mappings else c
        for c in saved
    )
    try:
        yield
    finally:
        codecs.CODECS = saved


@pytest.fixture
def toy() -> Iterator[None]:
    with installing():
        yield
