"""A Chat Completions request body ⇄ the neutral request (:mod:`chatx.request`).

``read`` and ``write`` compose the concepts: messages (:mod:`.request_messages`), tools
and tool choice (:mod:`.request_tools`), and the settings here. Into chat from another
API: ``max_tokens`` (what vLLM, Ollama, llama.cpp, DeepSeek and Kimi all take), a
streamed request asks for usage (``stream_options.include_usage``, without which no chat
server sends it), a thinking budget becomes the nearest ``reasoning_effort``.
"""

from __future__ import annotations

from typing import Any

from chatx import request_mapping as mapping
from chatx.codecs.chat_chunk.request_messages import MessagesWriter, read_messages
from chatx.codecs.chat_chunk.request_tools import (
    read_tool_choice,
    read_tools,
    write_tool_choice,
    write_tools,
)
from chatx.request import Mapped, Request, Tool

API = "chat"
# Chat's own top-level fields the neutral request has no name for: another API's request
# holding one (Llama Stack's seed, Responses' prompt_cache_key) sends it as it is.
KEYS = frozenset(
    (
        "seed",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "frequency_penalty",
        "presence_penalty",
        "service_tier",
        "prompt_cache_key",
        "prompt_cache_retention",
        "safety_identifier",
        "modalities",
        "audio",
        "prediction",
        "web_search_options",
    )
)
_NAMED = frozenset(
    (
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "reasoning_effort",
        "verbosity",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "temperature",
        "top_p",
        "n",
        "user",
        "metadata",
        "stream",
        "stream_options",
        "store",
    )
)
# The settings chat names as the neutral request does.
_AS_NAMED = ("verbosity", "temperature", "top_p", "n", "user", "metadata", "store")


def read(body: Any) -> Mapped:
    """A chat request body as the neutral request."""
    request = mapping.read_body(body, API, "a chat completions request object")
    read_messages(body.get("messages"), request)
    if body.get("tools") is not None:
        request.tools = read_tools(body["tools"])
    if body.get("tool_choice") is not None:
        request.tool_choice = read_tool_choice(body["tool_choice"])
    _read_settings(body, request)
    _read_limits(body, request)
    request.extra = {k: v for k, v in body.items() if k not in _NAMED}
    return Mapped(body=request)


def _read_settings(body: dict[str, Any], request: Request) -> None:
    mapping.read_fields(body, request, ("parallel_tool_calls", "reasoning_effort", *_AS_NAMED))
    request.response_format = _read_format(body.get("response_format"), request)
    request.stream = body.get("stream") is True
    if "stream" in body and not isinstance(body["stream"], bool):
        request.form["stream"] = body["stream"]
    options = body.get("stream_options")
    if isinstance(options, dict):
        request.include_usage = options.get("include_usage")
        request.form["stream_options"] = options
    elif options is not None:
        request.form["stream_options"] = options


def _read_limits(body: dict[str, Any], request: Request) -> None:
    for key in ("max_completion_tokens", "max_tokens"):
        if body.get(key) is not None and request.max_tokens is None:
            request.max_tokens = body[key]
            request.form["max"] = key
    stop = body.get("stop")
    if isinstance(stop, str):
        request.stop = [stop]
        request.form["stop"] = "string"
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        request.stop = list(stop)


def _read_format(value: Any, request: Request) -> dict[str, Any] | None:
    """Chat's ``response_format`` in the Responses ``text.format`` shape the neutral
    request holds (``json_schema``'s fields one level up)."""
    if not isinstance(value, dict):
        if value is not None:
            request.form["response_format"] = value
        return None
    schema = value.get("json_schema")
    if value.get("type") == "json_schema" and isinstance(schema, dict) and len(value) == 2:
        return {"type": "json_schema", **schema}
    return dict(value)


def write(request: Request) -> Mapped:
    """The neutral request as a chat request body."""
    same = request.api == API
    lost: list[str] = []
    names: dict[str, Tool] = {}
    body: dict[str, Any] = {"model": request.model}
    if request.tools:
        body["tools"] = write_tools(request.tools, same, names, lost)
    writer = MessagesWriter(request, names, lost)
    writer.instructions(request.instructions)
    for index, turn in enumerate(request.turns):
        mapping.write_turn(writer, index, turn)
    body["messages"] = writer.out
    if request.tool_choice is not None:
        choice = write_tool_choice(request.tool_choice, same, request.tools, lost)
        body["tool_choice"] = choice
    _write_settings(request, body, lost)
    _write_limits(request, body)
    if not same:
        lost += _not_in_chat(request)
    mapping.write_extra(body, request, API, KEYS, lost)
    return Mapped(body=mapping.finish_body(body, request, API), lost=lost, names=names)


def _write_settings(request: Request, body: dict[str, Any], lost: list[str]) -> None:
    same = request.api == API
    body["parallel_tool_calls"] = request.parallel_tool_calls
    body["response_format"] = _write_format(request, same)
    body["reasoning_effort"] = request.reasoning_effort
    if request.reasoning_budget is not None and request.reasoning_effort is None:
        body["reasoning_effort"] = mapping.budget_as_effort(request.reasoning_budget, lost)
    mapping.write_fields(request, body, _AS_NAMED)
    body["stream"] = request.form.get("stream", request.stream)
    options = request.form.get("stream_options") if same else None
    if options is None and request.stream and request.include_usage is not False:
        options = {"include_usage": True}  # no chat server sends usage unless asked
    elif options is None and request.include_usage is not None:
        options = {"include_usage": request.include_usage}
    body["stream_options"] = options


def _write_limits(request: Request, body: dict[str, Any]) -> None:
    key = request.form.get("max", "max_tokens") if request.api == API else "max_tokens"
    body[key] = request.max_tokens
    if request.form.get("stop") == "string" and len(request.stop) == 1:
        body["stop"] = request.stop[0]
    elif request.stop:
        body["stop"] = request.stop


def _write_format(request: Request, same: bool) -> Any:
    value = request.response_format
    if value is None:
        return request.form.get("response_format") if same else None
    if value.get("type") != "json_schema":
        return value
    if not same:
        value = mapping.json_schema_format(value)
    schema = {k: v for k, v in value.items() if k != "type"}
    return {"type": "json_schema", "json_schema": schema}


def _not_in_chat(request: Request) -> list[str]:
    """What the neutral request holds that chat has no field for."""
    lost = []
    if request.reasoning_summary is not None:
        lost.append(f"reasoning_summary ({request.reasoning_summary})")
    if request.previous_response_id is not None:
        lost.append("previous_response_id")
    for name, fields in request.tool_sets.items():
        lost += mapping.extra_lost(f"tool_sets.{name}", fields)
    return lost
