"""A Responses create request body ⇄ the neutral request (:mod:`chatx.request`).

``read`` and ``write`` compose the concepts: input items (:mod:`.request_items`), tools
and tool choice (:mod:`.request_tools`), and the settings here (``reasoning`` and
``text`` hold several). Into Responses from another API: a function is sent with
``strict`` as the source said it (false when it said nothing, as chat and Anthropic mean);
stop sequences, ``n`` and reasoning that Responses did not make are lost.
"""

from __future__ import annotations

from typing import Any

from chatx import request_mapping as mapping
from chatx.codecs.responses_event.request_items import ItemsWriter, read_input
from chatx.codecs.responses_event.request_tools import (
    read_tool_choice,
    read_tools,
    write_tool_choice,
    write_tools,
)
from chatx.request import Mapped, Part, Request

API = "responses"
# Responses' own top-level fields the neutral request has no name for: another API's
# request holding one (chat's prompt_cache_key) sends it as it is.
KEYS = frozenset(
    (
        "prompt_cache_key",
        "prompt_cache_retention",
        "safety_identifier",
        "service_tier",
        "top_logprobs",
        "include",
        "truncation",
        "background",
        "max_tool_calls",
        "conversation",
        "prompt",
    )
)
_NAMED = frozenset(
    (
        "model",
        "instructions",
        "input",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "text",
        "reasoning",
        "max_output_tokens",
        "temperature",
        "top_p",
        "user",
        "metadata",
        "stream",
        "store",
        "previous_response_id",
    )
)
# The settings Responses names as the neutral request does, in the order it writes them.
_AS_NAMED = ("temperature", "top_p", "user", "metadata", "stream", "store", "previous_response_id")


def read(body: Any) -> Mapped:
    """A Responses request body as the neutral request."""
    request = mapping.read_body(body, API, "a Responses create request object")
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        request.instructions = [Part(kind="text", text=instructions, plain=True)]
    elif instructions is not None:
        request.form["instructions"] = instructions
    if body.get("input") is not None:
        read_input(body["input"], request)
    if body.get("tools") is not None:
        request.tools = read_tools(body["tools"], request.tool_sets)
    if body.get("tool_choice") is not None:
        request.tool_choice = read_tool_choice(body["tool_choice"])
    request.extra = {k: v for k, v in body.items() if k not in _NAMED}
    _read_settings(body, request)
    return Mapped(body=request)


def _read_settings(body: dict[str, Any], request: Request) -> None:
    mapping.read_fields(body, request, ("parallel_tool_calls", *_AS_NAMED))
    request.max_tokens = body.get("max_output_tokens")
    request.stream = body.get("stream") is True  # a stream only when it says true
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        request.reasoning_effort = reasoning.get("effort")
        request.reasoning_summary = reasoning.get("summary")
        mapping.read_object(request, "reasoning", reasoning, ("effort", "summary"))
    text = body.get("text")
    if isinstance(text, dict):
        request.response_format = text.get("format")
        request.verbosity = text.get("verbosity")
        mapping.read_object(request, "text", text, ("format", "verbosity"))


def write(request: Request) -> Mapped:
    """The neutral request as a Responses request body."""
    same = request.api == API
    lost: list[str] = []
    body: dict[str, Any] = {"model": request.model}
    body["instructions"] = _instructions(request, lost)
    items = ItemsWriter(request, lost)
    for index, turn in enumerate(request.turns):
        mapping.write_turn(items, index, turn)
    body["input"] = _input(request, items.out)
    body["tools"] = write_tools(request.tools, request.tool_sets, same, lost) or None
    if request.tool_choice is not None:
        body["tool_choice"] = write_tool_choice(request.tool_choice, request.tools, same, lost)
    _write_settings(request, body, lost)
    mapping.write_extra(body, request, API, KEYS, lost, ("reasoning", "text"))
    if not same:
        lost += _not_in_responses(request)
    return Mapped(body=mapping.finish_body(body, request, API), lost=lost)


def _instructions(request: Request, lost: list[str]) -> Any:
    if request.api == API and "instructions" in request.form:
        return request.form["instructions"]
    if not request.instructions:
        return None
    texts = []
    for number, part in enumerate(request.instructions):
        if part.kind != "text":
            lost.append(f"instructions[{number}] ({part.kind})")
            continue
        texts.append(part.text or "")
        if request.api != API:
            lost += mapping.extra_lost(f"instructions[{number}]", part.extra)
    return "\n\n".join(texts)


def _input(request: Request, items: list[dict[str, Any]]) -> Any:
    if request.form.get("input") == "string" and request.api == API and len(items) == 1:
        return items[0]["content"]
    return items


def _write_settings(request: Request, body: dict[str, Any], lost: list[str]) -> None:
    same = request.api == API
    body["parallel_tool_calls"] = request.parallel_tool_calls
    body["max_output_tokens"] = request.max_tokens
    mapping.write_fields(request, body, _AS_NAMED)
    effort = request.reasoning_effort
    if effort is None and request.reasoning_budget is not None:
        effort = mapping.budget_as_effort(request.reasoning_budget, lost)
    reasoning = {"effort": effort, "summary": request.reasoning_summary}
    body["reasoning"] = mapping.write_object(reasoning, request, API, "reasoning")
    response_format = request.response_format
    if response_format is not None and not same:
        response_format = mapping.json_schema_format(response_format)
    text = {"format": response_format, "verbosity": request.verbosity}
    body["text"] = mapping.write_object(text, request, API, "text")


def _not_in_responses(request: Request) -> list[str]:
    """What the neutral request holds that Responses has no field for."""
    lost = []
    if request.stop:
        lost.append("stop")
    if request.n not in (None, 1):
        lost.append(f"n ({request.n})")
    if request.include_usage is False:
        lost.append("include_usage (false)")
    return lost
