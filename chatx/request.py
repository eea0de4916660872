"""The neutral request: what every API's request body says, in one vocabulary.

A format's package maps its API's request body to a :class:`Request` and back
(``<format>/request.py``, named by the descriptor's ``requests``). The gateway
(``chatx proxy --upstream-api``) reads a client's body with the client API's mapping and
writes the upstream's body with the upstream API's::

    client body (API A) ──A.requests.read──▶ Request ──B.requests.write──▶ upstream body (API B)

The history is a flat list of :data:`Turn` items in the order the conversation had them,
as the Responses API lists its input items: an assistant message that called two tools is
a :class:`Message` then two :class:`ToolCall`\\ s; APIs that nest them (a chat assistant
message's ``tool_calls``, an Anthropic assistant turn's content blocks) group adjacent
items back when writing. Tool calls and their results pair by ``call_id``.

Every class keeps ``extra``: the source fields the request has no name for (a content
block's ``cache_control``, OpenRouter's ``provider``). The same API writes them back, so a
body read and written by one API keeps its JSON values; another API's writer says them
lost, as the stream encoders do with an event's ``extra``. ``form`` is different: how the
source spelled what has a name here where its API gave a choice (a message's ``type`` left
out, ``max_completion_tokens`` for ``max_tokens``); only the same API's writer reads it, and
no other writer says it lost, for it means nothing.

A body read and written by the same API (:attr:`Request.api`) gives back its JSON values.
Written into another API, a tool that API has no shape for is reshaped (a custom tool
becomes a function taking one string, a namespace member a function named
``NAMESPACE__NAME``): :attr:`Mapped.names` says which upstream name stands for which of the
client's tools, for the gateway to put the model's calls back in the client's shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

from chatx.errors import InputError

PartKind = Literal["text", "image", "file", "audio", "other"]
Role = Literal["system", "developer", "user", "assistant"]
ToolKind = Literal["function", "custom", "builtin"]
T = TypeVar("T")


@dataclass(kw_only=True, slots=True)
class Part:
    """One piece of a message's content."""

    kind: PartKind
    """``text``, or media: ``image``, ``file`` (a document), ``audio``; ``other``: a part
    only the source API knows (a chat ``refusal``), whole in :attr:`extra`."""
    text: str | None = None
    """The text of a text part."""
    url: str | None = None
    """Media by address: an ``https:`` URL, or a ``data:`` URL as chat and Responses take
    inline images."""
    data: str | None = None
    """Media inline, base64, as Anthropic's ``source.data`` holds it (with ``media_type``)."""
    media_type: str | None = None
    """``image/png``, ``application/pdf``…: what ``data`` or a file is."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here (``cache_control``, ``detail``, a file's name)."""
    plain: bool = False
    """The content was this one text as a plain string (``"content": "hi"``), the shorthand
    chat, Responses and Anthropic share; a writer whose API has it writes it so again."""
    form: dict[str, Any] = field(default_factory=dict)
    """How the source API spelled it where it had a choice, for that API's writer only."""


@dataclass(kw_only=True, slots=True)
class Message:
    """A turn of text (and media) from one role."""

    role: Role
    """Who says it. ``system`` and ``developer`` turns inside the history stay where they
    are; the request's standing instructions are :attr:`Request.instructions`."""
    parts: list[Part]
    """Its content, in order. A plain string content is one text part."""
    name: str | None = None
    """Chat's participant ``name``."""
    id: str | None = None
    """The item's id where the API gives one (a Responses input message's ``id``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here."""
    joined: bool | None = None
    """``True``: it sat in the same source message as the turn before it (a chat assistant
    message's content, reasoning and ``tool_calls``; an Anthropic turn's blocks);
    ``False``: the source began a message here; ``None``: the source has no messages
    around it (a Responses item), and an API that nests groups it as it must."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class ToolCall:
    """A call the assistant made, sent back as history."""

    call_id: str
    """What pairs the call with its :class:`ToolResult`."""
    name: str
    """The tool's name, as the tools list names it (without its namespace)."""
    arguments: str
    """A function call's arguments as JSON text, exactly as sent; a custom tool's raw
    input text, never JSON-wrapped."""
    kind: Literal["function", "custom"] = "function"
    """``custom``: a freeform tool (Codex's ``apply_patch``), its input plain text."""
    namespace: str | None = None
    """The tool set the tool belongs to (Responses' ``namespace`` tools), if any."""
    id: str | None = None
    """The item's own id where the API has one apart from ``call_id`` (``fc_…``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here (a Responses item's ``status``)."""
    joined: bool | None = None
    """As :attr:`Message.joined`."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class ToolResult:
    """What a tool returned, for the call with ``call_id``."""

    call_id: str
    """The call this answers."""
    parts: list[Part]
    """The output: one text part for a plain string, or content parts (Anthropic's
    ``tool_result`` content list, a Responses output list)."""
    kind: Literal["function", "custom"] = "function"
    """Whether it answers a function or a custom tool's call."""
    is_error: bool | None = None
    """Anthropic's ``is_error``; ``None`` where the API cannot say."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here."""
    joined: bool | None = None
    """As :attr:`Message.joined`."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class Reasoning:
    """The model's reasoning from an earlier turn, sent back."""

    text: str = ""
    """What it showed: a thinking block's text, a reasoning item's summary or text (its
    pieces joined by a blank line), a chat message's ``reasoning_content``."""
    signature: str | None = None
    """Anthropic's thinking ``signature`` (Gemini's ``thoughtSignature``): proof the text
    is the model's own, which only the API that made it checks."""
    encrypted: str | None = None
    """Reasoning the client cannot read: a Responses reasoning item's
    ``encrypted_content``, an Anthropic ``redacted_thinking`` block's ``data``."""
    id: str | None = None
    """The reasoning item's id (``rs_…``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here."""
    joined: bool | None = None
    """As :attr:`Message.joined`."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class Native:
    """An item only the source API has words for (a Responses ``web_search_call`` or
    ``compaction`` item, an Anthropic ``server_tool_use`` block): the same API writes it
    back as it came, every other says it lost."""

    kind: str
    """The item's type, for the message that says it lost."""
    value: dict[str, Any]
    """The item as the source sent it."""
    role: Role | None = None
    """The role of the message it sat in, where the API nests items in messages."""
    joined: bool | None = None
    """As :attr:`Message.joined`."""


Turn = Message | ToolCall | ToolResult | Reasoning | Native


@dataclass(kw_only=True, slots=True)
class Tool:
    """A tool the model may call."""

    kind: ToolKind
    """``function`` (a JSON-schema tool), ``custom`` (freeform text input, with an
    optional grammar) or ``builtin`` (a provider's own: web search, code execution…)."""
    name: str
    """The tool's name; for a built-in, its type (``web_search``,
    ``web_search_20250305``)."""
    description: str | None = None
    """What the model is told the tool does."""
    parameters: dict[str, Any] | None = None
    """A function's JSON schema."""
    strict: bool | None = None
    """Whether the arguments must follow the schema exactly."""
    grammar: dict[str, Any] | None = None
    """A custom tool's ``format`` (``{"type": "grammar", "syntax": "lark", "definition": …}``)
    as sent; ``None`` for free text."""
    namespace: str | None = None
    """The tool set it came in (Responses' ``{"type": "namespace", "tools": […]}``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here (a built-in's own settings, ``cache_control``)."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class ToolChoice:
    """Whether and which tool the model must call."""

    mode: Literal["auto", "none", "required", "tool"]
    """``tool``: the one named in :attr:`name`."""
    name: str | None = None
    """The tool that must be called, for mode ``tool``: a function's or custom tool's name,
    a built-in's type."""
    allowed: list[str] | None = None
    """The tools the model may choose among (``allowed_tools``), by name; ``None``: all."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Source fields with no name here; under ``""`` a choice of a shape the request has
    no words for, whole."""
    form: dict[str, Any] = field(default_factory=dict)
    """As :attr:`Part.form`."""


@dataclass(kw_only=True, slots=True)
class Request:
    """One request, in no API's shape."""

    api: str | None = None
    """The API the body was read from (``chat``, ``responses``, ``anthropic``,
    ``llama-stack``): its own writer puts back every field; another writes what its API
    has a place for and says the rest lost."""
    model: str | None = None
    """The model asked for (Llama Stack's ``model_id``)."""
    instructions: list[Part] = field(default_factory=list)
    """Standing instructions: Responses' ``instructions``, Anthropic's ``system`` (its
    blocks, with their ``cache_control``), the system messages a chat request opens with."""
    turns: list[Turn] = field(default_factory=list)
    """The conversation so far, in order."""
    tools: list[Tool] = field(default_factory=list)
    """The tools offered, namespaces flattened (each tool keeps its namespace)."""
    tool_sets: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each namespace's own fields but its tools (its ``description``), by name."""
    tool_choice: ToolChoice | None = None
    """The API's tool choice; ``None`` where the body has none."""
    parallel_tool_calls: bool | None = None
    """Whether several calls may come in one turn."""
    response_format: dict[str, Any] | None = None
    """Structured output, as the Responses API's ``text.format`` says it
    (``{"type": "json_schema", "name", "schema", "strict"}`` or ``{"type": "json_object"}``)."""
    reasoning_effort: str | None = None
    """``minimal``/``low``/``medium``/``high``/``xhigh``… as asked."""
    reasoning_budget: int | None = None
    """Anthropic's ``thinking.budget_tokens``: the most tokens to think with."""
    reasoning_summary: str | None = None
    """Responses' ``reasoning.summary`` (``auto``, ``concise``, ``detailed``)."""
    verbosity: str | None = None
    """How long the answer should be (chat's ``verbosity``, Responses' ``text.verbosity``)."""
    max_tokens: int | None = None
    """The most output tokens (``max_output_tokens``, ``max_completion_tokens``,
    ``max_tokens``)."""
    stop: list[str] = field(default_factory=list)
    """Stop sequences."""
    temperature: float | None = None
    """Sampling temperature."""
    top_p: float | None = None
    """Nucleus sampling."""
    n: int | None = None
    """How many choices to make (chat only)."""
    user: str | None = None
    """Who the end user is (chat's and Responses' ``user``, Anthropic's
    ``metadata.user_id``)."""
    metadata: dict[str, Any] | None = None
    """The request's own ``metadata``, as sent."""
    stream: bool = False
    """Whether the answer streams."""
    include_usage: bool | None = None
    """Chat's ``stream_options.include_usage``."""
    store: bool | None = None
    """Responses' ``store``: whether the server keeps the response."""
    previous_response_id: str | None = None
    """Responses' ``previous_response_id``: the history lives on the server."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level source fields with no name here (``seed``, ``prompt_cache_key``,
    OpenRouter's ``provider``). Another API's writer sends those its own API also has
    (``seed`` from chat to Llama Stack) and says the rest lost."""
    form: dict[str, Any] = field(default_factory=dict)
    """How the source API spelled the body where it had a choice (its top-level keys in
    order, ``stop`` as one string), for that API's writer only."""


@dataclass(kw_only=True, slots=True)
class Mapped:
    """A body written or read, and what had no place in it."""

    body: Any
    """The request body (a JSON value) or the :class:`Request`."""
    lost: list[str] = field(default_factory=list)
    """Paths of what the target could not hold (``tools[2] (web_search)``,
    ``turns[3].encrypted``), said as ``lost:`` and in ``X-Chatx-Lost``."""
    names: dict[str, Tool] = field(default_factory=dict)
    """Written only: each tool the body offers under another shape or name than the
    request's, by the name the body gives it, mapped to the request's tool. A custom tool
    written as a function (its input the one string argument ``input``) and a namespace
    member written as ``NAMESPACE__NAME`` are here: a call of that name coming back is a
    call of that tool (:func:`client_call`)."""


NAMESPACE_SEP = "__"
"""Between a namespace and its member's name where an API has no namespaces."""
CUSTOM_INPUT = "input"
"""The one string argument a custom tool takes where an API has functions only."""


def flat_name(name: str, namespace: str | None) -> str:
    """The name a namespace member goes under where the API has no namespaces."""
    return f"{namespace}{NAMESPACE_SEP}{name}" if namespace else name


def custom_function(tool: Tool) -> tuple[str, dict[str, Any]]:
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


def client_call(call: ToolCall, names: dict[str, Tool]) -> ToolCall:
    """A call as an upstream made it (a function named as :attr:`Mapped.names` says) put
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


def _call_kind(tool: Tool) -> Literal["function", "custom"]:
    return "custom" if tool.kind == "custom" else "function"


def restore(request: Request, names: dict[str, Tool]) -> Request:
    """``request`` as read back from a body written with ``names`` (:attr:`Mapped.names`),
    with its tools, calls and results in the shapes they had before: what the gateway does
    to the calls coming back, done to a whole request (the A → B → A measurement)."""
    tools = [names.get(tool.name, tool) for tool in request.tools]
    kinds = {}
    turns: list[Turn] = []
    for turn in request.turns:
        if isinstance(turn, ToolCall):
            turn = client_call(turn, names)
            kinds[turn.call_id] = turn.kind
        elif isinstance(turn, ToolResult) and kinds.get(turn.call_id) == "custom":
            turn = replace(turn, kind="custom")
        turns.append(turn)
    choice = request.tool_choice
    if choice is not None and choice.name in names:
        choice = replace(choice, name=names[choice.name].name)
    return replace(request, tools=tools, turns=turns, tool_choice=choice)


def messages(turns: list[Turn], side: Callable[[Turn], str]) -> list[list[tuple[int, Turn]]]:
    """``turns`` grouped into the messages of an API that nests them (chat, Anthropic),
    each turn with its index: a turn joins the message before it when the source had it
    there (``joined``), or, when the source says nothing, when it is on the same side
    (``side`` says which: ``user``, ``assistant``…) and is no message of text after
    another (two texts from one role stay two messages, as they came)."""
    grouped: list[list[tuple[int, Turn]]] = []
    for index, turn in enumerate(turns):
        if grouped and _joins(turn, grouped[-1], side):
            grouped[-1].append((index, turn))
        else:
            grouped.append([(index, turn)])
    return grouped


def _joins(turn: Turn, group: list[tuple[int, Turn]], side: Callable[[Turn], str]) -> bool:
    if turn.joined is not None:
        return turn.joined and side(turn) == side(group[-1][1])
    if side(turn) != side(group[-1][1]):
        return False
    if isinstance(turn, Message):  # a text joins only a message that has none yet
        return not any(isinstance(t, Message) for _, t in group) and not any(
            isinstance(t, ToolCall | ToolResult) for _, t in group
        )
    return True


class TurnWriter(Protocol):
    """A writer of one API's history, turn by turn, as :func:`write_turn` hands it the
    turns: a method for each kind, given the turn and its path (``turns[3]``). ``native``
    writes an item only the source API has words for back into that API, or says it lost."""

    def message(self, turn: Message, path: str) -> None: ...
    def reasoning(self, turn: Reasoning, path: str) -> None: ...
    def call(self, turn: ToolCall, path: str) -> None: ...
    def result(self, turn: ToolResult, path: str) -> None: ...
    def native(self, turn: Native, path: str) -> None: ...


def write_turn(writer: TurnWriter, index: int, turn: Turn) -> None:
    """The ``index``-th turn handed to ``writer``'s method for its kind."""
    path = f"turns[{index}]"
    if isinstance(turn, Message):
        writer.message(turn, path)
    elif isinstance(turn, Reasoning):
        writer.reasoning(turn, path)
    elif isinstance(turn, ToolCall):
        writer.call(turn, path)
    elif isinstance(turn, ToolResult):
        writer.result(turn, path)
    else:
        writer.native(turn, path)


def media_url(part: Part) -> str | None:
    """A media part's address as chat and Responses take it: its URL, or its inline
    ``data`` as a ``data:`` URL (of its media type); None for a part with neither."""
    if part.url is not None:
        return part.url
    if part.data is not None:
        return f"data:{part.media_type or 'application/octet-stream'};base64,{part.data}"
    return None


def text_of(parts: list[Part]) -> str:
    """The texts of ``parts`` one after the other (media left out)."""
    return "".join(part.text or "" for part in parts if part.kind == "text")


def expect(value: Any, kind: type | tuple[type, ...], path: str, what: str) -> Any:
    """``value`` when it is of ``kind``, else an :class:`~chatx.errors.InputError`
    naming its place in the body and what was expected there."""
    if isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds(kind)):
        return value
    raise InputError(f"{path}: expected {what}, got {_said(value)}", expected=what)


def read_each(value: Any, path: str, what: str, read: Callable[[Any, str], T]) -> list[T]:
    """The entries of the array ``value`` at ``path`` (``tools``), each read by
    ``read(entry, its path)`` (``tools[2]``); when ``value`` is no array, an
    :class:`~chatx.errors.InputError` saying ``what`` was expected."""
    entries = expect(value, list, path, what)
    return [read(entry, f"{path}[{number}]") for number, entry in enumerate(entries)]


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _said(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def extra_lost(path: str, extra: dict[str, Any]) -> list[str]:
    """The paths of ``extra``'s fields under ``path``, for a writer of another API."""
    return [f"{path}.{key}" for key in extra]


def shared_extra(
    request: Request, api: str, keys: frozenset[str], lost: list[str]
) -> dict[str, Any]:
    """The request's ``extra`` fields a body of ``api`` holds: all of them when the request
    was read from ``api``, else those ``keys`` names (the API's own fields of the same
    name), the others said lost."""
    return _shared(request.extra, request.api == api, keys, lost)


def _shared(
    extra: dict[str, Any], same: bool, keys: frozenset[str], lost: list[str]
) -> dict[str, Any]:
    if same:
        return dict(extra)
    kept = {}
    for key, value in extra.items():
        if key in keys:
            kept[key] = value
        else:
            lost.append(key)
    return kept


def read_nested(request: Request, outer: str, value: dict[str, Any], named: Iterable[str]) -> None:
    """A settings object's fields the neutral request has no name for (Responses'
    ``reasoning.context``, Anthropic's ``thinking.display``: those not in ``named``), kept
    in ``extra`` as ``OUTER.KEY`` in the order sent, for :func:`write_extra` to put back."""
    for key, inner in value.items():
        if key not in named:
            request.extra[f"{outer}.{key}"] = inner


def read_object(request: Request, outer: str, value: dict[str, Any], named: Iterable[str]) -> None:
    """A settings object (Responses' ``reasoning`` and ``text``, Anthropic's
    ``output_config``) read: its keys in the order sent, in ``form`` for the same API's
    :func:`write_object`, and the fields not in ``named`` nested in ``extra``
    (:func:`read_nested`). The caller reads the named ones."""
    request.form[outer] = list(value)
    read_nested(request, outer, value, named)


def write_object(
    fields: dict[str, Any], request: Request, api: str, outer: str
) -> dict[str, Any] | None:
    """The settings object ``outer`` of a body of ``api`` from its named ``fields``: read
    from ``api``, with the keys it was sent with (:func:`read_object`); else with those
    that say something, or None when none does."""
    keys = request.form.get(outer) if request.api == api else None
    if keys is not None:
        return {k: fields.get(k) for k in keys}
    said = {k: v for k, v in fields.items() if v is not None}
    return said or None


def write_extra(
    body: dict[str, Any],
    request: Request,
    api: str,
    keys: frozenset[str],
    lost: list[str],
    objects: tuple[str, ...] = (),
) -> None:
    """The request's ``extra`` into ``body``, a body of ``api``: first a field of one of the
    settings ``objects`` (``OUTER.KEY``, as :func:`read_nested` keeps it) back in its
    object when the request was read from ``api`` (said lost for any other API, whose
    object means other things), then the top-level fields as :func:`shared_extra` says."""
    same = request.api == api
    top = {}
    for key, value in request.extra.items():
        outer, dot, inner = key.partition(".")
        if not dot or outer not in objects:
            top[key] = value
        elif not same:
            lost.append(key)
        else:
            if body.get(outer) is None:
                body[outer] = {}
            body[outer][inner] = value
    body.update(_shared(top, same, keys, lost))


def read_fields(body: dict[str, Any], request: Request, names: Iterable[str]) -> None:
    """The settings ``body`` names as :class:`Request` does (``temperature``, ``top_p``,
    ``user``…), each as sent (``None`` when it has none): one table per API says which, in
    place of a line per field."""
    for name in names:
        setattr(request, name, body.get(name))


def write_fields(request: Request, body: dict[str, Any], names: Iterable[str]) -> None:
    """The settings of ``names`` into ``body`` under the same names, as :func:`read_fields`
    reads them (``None`` for one the request has not: :func:`finish_body` drops it)."""
    for name in names:
        body[name] = getattr(request, name)


def read_body(body: Any, api: str, what: str, model_key: str = "model") -> Request:
    """The request ``body`` of ``api`` opens: a JSON object (else an InputError saying
    ``what`` it should be), its model, and the form :func:`finish_body` writes it back in
    when the same API writes it: its top-level keys in order and the null or empty values
    it sent."""
    expect(body, dict, "the request", what)
    request = Request(api=api, model=body.get(model_key))
    request.form["keys"] = list(body)
    request.form["empty"] = {k: v for k, v in body.items() if v in (None, [], {})}
    return request


def finish_body(body: dict[str, Any], request: Request, api: str) -> dict[str, Any]:
    """A written body as sent: read from the same API, its own top-level keys in its own
    order (``Request.form["keys"]``), a null or empty value it sent kept
    (``Request.form["empty"]``); else the fields that say something (no null, no
    ``stream: false``)."""
    keys = request.form.get("keys") if request.api == api else None
    if keys is None:
        return {k: v for k, v in body.items() if v is not None and (k, v) != ("stream", False)}
    empty = request.form.get("empty", {})
    out = {}
    for key in keys:
        value = body.get(key)
        out[key] = empty[key] if value in (None, [], {}) and key in empty else value
    return out


# A thinking budget's nearest effort and back: the budget each effort stands for, the
# least budget Anthropic takes first.
EFFORT_BUDGETS = (("minimal", 1024), ("low", 2048), ("medium", 8192), ("high", 24576))


def budget_as_effort(budget: int, lost: list[str]) -> str:
    """The effort whose budget is the nearest at or below ``budget``; a budget that is not
    the effort's own is said in ``lost`` (the number itself does not reach the upstream)."""
    effort = EFFORT_BUDGETS[0][0]
    for name, least in EFFORT_BUDGETS:
        if budget >= least:
            effort = name
    if dict(EFFORT_BUDGETS)[effort] != budget:
        lost.append(f"reasoning_budget ({budget} tokens, sent as effort {effort})")
    return effort


def effort_as_budget(effort: str, lost: list[str]) -> int | None:
    """The thinking budget ``effort`` stands for (``None`` for ``none``: no thinking);
    an effort between or beyond the table's is said in ``lost`` as sent."""
    table = dict(EFFORT_BUDGETS)
    if effort == "none":
        return None
    budget = table.get(effort)
    if budget is None:
        budget = table["high"] if effort in ("xhigh", "max") else table["medium"]
        lost.append(f"reasoning_effort ({effort}, sent as a {budget}-token budget)")
    return budget


def json_schema_format(value: dict[str, Any]) -> dict[str, Any]:
    """A ``json_schema`` response format with the name OpenAI's APIs require (Anthropic's
    has none): ``response`` when the source gave it none."""
    if value.get("type") == "json_schema" and "name" not in value:
        return {"type": "json_schema", "name": "response", **value}
    return value
