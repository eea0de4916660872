"""A chat request's ``tools`` and ``tool_choice`` ⇄ the neutral request's.

Chat has functions (and OpenAI's own ``custom`` tools, which few servers take): a custom
tool from another API goes up as a function taking one string, its grammar in the
description; a namespace member as a function named ``NAMESPACE__NAME``; a built-in is
lost, as no chat server has Responses' or Anthropic's. :attr:`~chatx.request.Mapped.names`
says which function stands for which tool.
"""

from __future__ import annotations

from typing import Any

from chatx.request import Tool, ToolChoice
from chatx.request_mapping import expect, extra_lost, read_each, write_choice
from chatx.tool_shapes import as_function, flat_name

_FUNCTION_KEYS = ("name", "description", "parameters", "strict")


def read_tools(value: Any) -> list[Tool]:
    return read_each(value, "tools", "an array of tools", read_tool)


def read_tool(tool: Any, path: str) -> Tool:
    expect(tool, dict, path, "a tool object")
    kind = tool.get("type")
    inner = tool.get(kind) if isinstance(kind, str) else None
    if kind not in ("function", "custom") or not isinstance(inner, dict):
        name = kind if isinstance(kind, str) else "?"
        rest = {k: v for k, v in tool.items() if k != "type"}
        return Tool(kind="builtin", name=name, extra=rest)
    said = Tool(
        kind=kind,
        name=expect(inner.get("name"), str, f"{path}.{kind}.name", "the tool's name"),
        description=inner.get("description"),
        parameters=inner.get("parameters"),
        strict=inner.get("strict"),
    )
    if kind == "custom":
        said.grammar = inner.get("format")
    known = ("name", "description", "format") if kind == "custom" else _FUNCTION_KEYS
    said.extra = {k: v for k, v in inner.items() if k not in known}
    said.form["keys"] = [k for k in inner if k in known]
    outer = {k: v for k, v in tool.items() if k not in ("type", kind)}
    if outer:
        said.form["outer"] = outer
    return said


def write_tools(
    tools: list[Tool], same: bool, names: dict[str, Tool], lost: list[str]
) -> list[dict[str, Any]]:
    out = []
    for number, tool in enumerate(tools):
        path = f"tools[{number}]"
        if tool.kind == "builtin":
            if same:
                out.append({"type": tool.name, **tool.extra})
            else:
                lost.append(f"{path} ({tool.name})")
            continue
        out.append(write_tool(tool, same, names, lost, path))
    return out


def write_tool(
    tool: Tool, same: bool, names: dict[str, Tool], lost: list[str], path: str
) -> dict[str, Any]:
    name = flat_name(tool.name, tool.namespace)
    if tool.kind == "custom" and same:
        inner: dict[str, Any] = {"name": name, "description": tool.description}
        inner["format"] = tool.grammar
        return _shaped("custom", inner, tool)
    function = as_function(tool, names)
    inner = {"name": name, "description": function.description}
    inner["parameters"] = function.parameters
    inner["strict"] = function.strict
    if same:
        return _shaped("function", inner, tool)
    lost += extra_lost(path, tool.extra)
    inner = {k: v for k, v in inner.items() if v is not None}
    return {"type": "function", "function": inner}


def _shaped(kind: str, inner: dict[str, Any], tool: Tool) -> dict[str, Any]:
    """The tool as chat sent it: the fields it gave, in its order, its own fields too."""
    keys = tool.form.get("keys", [k for k, v in inner.items() if v is not None])
    said = {k: inner[k] for k in keys if k in inner}
    said.update(tool.extra)
    return {"type": kind, kind: said, **tool.form.get("outer", {})}


def read_tool_choice(value: Any) -> ToolChoice:
    if value in ("auto", "none", "required"):
        return ToolChoice(mode=value)
    expect(value, dict, "tool_choice", "auto, none, required or an object")
    kind = value.get("type")
    inner = value.get(kind) if isinstance(kind, str) else None
    if kind in ("function", "custom") and isinstance(inner, dict):
        name = expect(inner.get("name"), str, f"tool_choice.{kind}.name", "the tool's name")
        return ToolChoice(mode="tool", name=name)
    if kind == "allowed_tools" and isinstance(inner, dict):
        mode = inner.get("mode", "auto")
        tools = expect(inner.get("tools", []), list, "tool_choice.allowed_tools.tools", "an array")
        allowed = [_named(tool) for tool in tools]
        if mode in ("auto", "required") and all(allowed):
            return ToolChoice(mode=mode, allowed=[a for a in allowed if a])
    return ToolChoice(mode="auto", extra={"": value})


def _named(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    inner = tool.get(tool.get("type", ""))
    name = inner.get("name") if isinstance(inner, dict) else None
    return name if isinstance(name, str) else None


def write_tool_choice(
    choice: ToolChoice, same: bool, tools: list[Tool], lost: list[str]
) -> str | dict[str, Any] | None:
    return write_choice(choice, same, lost, lambda choice: _written(choice, same, tools, lost))


def _written(
    choice: ToolChoice, same: bool, tools: list[Tool], lost: list[str]
) -> str | dict[str, Any] | None:
    by_name = {t.name: t for t in tools}
    if choice.allowed is not None:
        listed = [_function(by_name.get(name), name, same) for name in choice.allowed]
        return {"type": "allowed_tools", "allowed_tools": {"mode": choice.mode, "tools": listed}}
    if choice.mode != "tool":
        return choice.mode
    tool = by_name.get(choice.name or "")
    if tool is not None and tool.kind == "builtin" and not same:
        lost.append(f"tool_choice ({choice.name})")
        return "required"
    return _function(tool, choice.name or "", same)


def _function(tool: Tool | None, name: str, same: bool) -> dict[str, Any]:
    if tool is not None:
        name = flat_name(tool.name, tool.namespace)
        if tool.kind == "custom" and same:  # OpenAI's own custom tools, read as such
            return {"type": "custom", "custom": {"name": name}}
    return {"type": "function", "function": {"name": name}}
