"""Tools an API has no shape for, reshaped, and their calls put back: a namespace's
member under a flat name (:func:`flat_name`) where an API has no namespaces, a custom
tool (free text, or text in a grammar) as a function of one string (:func:`as_function`,
:func:`custom_arguments`), and a call an upstream made of such a function back in the
shape of the client's tool (:func:`client_call`; a whole request: :func:`restore`). The
request mappings (``<format>/request*.py``) and the gateway share them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal, NamedTuple

from chatx import request as neutral

NAMESPACE_SEP = "__"
"""Between a namespace and its member's name where an API has no namespaces."""
CUSTOM_INPUT = "input"
"""The one string argument a custom tool takes where an API has functions only."""


def flat_name(name: str, namespace: str | None) -> str:
    """The name a namespace member goes under where the API has no namespaces."""
    return f"{namespace}{NAMESPACE_SEP}{name}" if namespace else name


def custom_function(tool: neutral.Tool) -> tuple[str, dict[str, Any]]:
    """A custom tool as a function takes it: a description that carries the grammar (the
    model is told what text the input must be) and a schema of one string."""
    said = tool.description or f"The {tool.name} tool."
    grammar = tool.grammar or {}
    if grammar.get("type") == "grammar" or "definition" in grammar:
        said += (
            f"\n\nIts `{CUSTOM_INPUT}` is text in this {grammar.get('syntax', '')} grammar"
            f" (the raw text, not JSON):\n{grammar.get('definition', '')}"
        )
    elif grammar:
        said += f"\n\nIts `{CUSTOM_INPUT}` is free text (the raw text, not JSON)."
    parameters = {
        "type": "object",
        "properties": {CUSTOM_INPUT: {"type": "string", "description": "The tool's input."}},
        "required": [CUSTOM_INPUT],
        "additionalProperties": False,
    }
    return said, parameters


class Function(NamedTuple):
    """A function or custom tool as an API of functions declares it (:func:`as_function`)."""

    name: str
    description: str | None
    parameters: dict[str, Any] | None
    strict: bool | None


def as_function(tool: neutral.Tool, names: dict[str, neutral.Tool]) -> Function:
    """A function or custom tool as an API of functions declares it: a namespace member
    under its flat name (:func:`flat_name`), a custom tool reshaped by
    :func:`custom_function` (``strict`` unsaid). A tool so renamed or reshaped goes into
    ``names`` (:attr:`~chatx.request.Mapped.names`), for its calls to come back in the
    client's shape."""
    name = flat_name(tool.name, tool.namespace)
    if name != tool.name or tool.kind == "custom":
        names[name] = tool
    if tool.kind == "custom":
        description, parameters = custom_function(tool)
        return Function(name, description, parameters, None)
    return Function(name, tool.description, tool.parameters, tool.strict)


def custom_arguments(text: str) -> str:
    """A custom tool's raw input as the function it became takes it."""
    return json.dumps({CUSTOM_INPUT: text}, ensure_ascii=False)


def custom_input(arguments: str) -> str:
    """The raw input back out of :func:`custom_arguments`' JSON (the text itself when the
    arguments are no such object)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(CUSTOM_INPUT), str):
        return str(value[CUSTOM_INPUT])
    return arguments


def client_call(call: neutral.ToolCall, names: dict[str, neutral.Tool]) -> neutral.ToolCall:
    """A call as an upstream made it (a function named as :attr:`~chatx.request.Mapped.names` says) put
    back in the shape of the client's tool: its own name and namespace, and for a custom
    tool the raw input. A call of a name not in ``names`` is returned as it is."""
    tool = names.get(call.name)
    if tool is None:
        return call
    arguments = call.arguments
    if tool.kind == "custom" and call.kind == "function":
        arguments = custom_input(arguments)
    return replace(
        call, name=tool.name, namespace=tool.namespace, kind=_call_kind(tool), arguments=arguments
    )


def _call_kind(tool: neutral.Tool) -> Literal["function", "custom"]:
    return "custom" if tool.kind == "custom" else "function"


def restore(request: neutral.Request, names: dict[str, neutral.Tool]) -> neutral.Request:
    """``request`` as read back from a body written with ``names`` (:attr:`~chatx.request.Mapped.names`),
    with its tools, calls and results in the shapes they had before: what the gateway does
    to the calls coming back, done to a whole request (the A → B → A measurement)."""
    tools = [names.get(tool.name, tool) for tool in request.tools]
    kinds = {}
    turns: list[neutral.Turn] = []
    for turn in request.turns:
        if isinstance(turn, neutral.ToolCall):
            turn = client_call(turn, names)
            kinds[turn.call_id] = turn.kind
        elif isinstance(turn, neutral.ToolResult) and kinds.get(turn.call_id) == "custom":
            turn = replace(turn, kind="custom")
        turns.append(turn)
    choice = request.tool_choice
    if choice is not None and choice.name in names:
        choice = replace(choice, name=names[choice.name].name)
    return replace(request, tools=tools, turns=turns, tool_choice=choice)
