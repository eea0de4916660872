"""An Anthropic Messages create request body ⇄ the neutral request (:mod:`chatx.request`).

``read`` and ``write`` compose the concepts: system and messages
(:mod:`.request_blocks`), tools and tool choice (:mod:`.request_tools`), and the settings
here. Into Anthropic from another API: the system and developer messages a conversation
opens with become the system prompt; ``max_tokens``, which Anthropic requires, is the
source's or 8192 (more than the thinking budget when there is one); a reasoning effort
becomes a thinking budget (``minimal`` 1024, ``low`` 2048, ``medium`` 8192, ``high``
24576 tokens, ``none`` thinking disabled); the user is ``metadata.user_id``; a response
format ``output_config.format``.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.anthropic_event.request_blocks import BlocksWriter, read_messages, read_system
from chatx.codecs.anthropic_event.request_tools import (
    read_tool_choice,
    read_tools,
    write_tool_choice,
    write_tools,
)
from chatx.request import Mapped, Request, Tool
from chatx.request_mapping import (
    effort_as_budget,
    finish_body,
    read_body,
    read_nested,
    read_object,
    write_extra,
    write_object,
)

API = "anthropic"
# Anthropic's own top-level fields the neutral request has no name for: another API's
# request holding one sends it as it is.
# (service_tier is not among them: OpenAI's tiers are not Anthropic's.)
KEYS = frozenset(("top_k", "container", "context_management", "mcp_servers"))
_NAMED = frozenset(
    (
        "model",
        "system",
        "messages",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "output_format",
        "max_tokens",
        "stop_sequences",
        "temperature",
        "top_p",
        "metadata",
        "stream",
    )
)
DEFAULT_MAX_TOKENS = 8192


def read(body: Any) -> Mapped:
    """An Anthropic Messages request body as the neutral request."""
    request = read_body(body, API, "an Anthropic messages request object")
    request.extra = {k: v for k, v in body.items() if k not in _NAMED}
    if body.get("system") is not None:
        request.instructions = read_system(body["system"])
    read_messages(body.get("messages"), request)
    if body.get("tools") is not None:
        request.tools = read_tools(body["tools"])
    if body.get("tool_choice") is not None:
        request.tool_choice, request.parallel_tool_calls = read_tool_choice(body["tool_choice"])
    _read_settings(body, request)
    _read_reasoning(body, request)
    return Mapped(body=request)


def _read_settings(body: dict[str, Any], request: Request) -> None:
    request.max_tokens = body.get("max_tokens")
    request.temperature = body.get("temperature")
    request.top_p = body.get("top_p")
    request.stream = body.get("stream") is True
    stop = body.get("stop_sequences")
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        request.stop = list(stop)
    elif stop is not None:
        request.extra["stop_sequences"] = stop
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        request.user = metadata["user_id"]
        rest = {k: v for k, v in metadata.items() if k != "user_id"}
        request.metadata = rest or None
    elif metadata is not None:
        request.form["metadata"] = metadata


def _read_reasoning(body: dict[str, Any], request: Request) -> None:
    thinking = body.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    if isinstance(thinking, dict) and thinking.get("type") == "enabled" and isinstance(budget, int):
        request.reasoning_budget = budget
        read_nested(request, "thinking", thinking, ("type", "budget_tokens"))
    elif thinking == {"type": "disabled"}:
        request.reasoning_effort = "none"
        request.form["thinking"] = "disabled"
    elif thinking is not None:
        request.extra["thinking"] = thinking
    config = body.get("output_config")
    if isinstance(config, dict):
        if config.get("effort") is not None or request.reasoning_effort is None:
            request.reasoning_effort = config.get("effort")
            request.form.pop("thinking", None)
        request.response_format = config.get("format")
        read_object(request, "output_config", config, ("effort", "format"))
    elif config is not None:
        request.extra["output_config"] = config
    if isinstance(body.get("output_format"), dict):
        request.response_format = body["output_format"]
        request.form["format"] = "output_format"


def write(request: Request) -> Mapped:
    """The neutral request as an Anthropic Messages request body."""
    same = request.api == API
    lost: list[str] = []
    names: dict[str, Tool] = {}
    body: dict[str, Any] = {"model": request.model}
    tools = write_tools(request.tools, same, names, lost)
    blocks = BlocksWriter(request, names, lost)
    body["system"], leading = blocks.system(request)
    body["messages"] = blocks.messages(request.turns, leading)
    body["tools"] = tools or None
    body["tool_choice"] = write_tool_choice(
        request.tool_choice, request.parallel_tool_calls, request.tools, same, lost
    )
    _write_settings(request, body, lost)
    _write_reasoning(request, body, lost)
    write_extra(body, request, API, KEYS, lost, ("thinking", "output_config"))
    if not same:
        lost += _not_in_anthropic(request)
    return Mapped(body=finish_body(body, request, API), lost=lost, names=names)


def _write_settings(request: Request, body: dict[str, Any], lost: list[str]) -> None:
    same = request.api == API
    body["max_tokens"] = request.max_tokens
    if request.max_tokens is None and not same:
        body["max_tokens"] = DEFAULT_MAX_TOKENS  # Anthropic requires it
    body["stop_sequences"] = request.stop or None
    body["temperature"] = request.temperature
    body["top_p"] = request.top_p
    body["stream"] = request.stream
    metadata = dict(request.metadata or {})
    if metadata and not same:
        lost.append("metadata")  # Anthropic's metadata holds user_id only
        metadata = {}
    if request.user is not None:
        metadata["user_id"] = request.user
    body["metadata"] = metadata or request.form.get("metadata") if same else metadata or None


def _write_reasoning(request: Request, body: dict[str, Any], lost: list[str]) -> None:
    same = request.api == API
    config: dict[str, Any] = {}
    if request.response_format is not None:
        if same and request.form.get("format") == "output_format":
            body["output_format"] = request.response_format
        else:
            config["format"] = _format(request.response_format, same, lost)
    budget = request.reasoning_budget
    if request.reasoning_effort == "none" and (not same or request.form.get("thinking")):
        body["thinking"] = {"type": "disabled"}
    elif same:
        config["effort"] = request.reasoning_effort
    elif budget is None and request.reasoning_effort is not None:
        budget = effort_as_budget(request.reasoning_effort, lost)
    if budget is not None and not same:
        budget = _thinking_allowed(budget, body, lost)
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": _budget(budget, body, lost)}
    body["output_config"] = write_object(config, request, API, "output_config")


def _thinking_allowed(budget: int, body: dict[str, Any], lost: list[str]) -> int | None:
    """The budget, when Anthropic can think with the rest of the request: not with a
    forced tool (the client's choice wins), and only at temperature 1 and top_p of 0.95
    or more (the thinking wins over sampling)."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") in ("any", "tool"):
        lost.append("reasoning (Anthropic does not think when a tool is forced)")
        return None
    if body["temperature"] not in (None, 1):
        lost.append(f"temperature ({body['temperature']}: Anthropic thinks at 1 only)")
        body["temperature"] = None
    if body["top_p"] is not None and body["top_p"] < 0.95:
        lost.append(f"top_p ({body['top_p']}: Anthropic thinks at 0.95 or more)")
        body["top_p"] = None
    return budget


def _budget(budget: int, body: dict[str, Any], lost: list[str]) -> int:
    """The budget as Anthropic takes it: below ``max_tokens``, which leaves room for the
    answer (raised when the source set none, else the budget lowered)."""
    if body["max_tokens"] > budget:
        return budget
    if body["max_tokens"] == DEFAULT_MAX_TOKENS:
        body["max_tokens"] = budget + DEFAULT_MAX_TOKENS
        return budget
    lowered = max(1024, body["max_tokens"] - 1)
    lost.append(f"reasoning_budget ({budget} tokens, sent as {lowered}: max_tokens is less)")
    return lowered


def _format(value: dict[str, Any], same: bool, lost: list[str]) -> dict[str, Any] | None:
    """A response format as Anthropic's ``output_config.format``: a JSON schema only."""
    if same:
        return value
    if value.get("type") != "json_schema" or not isinstance(value.get("schema"), dict):
        lost.append(f"response_format ({value.get('type')})")
        return None
    if "description" in value:
        lost.append("response_format.description")
    return {"type": "json_schema", "schema": value["schema"]}


def _not_in_anthropic(request: Request) -> list[str]:
    """What the neutral request holds that Anthropic has no field for."""
    lost = []
    if request.n not in (None, 1):
        lost.append(f"n ({request.n})")
    for name, value in (
        ("reasoning_summary", request.reasoning_summary),
        ("verbosity", request.verbosity),
        ("previous_response_id", request.previous_response_id),
        ("store", request.store),
    ):
        if value is not None:
            lost.append(f"{name} ({value})")
    for name, fields in request.tool_sets.items():
        lost += [f"tool_sets.{name}.{key}" for key in fields]
    return lost
