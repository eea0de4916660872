"""A Gemini ``GenerateContentRequest`` body ⇄ the neutral request (:mod:`chatx.request`).

``read`` and ``write`` compose the concepts: contents and the system instruction
(read in :mod:`.request_contents`, written in :mod:`.request_contents_write`), tools and
the tool config (:mod:`.request_tools`), and the generation config here. The model and whether the answer streams are not in the body:
the path says them (``/v1beta/models/{model}:streamGenerateContent``), so the gateway sets
:attr:`~chatx.request.Request.model` and ``stream`` from the client's path and puts the
upstream's in the path it posts to.

``generationConfig``: ``temperature``, ``topP``, ``maxOutputTokens``, ``stopSequences`` and
``candidateCount`` (``n``) have names in the neutral request; ``topK``, ``seed``,
``presencePenalty``, ``frequencyPenalty``, ``responseLogprobs`` and ``logprobs`` go where
another API has the same setting (Anthropic's ``top_k``, chat's ``seed``…).
``responseMimeType: application/json`` with ``responseJsonSchema`` (or ``responseSchema``)
is a JSON-schema response format, without a schema a JSON object. ``thinkingConfig``:
``thinkingBudget`` is the reasoning budget (0: no thinking), ``thinkingLevel`` the effort,
``includeThoughts`` a summary asked for. ``safetySettings``, ``cachedContent`` and the
rest Gemini alone has are said lost elsewhere.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.gemini_event.request_contents import ContentsReader, Keys, read_instructions
from chatx.codecs.gemini_event.request_contents_write import ContentsWriter
from chatx.codecs.gemini_event.request_tools import (
    json_schema,
    read_tool_config,
    read_tools,
    write_tool_config,
    write_tools,
)
from chatx.request import Mapped, Request, Tool
from chatx.request_mapping import effort_as_budget, expect, extra_lost, finish_body, read_body

API = "gemini"
_NAMED = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")
# generationConfig's settings another API has under a name of its own (the neutral
# request's extra holds them by that name).
_SHARED = {
    "topK": "top_k",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
    "responseLogprobs": "logprobs",
    "logprobs": "top_logprobs",
}
_SETTINGS = ("temperature", "topP", "maxOutputTokens", "stopSequences", "candidateCount")
_FORMAT = ("responseMimeType", "responseSchema", "responseJsonSchema")
_JSON = "application/json"
_CONFIG = "generationConfig."  # the prefix of its other fields in the request's extra


def read(body: Any) -> Mapped:
    """A Gemini generateContent request body as the neutral request."""
    request = read_body(body, API, "a Gemini generateContent request object")
    keys = Keys()
    request.extra = keys.rest(body, _NAMED)
    request.extra.pop("model", None)
    instruction = keys.get(body, "systemInstruction")
    if instruction is not None:
        read_instructions(instruction, keys, request)
    contents = keys.get(body, "contents")
    request.turns = ContentsReader(keys).read([] if contents is None else contents)
    if keys.get(body, "tools") is not None:
        request.tools = read_tools(keys.get(body, "tools"), keys)
    if keys.get(body, "toolConfig") is not None:
        request.tool_choice, rest = read_tool_config(keys.get(body, "toolConfig"), keys)
        request.extra.update({f"toolConfig.{k}": v for k, v in rest.items()})
    config = keys.get(body, "generationConfig")
    if config is not None:
        _read_config(expect(config, dict, "generationConfig", "an object"), keys, request)
    request.form["spelled"] = keys.seen
    return Mapped(body=request)


def _read_config(config: dict[str, Any], keys: Keys, request: Request) -> None:
    request.form["config"] = list(config)
    request.temperature = keys.get(config, "temperature")
    request.top_p = keys.get(config, "topP")
    request.max_tokens = keys.get(config, "maxOutputTokens")
    request.n = keys.get(config, "candidateCount")
    stop = keys.get(config, "stopSequences")
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        request.stop = list(stop)
    elif stop is not None:
        request.extra[_CONFIG + "stopSequences"] = stop
    for name, shared in _SHARED.items():
        if keys.has(config, name):
            request.extra[shared] = keys.get(config, name)
    _read_format(config, keys, request)
    thinking = keys.get(config, "thinkingConfig")
    if thinking is not None:
        _read_thinking(expect(thinking, dict, "thinkingConfig", "an object"), keys, request)
    rest = keys.rest(config, (*_SETTINGS, *_SHARED, *_FORMAT, "thinkingConfig"))
    request.extra.update({_CONFIG + k: v for k, v in rest.items()})


def _read_format(config: dict[str, Any], keys: Keys, request: Request) -> None:
    mime = keys.get(config, "responseMimeType")
    given = keys.get(config, "responseJsonSchema")
    schema = keys.get(config, "responseSchema")
    said = {"mime": mime, "json": given, "schema": schema}
    if mime == _JSON and (given is None or schema is None):
        if given is not None or schema is not None:
            # upper-case types in a JSON schema too (Gemini CLI's), as Gemini reads them
            value = json_schema(given if given is not None else schema)
            request.response_format = {"type": "json_schema", "schema": value}
        else:
            request.response_format = {"type": "json_object"}
        request.form["format"] = said
    elif mime == "text/plain" and given is None and schema is None:
        request.response_format = {"type": "text"}
        request.form["format"] = said
    else:  # an enum (text/x.enum), both schemas: Gemini's alone
        for name in _FORMAT:
            if keys.has(config, name):
                request.extra[_CONFIG + name] = keys.get(config, name)


def _read_thinking(thinking: dict[str, Any], keys: Keys, request: Request) -> None:
    budget = keys.get(thinking, "thinkingBudget")
    level = keys.get(thinking, "thinkingLevel")
    shown = keys.get(thinking, "includeThoughts")
    request.form["thinking"] = list(thinking)
    if isinstance(budget, int) and budget > 0:
        request.reasoning_budget = budget
    elif budget == 0:
        request.reasoning_effort = "none"
    elif budget is not None:  # -1: the model decides, which no other API can ask
        request.extra[_CONFIG + "thinkingConfig.thinkingBudget"] = budget
    if isinstance(level, str):
        request.reasoning_effort = level.lower()
        request.form["level"] = level
    if shown is True:
        request.reasoning_summary = "auto"
    elif shown is not None:
        request.form["shown"] = shown
    for key, value in keys.rest(
        thinking, ("thinkingBudget", "thinkingLevel", "includeThoughts")
    ).items():
        request.extra[f"{_CONFIG}thinkingConfig.{key}"] = value


# --- writing -------------------------------------------------------------------------


def write(request: Request) -> Mapped:
    """The neutral request as a Gemini generateContent request body (no model and no
    stream in it: the path says them)."""
    same = request.api == API
    lost: list[str] = []
    names: dict[str, Tool] = {}
    keys = Keys(dict(request.form.get("spelled", {})) if same else None)
    body: dict[str, Any] = {}
    if same and "model" in request.form.get("keys", ()):
        body["model"] = request.model  # the path says it; a body may too
    tools = write_tools(request.tools, same, keys, names, lost)
    writer = ContentsWriter(request, keys, names, lost)
    start = [0]
    body[keys.name("systemInstruction")] = writer.instructions(request, start)
    body["contents"] = writer.contents(request.turns, start[0])
    body["tools"] = tools or None
    config = write_tool_config(
        request.tool_choice, request.parallel_tool_calls, request.tools, same, keys, lost
    )
    nested = {
        k[len("toolConfig.") :]: v for k, v in request.extra.items() if k.startswith("toolConfig.")
    }
    if nested and same:
        config = {**(config or {}), **nested}
    body[keys.name("toolConfig")] = config
    body[keys.name("generationConfig")] = _write_config(request, keys, lost)
    for key, value in request.extra.items():
        if same and not key.startswith((_CONFIG, "toolConfig.")) and key not in _SHARED.values():
            body[key] = value
    if not same:
        lost += _not_in_gemini(request)
    return Mapped(body=finish_body(body, request, API), lost=lost, names=names)


def _write_config(request: Request, keys: Keys, lost: list[str]) -> dict[str, Any] | None:
    config: dict[str, Any] = {}
    for name, value in (
        ("temperature", request.temperature),
        ("topP", request.top_p),
        ("maxOutputTokens", request.max_tokens),
        ("stopSequences", request.stop or None),
        ("candidateCount", request.n),
    ):
        if value is not None:
            config[keys.name(name)] = value
    for name, shared in _SHARED.items():
        if shared in request.extra:
            config[keys.name(name)] = request.extra[shared]
    _write_format(request, config, keys, lost)
    thinking = _write_thinking(request, keys, lost)
    if thinking is not None:
        config[keys.name("thinkingConfig")] = thinking
    _own_fields(config, request, _CONFIG, lost, inner=_CONFIG + "thinkingConfig.")
    return _in_order(config, request, "config")


def _write_format(request: Request, config: dict[str, Any], keys: Keys, lost: list[str]) -> None:
    value = request.response_format
    said = request.form.get("format") if request.api == API else None
    if said is not None:
        if said["mime"] is not None:
            config[keys.name("responseMimeType")] = said["mime"]
        schema = (value or {}).get("schema")
        if said["schema"] is not None and json_schema(said["schema"]) == schema:
            config[keys.name("responseSchema")] = said["schema"]
        elif said["json"] is not None and json_schema(said["json"]) == schema:
            config[keys.name("responseJsonSchema")] = said["json"]
        elif schema is not None:
            config[keys.name("responseJsonSchema")] = schema
        return
    if value is None:
        return
    kind = value.get("type")
    if kind == "json_schema" and isinstance(value.get("schema"), dict):
        config["responseMimeType"] = _JSON
        config["responseJsonSchema"] = value["schema"]
        lost += [f"response_format.{k}" for k in ("description", "strict") if value.get(k)]
    elif kind == "json_object":
        config["responseMimeType"] = _JSON
    elif kind == "text":
        config["responseMimeType"] = "text/plain"
    else:
        lost.append(f"response_format ({kind})")


def _write_thinking(request: Request, keys: Keys, lost: list[str]) -> dict[str, Any] | None:
    same = request.api == API
    said: dict[str, Any] = {}
    effort, budget = request.reasoning_effort, request.reasoning_budget
    if same and "level" in request.form:
        said[keys.name("thinkingLevel")] = request.form["level"]
    elif effort == "none":
        said[keys.name("thinkingBudget")] = 0
    elif budget is None and effort is not None:
        budget = effort_as_budget(effort, lost)
    if budget is not None:
        said[keys.name("thinkingBudget")] = budget
    asked = request.reasoning_summary not in (None, "none")
    if asked or (not same and request.reasoning_budget is not None):
        said[keys.name("includeThoughts")] = True  # thinking shown, as the client asked
    elif same and "shown" in request.form:
        said[keys.name("includeThoughts")] = request.form["shown"]
    _own_fields(said, request, _CONFIG + "thinkingConfig.", lost)
    return _in_order(said, request, "thinking")


def _own_fields(
    said: dict[str, Any], request: Request, prefix: str, lost: list[str], inner: str = ""
) -> None:
    """The fields of a Gemini object the request keeps in ``extra`` under ``prefix``
    (``generationConfig.``) back into it when Gemini wrote the request, else said lost;
    those under ``inner``, a nested object's prefix, are left to that object's writer."""
    for key, value in request.extra.items():
        if not key.startswith(prefix) or inner and key.startswith(inner):
            continue
        if request.api == API:
            said[key[len(prefix) :]] = value
        else:
            lost.append(key)


def _in_order(said: dict[str, Any], request: Request, form: str) -> dict[str, Any] | None:
    """An object written, in the order of its keys as Gemini sent it (``form``), those it
    did not send after; None when it says nothing."""
    if request.api == API and form in request.form:
        return {k: said[k] for k in request.form[form] if k in said} | said
    return said or None


def _not_in_gemini(request: Request) -> list[str]:
    """What the neutral request holds that Gemini has no field for."""
    lost = []
    for name, value in (
        ("user", request.user),
        ("metadata", request.metadata),
        ("verbosity", request.verbosity),
        ("store", request.store),
        ("previous_response_id", request.previous_response_id),
    ):
        if value is not None:
            said = isinstance(value, str | int) and len(str(value)) <= 24
            lost.append(f"{name} ({value})" if said else name)
    if request.reasoning_summary not in (None, "auto", "none"):
        lost.append(f"reasoning_summary ({request.reasoning_summary}, sent as includeThoughts)")
    for key in request.extra:
        if key not in _SHARED.values() and not key.startswith(_CONFIG):
            lost.append(key)
    for name, fields in request.tool_sets.items():
        lost += extra_lost(f"tool_sets.{name}", fields)
    return lost
