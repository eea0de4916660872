"""A Llama Stack inference chat-completion request body (``POST
/v1/inference/chat-completion``) ⇄ the neutral request (:mod:`chatx.request`).

Its shape: ``model_id``; ``messages`` of role ``system``, ``user``, ``assistant`` (with
``tool_calls`` of ``call_id``, ``tool_name``, ``arguments`` as an object, and a
``stop_reason``) and ``tool`` (``call_id``); content as a string, a content item (``text``,
``image`` with ``image.url.uri`` or ``image.data``) or a list of them; ``tools`` of
``tool_name``, ``description`` and ``input_schema`` (older servers: ``parameters``, one
``param_type`` per name); ``tool_config.tool_choice`` (``auto``, ``required``, ``none`` or
a tool's name); ``sampling_params`` (``strategy`` greedy / top_p with ``temperature`` and
``top_p``, ``max_tokens``, ``stop``); ``response_format`` (``json_schema``); ``stream``.

Llama Stack has no reasoning, custom tools, namespaces nor built-ins that the other APIs
have: those are lost, or reshaped as for chat (a custom tool a function of one string, a
namespace member ``NAMESPACE__NAME``, which :attr:`~chatx.request.Mapped.names` says).
"""

from __future__ import annotations

import json
from typing import Any

from chatx import request as neutral
from chatx.request_mapping import (
    expect,
    extra_lost,
    finish_body,
    own_value,
    read_body,
    read_each,
    shared_extra,
    with_extra,
    write_native,
    write_turn,
)
from chatx.tool_shapes import as_function, custom_arguments, flat_name

API = "llama-stack"
KEYS = frozenset(("logprobs", "tool_prompt_format"))
_NAMED = frozenset(
    ("model_id", "messages", "tools", "tool_config", "sampling_params", "response_format", "stream")
)
_ROLES = ("system", "user", "assistant", "tool")


def read(body: Any) -> neutral.Mapped:
    """A Llama Stack chat-completion request body as the neutral request."""
    request = read_body(body, API, "a Llama Stack chat-completion request object", "model_id")
    request.stream = body.get("stream") is True
    request.extra = {k: v for k, v in body.items() if k not in _NAMED}
    for number, message in enumerate(expect(body.get("messages"), list, "messages", "an array")):
        request.turns += _read_message(message, f"messages[{number}]")
    if body.get("tools") is not None:
        request.tools = read_each(body["tools"], "tools", "an array of tools", _read_tool)
    _read_config(body.get("tool_config"), request)
    _read_sampling(body.get("sampling_params"), request)
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        request.response_format = {
            "type": "json_schema",
            "schema": response_format.get("json_schema"),
        }
        request.form["response_format"] = response_format
    elif response_format is not None:
        request.extra["response_format"] = response_format
    return neutral.Mapped(body=request)


def _read_message(message: Any, path: str) -> list[neutral.Turn]:
    expect(message, dict, path, "a message object")
    role = message.get("role")
    if role not in _ROLES:
        return [neutral.Native(kind=f"message of role {role}", value=message)]
    parts = _read_content(message.get("content"), f"{path}.content")
    rest = {
        k: v for k, v in message.items() if k not in ("role", "content", "call_id", "tool_calls")
    }
    if role == "tool":
        call_id = expect(message.get("call_id"), str, f"{path}.call_id", "the call's id")
        return [neutral.ToolResult(call_id=call_id, parts=parts, extra=rest)]
    said = neutral.Message(role=role, parts=parts, extra=rest)
    if "stop_reason" in rest:  # how the turn ended: no meaning in a request
        said.form["stop_reason"] = rest.pop("stop_reason")
    turns: list[neutral.Turn] = [said]
    for number, call in enumerate(message.get("tool_calls") or []):
        turns.append(_read_call(call, f"{path}.tool_calls[{number}]"))
    if "tool_calls" in message and not message["tool_calls"]:
        said.form["tool_calls"] = message["tool_calls"]
    return turns


def _read_call(call: Any, path: str) -> neutral.ToolCall:
    expect(call, dict, path, "a tool call object")
    arguments = call.get("arguments", {})
    said = neutral.ToolCall(
        call_id=expect(call.get("call_id"), str, f"{path}.call_id", "the call's id"),
        name=expect(call.get("tool_name"), str, f"{path}.tool_name", "the tool's name"),
        arguments=arguments
        if isinstance(arguments, str)
        else json.dumps(arguments, ensure_ascii=False),
        joined=True,
    )
    said.form["text"] = isinstance(arguments, str)
    said.extra = {k: v for k, v in call.items() if k not in ("call_id", "tool_name", "arguments")}
    return said


def _read_content(content: Any, path: str) -> list[neutral.Part]:
    if isinstance(content, str):
        return [neutral.Part(kind="text", text=content, plain=True)]
    if isinstance(content, dict):
        part = _read_item(content)
        part.form["single"] = True
        return [part]
    return [_read_item(item) for item in expect(content, list, path, "content")]


def _read_item(item: Any) -> neutral.Part:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "text" and isinstance(item.get("text"), str) and len(item) == 2:
        return neutral.Part(kind="text", text=item["text"])
    image = item.get("image") if kind == "image" else None
    if not isinstance(image, dict) or len(image) != 1:
        return neutral.Part(kind="other", extra={"": item})
    url = image.get("url")
    if isinstance(url, dict) and isinstance(url.get("uri"), str):
        return neutral.Part(kind="image", url=url["uri"])
    if isinstance(image.get("data"), str):
        return neutral.Part(kind="image", data=image["data"])
    return neutral.Part(kind="other", extra={"": item})


def _read_tool(tool: Any, path: str) -> neutral.Tool:
    expect(tool, dict, path, "a tool object")
    name = tool.get("tool_name")
    if not isinstance(name, str):  # a built-in: brave_search, wolfram_alpha, code_interpreter
        return neutral.Tool(kind="builtin", name=str(name), extra={"": tool})
    said = neutral.Tool(kind="function", name=name, description=tool.get("description"))
    said.parameters = tool.get("input_schema")
    if said.parameters is None and isinstance(tool.get("parameters"), dict):
        said.parameters = _schema(tool["parameters"])
        said.form["parameters"] = tool["parameters"]
    said.extra = {
        k: v
        for k, v in tool.items()
        if k not in ("tool_name", "description", "input_schema", "parameters")
    }
    said.form["keys"] = list(tool)
    return said


def _schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """Older servers' parameters (a ``param_type`` per name) as a JSON schema."""
    properties = {}
    for name, spec in parameters.items():
        said: dict[str, Any] = (
            {"type": spec.get("param_type", "string")} if isinstance(spec, dict) else {}
        )
        if isinstance(spec, dict) and spec.get("description"):
            said["description"] = spec["description"]
        properties[name] = said
    required = [n for n, s in parameters.items() if isinstance(s, dict) and s.get("required", True)]
    return {"type": "object", "properties": properties, "required": required}


def _read_config(config: Any, request: neutral.Request) -> None:
    if config is None:
        return
    expect(config, dict, "tool_config", "a tool config object")
    choice = config.get("tool_choice")
    if choice in ("auto", "required", "none"):
        request.tool_choice = neutral.ToolChoice(mode=choice)
    elif isinstance(choice, str):
        request.tool_choice = neutral.ToolChoice(mode="tool", name=choice)
    request.form["tool_config"] = config


def _read_sampling(params: Any, request: neutral.Request) -> None:
    if params is None:
        return
    expect(params, dict, "sampling_params", "a sampling params object")
    request.form["sampling_params"] = params
    strategy = params.get("strategy")
    if isinstance(strategy, dict) and strategy.get("type") == "top_p":
        request.temperature = strategy.get("temperature")
        request.top_p = strategy.get("top_p")
    elif isinstance(strategy, dict) and strategy.get("type") == "greedy":
        request.temperature = 0
    request.max_tokens = params.get("max_tokens")
    stop = params.get("stop")
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        request.stop = list(stop)


# --- writing -------------------------------------------------------------------------


def write(request: neutral.Request) -> neutral.Mapped:
    """The neutral request as a Llama Stack chat-completion request body."""
    same = request.api == API
    lost: list[str] = []
    names: dict[str, neutral.Tool] = {}
    body: dict[str, Any] = {"model_id": request.model}
    writer = _MessagesWriter(same, lost)
    if request.instructions:
        content = _content(request.instructions, "instructions", same, lost)
        writer.out.append({"role": "system", "content": content})
    for index, turn in enumerate(request.turns):
        write_turn(writer, index, turn)
    body["messages"] = writer.out
    tools = [_write_tool(t, f"tools[{n}]", same, names, lost) for n, t in enumerate(request.tools)]
    body["tools"] = [t for t in tools if t is not None] or None
    body["tool_config"] = _write_config(request, same, lost)
    body["sampling_params"] = _write_sampling(request, same)
    body["response_format"] = _write_format(request, same, lost)
    body["stream"] = request.stream
    body.update(shared_extra(request, API, KEYS, lost))
    if not same:
        lost += _not_in_llama(request)
    return neutral.Mapped(body=finish_body(body, request, API), lost=lost, names=names)


class _MessagesWriter:
    """The history as Llama Stack's messages, turn by turn (a
    :class:`~chatx.request_mapping.TurnWriter`): a call joins the assistant message before
    it, reasoning has no place."""

    def __init__(self, same: bool, lost: list[str]) -> None:
        self.same = same
        self.lost = lost
        self.out: list[dict[str, Any]] = []

    def message(self, turn: neutral.Message, path: str) -> None:
        same = self.same
        role = "system" if turn.role == "developer" else turn.role
        content = _content(turn.parts, path, same, self.lost)
        said: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant" and not same:  # Llama Stack's assistant message says why it ended
            said["stop_reason"] = "end_of_turn"
        elif "stop_reason" in turn.form and same:
            said["stop_reason"] = turn.form["stop_reason"]
        if "tool_calls" in turn.form and same:
            said["tool_calls"] = list(turn.form["tool_calls"])
        self.out.append(with_extra(said, turn.extra, path, same, self.lost))

    def result(self, turn: neutral.ToolResult, path: str) -> None:
        said = {
            "role": "tool",
            "call_id": turn.call_id,
            "content": _content(turn.parts, path, self.same, self.lost),
        }
        said.update(turn.extra if self.same else {})
        if turn.is_error:
            self.lost.append(f"{path}.is_error")
        self.out.append(said)

    def reasoning(self, turn: neutral.Reasoning, path: str) -> None:
        self.lost.append(f"{path} (reasoning)")

    def native(self, turn: neutral.Native, path: str) -> None:
        write_native(turn, path, self.same, self.out, self.lost)

    def call(self, turn: neutral.ToolCall, path: str) -> None:
        text = custom_arguments(turn.arguments) if turn.kind == "custom" else turn.arguments
        arguments: Any = text
        if not (self.same and turn.form.get("text")):
            try:
                arguments = json.loads(text) if text.strip() else {}
            except ValueError:
                arguments = text  # Llama Stack takes arguments it could not parse as text
        said = {
            "call_id": turn.call_id,
            "tool_name": flat_name(turn.name, turn.namespace),
            "arguments": arguments,
        }
        said.update(turn.extra if self.same else {})
        messages = self.out
        last = messages[-1] if messages else None
        if last is None or last["role"] != "assistant" or turn.joined is False:
            last = {"role": "assistant", "content": "", "stop_reason": "end_of_turn"}
            last["tool_calls"] = []
            messages.append(last)
        last.setdefault("tool_calls", []).append(said)


def _content(parts: list[neutral.Part], path: str, same: bool, lost: list[str]) -> Any:
    if len(parts) == 1 and (parts[0].plain or not same) and parts[0].kind == "text":
        return parts[0].text or ""
    items: list[Any] = []
    prefix = path if path == "instructions" else f"{path}.parts"
    for number, part in enumerate(parts):
        if part.kind == "text":
            items.append({"type": "text", "text": part.text or ""})
        elif part.kind == "image" and (part.url or part.data):
            image: dict[str, Any] = {"url": {"uri": part.url}} if part.url else {"data": part.data}
            items.append({"type": "image", "image": image})
        elif part.kind == "other" and same:
            items.append(part.extra[""])
        else:
            lost.append(f"{prefix}[{number}] ({part.kind})")
            continue
        if not same:
            lost += extra_lost(f"{prefix}[{number}]", part.extra)
    if len(items) == 1 and same and parts[0].form.get("single"):
        return items[0]
    return items


def _write_tool(
    tool: neutral.Tool, path: str, same: bool, names: dict[str, neutral.Tool], lost: list[str]
) -> Any:
    if tool.kind == "builtin":
        return own_value(tool.extra, f"{path} ({tool.name})", same, lost)
    function = as_function(tool, names)
    said: dict[str, Any] = {"tool_name": function.name, "description": function.description}
    said["input_schema"] = function.parameters
    if same:
        said["parameters"] = tool.form.get("parameters")
        return {**{k: said.get(k) for k in tool.form.get("keys", said)}, **tool.extra}
    if tool.strict:
        lost.append(f"{path}.strict")
    lost += extra_lost(path, tool.extra)
    return {k: v for k, v in said.items() if v is not None}


def _write_config(request: neutral.Request, same: bool, lost: list[str]) -> Any:
    if same:
        return request.form.get("tool_config")
    choice = request.tool_choice
    if choice is None:
        return None
    if choice.allowed is not None:
        lost.append("tool_choice.allowed")
    if choice.mode != "tool":
        return {"tool_choice": choice.mode}
    tool = next((t for t in request.tools if t.name == choice.name), None)
    return {"tool_choice": flat_name(tool.name, tool.namespace) if tool else choice.name}


def _write_sampling(request: neutral.Request, same: bool) -> Any:
    if same:
        return request.form.get("sampling_params")
    params: dict[str, Any] = {}
    if request.temperature is not None or request.top_p is not None:
        strategy = {"type": "top_p", "temperature": request.temperature, "top_p": request.top_p}
        params["strategy"] = {k: v for k, v in strategy.items() if v is not None}
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.stop:
        params["stop"] = request.stop
    return params or None


def _write_format(request: neutral.Request, same: bool, lost: list[str]) -> Any:
    value = request.response_format
    if same:
        return request.form.get("response_format", request.extra.get("response_format"))
    if value is None:
        return None
    if value.get("type") != "json_schema":
        lost.append(f"response_format ({value.get('type')})")
        return None
    return {"type": "json_schema", "json_schema": value.get("schema")}


def _not_in_llama(request: neutral.Request) -> list[str]:
    """What the neutral request holds that Llama Stack has no field for."""
    lost = []
    for name, value in (
        ("n", request.n if request.n != 1 else None),
        ("reasoning_effort", request.reasoning_effort),
        ("reasoning_budget", request.reasoning_budget),
        ("reasoning_summary", request.reasoning_summary),
        ("verbosity", request.verbosity),
        ("parallel_tool_calls", False if request.parallel_tool_calls is False else None),
        ("user", request.user),
        ("metadata", request.metadata),
        ("store", request.store),
        ("previous_response_id", request.previous_response_id),
    ):
        if value is not None:
            said = isinstance(value, str | int) and len(str(value)) <= 24  # an effort, a number
            lost.append(f"{name} ({value})" if said else name)
    for name, fields in request.tool_sets.items():
        lost += extra_lost(f"tool_sets.{name}", fields)
    return lost
