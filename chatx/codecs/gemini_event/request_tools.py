"""A Gemini request's ``tools`` and ``toolConfig`` ⇄ the neutral request's tools and tool
choice.

A tool object holds ``functionDeclarations`` (each a function: ``parametersJsonSchema``, a
JSON schema, or ``parameters``, Gemini's OpenAPI-style schema with upper-case types, read
as the JSON schema it stands for) or one built-in (``googleSearch``, ``codeExecution``,
``urlContext``…). ``googleSearch`` is the web search the other APIs have; the other
built-ins are Gemini's own. Written from another API, the functions go in one tool object
with their JSON schema as ``parametersJsonSchema``, a custom tool as a function of one
string and a namespace member as ``NAMESPACE__NAME``.

``functionCallingConfig``'s mode: ``AUTO`` is auto, ``NONE`` none, ``ANY`` required
(``allowedFunctionNames`` the tools allowed; one name alone is that tool forced).
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.gemini_event.request_contents import Keys, camel
from chatx.request import Tool, ToolChoice
from chatx.request_mapping import expect, extra_lost
from chatx.tool_shapes import as_function, flat_name

_DECLARED = ("name", "description", "parameters", "parametersJsonSchema")
_WEB_SEARCH = ("web_search", "web_search_preview", "web_search_20250305")
# Gemini's schema words that are JSON Schema's under another spelling
_SCHEMA_KEYS = {"anyOf", "minItems", "maxItems", "minLength", "maxLength", "minProperties",
                "maxProperties"}  # fmt: skip
_ORDERING = ("propertyOrdering", "property_ordering")  # the order to write keys in: no meaning


def json_schema(value: Any) -> Any:
    """Gemini's ``Schema`` (``{"type": "OBJECT", "properties": …, "nullable": true}``) as
    the JSON schema it stands for: types in lower case, ``nullable`` as a ``null`` type,
    field names in JSON Schema's spelling; the key order hint left out."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = camel(key)
        if key in _ORDERING or name == "nullable":
            continue
        if name == "type" and isinstance(item, str):
            out["type"] = item.lower()
        elif name == "properties" and isinstance(item, dict):
            out["properties"] = {k: json_schema(v) for k, v in item.items()}
        elif name in ("items", "not"):
            out[name] = json_schema(item)
        elif name == "anyOf" and isinstance(item, list):
            out["anyOf"] = [json_schema(v) for v in item]
        else:
            out[name if name in _SCHEMA_KEYS else key] = item
    if value.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


# --- reading -------------------------------------------------------------------------


def read_tools(value: Any, keys: Keys) -> list[Tool]:
    tools: list[Tool] = []
    for number, entry in enumerate(expect(value, list, "tools", "an array of tools")):
        path = f"tools[{number}]"
        expect(entry, dict, path, "a tool object")
        for key, item in entry.items():
            if camel(key) == "functionDeclarations":
                keys.get(entry, "functionDeclarations")
                listed = expect(item, list, f"{path}.{key}", "an array of declarations")
                for index, declared in enumerate(listed):
                    tool = read_function(declared, f"{path}.{key}[{index}]", keys)
                    tool.form["group"] = number
                    tools.append(tool)
            else:
                tools.append(_builtin(key, item, number))
    return tools


def read_function(value: Any, path: str, keys: Keys) -> Tool:
    expect(value, dict, path, "a function declaration")
    said = Tool(
        kind="function",
        name=expect(value.get("name"), str, f"{path}.name", "the function's name"),
        description=value.get("description"),
    )
    given = keys.get(value, "parametersJsonSchema")
    if given is not None:
        # Gemini takes upper-case types here too, and Gemini CLI sends them
        said.parameters = json_schema(given)
        if said.parameters != given:
            said.form["json"] = given
    elif value.get("parameters") is not None:
        said.parameters = json_schema(value["parameters"])
        said.form["parameters"] = value["parameters"]
    said.extra = keys.rest(value, _DECLARED)
    return said


def _builtin(key: str, value: Any, number: int) -> Tool:
    name = camel(key)
    rest = dict(value) if isinstance(value, dict) else {"": value}
    said = Tool(kind="builtin", name="web_search" if name == "googleSearch" else name, extra=rest)
    said.form = {"group": number, "key": key}
    return said


_MODES = {"AUTO": "auto", "NONE": "none", "ANY": "required"}


def read_tool_config(value: Any, keys: Keys) -> tuple[ToolChoice | None, dict[str, Any]]:
    """The tool choice, and the config's other fields (``retrievalConfig``)."""
    expect(value, dict, "toolConfig", "a tool config object")
    rest = keys.rest(value, ("functionCallingConfig",))
    config = keys.get(value, "functionCallingConfig")
    if config is None:
        return None, rest
    expect(config, dict, "toolConfig.functionCallingConfig", "a function calling config")
    mode = config.get("mode")
    allowed = keys.get(config, "allowedFunctionNames")
    extra = keys.rest(config, ("mode", "allowedFunctionNames"))
    said = _MODES.get(mode) if mode is not None else "auto"
    names_ok = allowed is None or (
        isinstance(allowed, list) and all(isinstance(n, str) for n in allowed)
    )
    if said is None or not names_ok or (allowed is not None and said != "required"):
        return ToolChoice(mode="auto", extra={"": value}), {}
    choice = ToolChoice(mode=said, extra=extra)  # type: ignore[arg-type]
    choice.form = {"mode": mode, "allowed": allowed is not None}
    if allowed is not None and len(allowed) == 1:
        choice.mode, choice.name = "tool", allowed[0]
    elif allowed is not None:
        choice.allowed = list(allowed)
    return choice, rest


# --- writing -------------------------------------------------------------------------


def write_tools(
    tools: list[Tool], same: bool, keys: Keys, names: dict[str, Tool], lost: list[str]
) -> list[dict[str, Any]]:
    """The tool objects: from the same API grouped as they came, else the functions in
    one and each built-in in its own."""
    groups: dict[Any, dict[str, Any]] = {}
    for number, tool in enumerate(tools):
        path = f"tools[{number}]"
        group = tool.form.get("group") if same else ("builtin", number)
        if tool.kind == "builtin":
            said = _write_builtin(tool, same, lost, path)
            if said is not None:
                groups.setdefault(group, {}).update(said)
            continue
        declared = write_function(tool, same, keys, names, lost, path)
        if not same:
            group = "functions"
        entry = groups.setdefault(group, {})
        entry.setdefault(keys.name("functionDeclarations"), []).append(declared)
    return list(groups.values())


def write_function(
    tool: Tool, same: bool, keys: Keys, names: dict[str, Tool], lost: list[str], path: str
) -> dict[str, Any]:
    function = as_function(tool, names)
    said: dict[str, Any] = {"name": function.name}
    if function.description is not None:
        said["description"] = function.description
    parameters = function.parameters
    original = tool.form.get("parameters") if same else None
    given = tool.form.get("json") if same else None
    if original is not None and json_schema(original) == parameters:
        said["parameters"] = original
    elif given is not None and json_schema(given) == parameters:
        said[keys.name("parametersJsonSchema")] = given
    elif parameters is not None:
        said[keys.name("parametersJsonSchema")] = parameters
    if same:
        said.update(tool.extra)
    else:
        if tool.strict:
            lost.append(f"{path}.strict")
        lost += extra_lost(path, tool.extra)
    return said


def _write_builtin(tool: Tool, same: bool, lost: list[str], path: str) -> dict[str, Any] | None:
    if same:
        value = tool.extra[""] if "" in tool.extra else dict(tool.extra)
        return {tool.form["key"]: value}
    if tool.name not in _WEB_SEARCH:
        lost.append(f"{path} ({tool.name})")
        return None
    lost += [f"{path}.{key}" for key in tool.extra if key != "name"]
    return {"googleSearch": {}}


def write_tool_config(
    choice: ToolChoice | None,
    parallel: bool | None,
    tools: list[Tool],
    same: bool,
    keys: Keys,
    lost: list[str],
) -> dict[str, Any] | None:
    if parallel is False and not same:
        lost.append("parallel_tool_calls (false)")
    if choice is None:
        return None
    if "" in choice.extra:
        if same:
            return dict(choice.extra[""])
        lost.append("tool_choice")
        return None
    config: dict[str, Any] = {}
    if not same or choice.form.get("mode") is not None:
        config["mode"] = {"auto": "AUTO", "none": "NONE"}.get(choice.mode, "ANY")
    names = choice.allowed
    if choice.mode == "tool":
        tool = next((t for t in tools if t.name == choice.name), None)
        names = [flat_name(tool.name, tool.namespace) if tool else str(choice.name)]
    if names is not None:
        config[keys.name("allowedFunctionNames")] = names
    if same:
        config.update(choice.extra)
    else:
        lost += extra_lost("tool_choice", choice.extra)
    return {keys.name("functionCallingConfig"): config}
