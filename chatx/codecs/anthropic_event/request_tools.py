"""An Anthropic request's ``tools`` and ``tool_choice`` ⇄ the neutral request's.

Anthropic's client tools are functions (``input_schema``); its server tools (web search,
code execution, memory…) are built-ins, named by their dated type. From another API a
custom tool goes up as a function of one string with its grammar in the description, a
namespace member as ``NAMESPACE__NAME`` (:attr:`~chatx.request.Mapped.names` says so),
Responses' ``web_search`` as ``web_search_20250305``; other built-ins are lost.
"""

from __future__ import annotations

from typing import Any

from chatx.request import Tool, ToolChoice
from chatx.request_mapping import expect, extra_lost, read_each, write_each
from chatx.tool_shapes import as_function, flat_name

_CLIENT = ("name", "description", "input_schema", "strict")
_WEB_SEARCH = "web_search_20250305"


def read_tools(value: Any) -> list[Tool]:
    return read_each(value, "tools", "an array of tools", read_tool)


def read_tool(tool: Any, path: str) -> Tool:
    expect(tool, dict, path, "a tool object")
    kind = tool.get("type")
    if kind not in (None, "custom"):
        rest = {k: v for k, v in tool.items() if k != "type"}
        return Tool(kind="builtin", name=str(kind), extra=rest)
    said = Tool(
        kind="function",
        name=expect(tool.get("name"), str, f"{path}.name", "the tool's name"),
        description=tool.get("description"),
        parameters=tool.get("input_schema"),
        strict=tool.get("strict"),
    )
    said.extra = {k: v for k, v in tool.items() if k not in (*_CLIENT, "type")}
    said.form["keys"] = [k for k in tool if k in (*_CLIENT, "type")]
    if kind is not None:
        said.form["type"] = kind
    return said


def write_tools(
    tools: list[Tool], same: bool, names: dict[str, Tool], lost: list[str]
) -> list[dict[str, Any]]:
    return write_each(tools, "tools", lambda tool, path: write_tool(tool, same, names, lost, path))


def write_tool(
    tool: Tool, same: bool, names: dict[str, Tool], lost: list[str], path: str
) -> dict[str, Any] | None:
    if tool.kind == "builtin":
        return _builtin(tool, same, lost, path)
    function = as_function(tool, names)
    said: dict[str, Any] = {"name": function.name, "description": function.description}
    said["input_schema"] = function.parameters
    said["strict"] = function.strict
    if same:
        said["type"] = tool.form.get("type")
        keys = tool.form.get("keys", list(said))
        return {**{k: said[k] for k in keys if k in said}, **tool.extra}
    if said["input_schema"] is None:
        said["input_schema"] = {"type": "object", "properties": {}}
    lost += extra_lost(path, {k: v for k, v in tool.extra.items() if k != "cache_control"})
    if "cache_control" in tool.extra:
        said["cache_control"] = tool.extra["cache_control"]
    return {k: v for k, v in said.items() if v is not None}


def _builtin(tool: Tool, same: bool, lost: list[str], path: str) -> dict[str, Any] | None:
    if same:
        return {"type": tool.name, **tool.extra}
    if tool.name not in ("web_search", "web_search_preview"):
        lost.append(f"{path} ({tool.name})")
        return None
    said: dict[str, Any] = {"type": _WEB_SEARCH, "name": "web_search"}
    for key, value in tool.extra.items():
        filters = value if key == "filters" and isinstance(value, dict) else {}
        if key == "user_location":
            said[key] = value
        elif set(filters) == {"allowed_domains"}:
            said["allowed_domains"] = filters["allowed_domains"]
        else:
            lost.append(f"{path}.{key}")
    return said


_MODES = {"auto": "auto", "any": "required", "none": "none", "tool": "tool"}


def read_tool_choice(value: Any) -> tuple[ToolChoice, bool | None]:
    """The choice, and whether tools may be called in parallel when it says."""
    expect(value, dict, "tool_choice", "a tool choice object")
    mode = _MODES.get(value.get("type"))
    name = value.get("name")
    rest = {
        k: v for k, v in value.items() if k not in ("type", "name", "disable_parallel_tool_use")
    }
    if mode is None or rest or (mode == "tool") != isinstance(name, str):
        return ToolChoice(mode="auto", extra={"": value}), None
    said = ToolChoice(mode=mode, name=name)  # type: ignore[arg-type]
    disable = value.get("disable_parallel_tool_use")
    if isinstance(disable, bool):
        said.form["disable"] = True
        return said, not disable
    return said, None


def write_tool_choice(
    choice: ToolChoice | None,
    parallel: bool | None,
    tools: list[Tool],
    same: bool,
    lost: list[str],
) -> dict[str, Any] | None:
    if choice is not None and "" in choice.extra:
        if same:
            return dict(choice.extra[""])
        lost.append("tool_choice")
        choice = None
    if choice is None:
        if parallel is not False:
            return None
        choice = ToolChoice(mode="auto")
    if not same:
        lost += extra_lost("tool_choice", choice.extra)
    said: dict[str, Any] = {"type": "any" if choice.mode == "required" else choice.mode}
    if choice.allowed is not None:
        lost.append("tool_choice.allowed")
    if choice.mode == "tool":
        by_name = {t.name: t for t in tools}
        tool = by_name.get(choice.name or "")
        said["name"] = flat_name(tool.name, tool.namespace) if tool else choice.name
    if parallel is not None and (parallel is False or choice.form.get("disable")):
        said["disable_parallel_tool_use"] = not parallel
    return said
