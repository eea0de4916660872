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

The helpers the per-format mappings share (reading and checking a body's values, writing
what another API cannot hold as lost) are in :mod:`chatx.request_mapping`; reshaping
tools in :mod:`chatx.tool_shapes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

PartKind = Literal["text", "image", "file", "audio", "other"]
Role = Literal["system", "developer", "user", "assistant"]
ToolKind = Literal["function", "custom", "builtin"]


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
