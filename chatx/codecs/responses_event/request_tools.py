"""A Responses request's ``tools`` and ``tool_choice`` ⇄ the neutral request's.

Responses has every kind the neutral request names: functions, custom (freeform) tools
with their grammar, ``namespace`` tool sets (their members flattened, each keeping its
namespace, and grouped back), and built-ins. Anthropic's web search goes up as Responses'
``web_search``; other APIs' built-ins are lost.
"""

from __future__ import annotations

from typing import Any

from chatx.request import Tool, ToolChoice
from chatx.request_mapping import expect, extra_lost, write_choice

_FUNCTION = ("type", "name", "description", "parameters", "strict")
_CUSTOM = ("type", "name", "description", "format")


def read_tools(value: Any, sets: dict[str, dict[str, Any]]) -> list[Tool]:
    tools: list[Tool] = []
    for number, tool in enumerate(expect(value, list, "tools", "an array of tools")):
        tools += read_tool(tool, f"tools[{number}]", None, sets)
    return tools


def read_tool(
    tool: Any, path: str, namespace: str | None, sets: dict[str, dict[str, Any]]
) -> list[Tool]:
    expect(tool, dict, path, "a tool object")
    kind = tool.get("type")
    if kind == "namespace" and namespace is None:
        name = expect(tool.get("name"), str, f"{path}.name", "the namespace's name")
        sets[name] = {k: v for k, v in tool.items() if k not in ("type", "name", "tools")}
        inner = expect(tool.get("tools"), list, f"{path}.tools", "an array of tools")
        return [
            t for n, i in enumerate(inner) for t in read_tool(i, f"{path}.tools[{n}]", name, sets)
        ]
    if kind not in ("function", "custom"):
        return [
            Tool(kind="builtin", name=str(kind), namespace=namespace, extra=_rest(tool, ("type",)))
        ]
    said = Tool(
        kind=kind,
        name=expect(tool.get("name"), str, f"{path}.name", "the tool's name"),
        description=tool.get("description"),
        namespace=namespace,
    )
    if kind == "function":
        said.parameters = tool.get("parameters")
        said.strict = tool.get("strict")
    else:
        said.grammar = tool.get("format")
    named = _FUNCTION if kind == "function" else _CUSTOM
    said.extra = _rest(tool, named)
    said.form["keys"] = [k for k in tool if k in named]
    return [said]


def _rest(value: dict[str, Any], named: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k not in named}


def write_tools(
    tools: list[Tool], sets: dict[str, dict[str, Any]], same: bool, lost: list[str]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    open_set: dict[str, Any] | None = None
    for number, tool in enumerate(tools):
        said = write_tool(tool, same, lost, f"tools[{number}]")
        if said is None:
            continue
        if tool.namespace is None:
            out.append(said)
            open_set = None
        elif open_set is not None and open_set["name"] == tool.namespace:
            open_set["tools"].append(said)
        else:
            open_set = {"type": "namespace", "name": tool.namespace}
            open_set.update(sets.get(tool.namespace, {}))
            open_set["tools"] = [said]
            out.append(open_set)
    return out


def write_tool(tool: Tool, same: bool, lost: list[str], path: str) -> dict[str, Any] | None:
    if tool.kind == "builtin":
        return _builtin(tool, same, lost, path)
    said: dict[str, Any] = {"type": tool.kind, "name": tool.name, "description": tool.description}
    if tool.kind == "function":
        said["parameters"] = tool.parameters
        # Responses makes a function strict unless told: a schema written for chat or
        # Anthropic (optional fields, no additionalProperties) would then be refused.
        said["strict"] = tool.strict if tool.strict is not None or same else False
        if said["parameters"] is None and not same:
            said["parameters"] = {"type": "object", "properties": {}}
    else:
        said["format"] = tool.grammar
    if same:
        keys = tool.form.get("keys", list(said))
        said = {k: said[k] for k in keys if k in said}
        said.update(tool.extra)
        return said
    lost += extra_lost(path, tool.extra)
    return {k: v for k, v in said.items() if v is not None or k == "parameters"}


# Anthropic's web search tools and what Responses' web_search calls the same settings.
_WEB_SEARCH = ("web_search_20250305", "web_search_20260209", "web_search")  # Gemini's googleSearch


def _builtin(tool: Tool, same: bool, lost: list[str], path: str) -> dict[str, Any] | None:
    if same:
        return {"type": tool.name, **tool.extra}
    if tool.name not in _WEB_SEARCH:
        lost.append(f"{path} ({tool.name})")
        return None
    said: dict[str, Any] = {"type": "web_search"}
    for key, value in tool.extra.items():
        if key == "user_location":
            said[key] = value
        elif key == "allowed_domains":
            said["filters"] = {"allowed_domains": value}
        elif key != "name":
            lost.append(f"{path}.{key}")
    return said


def read_tool_choice(value: Any) -> ToolChoice:
    if value in ("auto", "none", "required"):
        return ToolChoice(mode=value)
    expect(value, dict, "tool_choice", "auto, none, required or an object")
    kind = value.get("type")
    if kind in ("function", "custom") and set(value) == {"type", "name"}:
        return ToolChoice(
            mode="tool", name=expect(value["name"], str, "tool_choice.name", "a name")
        )
    if kind == "allowed_tools" and value.get("mode") in ("auto", "required"):
        listed = value.get("tools", [])
        names = [
            t["name"] for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]
        if len(names) == len(listed) and set(value) <= {"type", "mode", "tools"}:
            return ToolChoice(mode=value["mode"], allowed=names)
    if isinstance(kind, str) and set(value) == {"type"}:  # a built-in: web_search…
        return ToolChoice(mode="tool", name=kind, form={"builtin": True})
    return ToolChoice(mode="auto", extra={"": value})


def write_tool_choice(
    choice: ToolChoice, tools: list[Tool], same: bool, lost: list[str]
) -> str | dict[str, Any] | None:
    return write_choice(choice, same, lost, lambda choice: _written(choice, tools, same, lost))


def _written(
    choice: ToolChoice, tools: list[Tool], same: bool, lost: list[str]
) -> str | dict[str, Any] | None:
    by_name = {t.name: t for t in tools}
    if choice.allowed is not None:
        listed = [_choice(by_name.get(n), n) for n in choice.allowed]
        return {"type": "allowed_tools", "mode": choice.mode, "tools": listed}
    if choice.mode != "tool":
        return choice.mode
    tool = by_name.get(choice.name or "")
    if choice.form.get("builtin") and same:
        return {"type": choice.name}
    if tool is not None and tool.kind == "builtin":
        if tool.name in _WEB_SEARCH:
            return {"type": "web_search"}
        lost.append(f"tool_choice ({choice.name})")
        return "required"
    return _choice(tool, choice.name or "")


def _choice(tool: Tool | None, name: str) -> dict[str, Any]:
    kind = "custom" if tool is not None and tool.kind == "custom" else "function"
    return {"type": kind, "name": name}
