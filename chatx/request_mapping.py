"""What the per-format request mappings share (``<format>/request*.py``): reading a body's
values with errors that name their place (:func:`expect`, :func:`read_each`), a settings
object and the fields the neutral request has no name for (:func:`read_object`,
:func:`write_extra`, :func:`with_extra`), a history handed to a writer turn by turn
(:func:`write_turn`) or grouped into an API's nested messages (:func:`messages`), a
body's own form kept for the same API (:func:`read_body`, :func:`finish_body`). A tool
reshaped where an API has no shape for it, and back, is :mod:`chatx.tool_shapes`'s; the
neutral request itself is :mod:`chatx.request`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from chatx import request as neutral
from chatx.errors import InputError
from chatx.tool_shapes import custom_arguments

T = TypeVar("T")


def messages(
    turns: list[neutral.Turn], side: Callable[[neutral.Turn], str]
) -> list[list[tuple[int, neutral.Turn]]]:
    """``turns`` grouped into the messages of an API that nests them (chat, Anthropic),
    each turn with its index: a turn joins the message before it when the source had it
    there (``joined``), or, when the source says nothing, when it is on the same side
    (``side`` says which: ``user``, ``assistant``…) and is no message of text after
    another (two texts from one role stay two messages, as they came)."""
    grouped: list[list[tuple[int, neutral.Turn]]] = []
    for index, turn in enumerate(turns):
        if grouped and _joins(turn, grouped[-1], side):
            grouped[-1].append((index, turn))
        else:
            grouped.append([(index, turn)])
    return grouped


def _joins(
    turn: neutral.Turn, group: list[tuple[int, neutral.Turn]], side: Callable[[neutral.Turn], str]
) -> bool:
    if turn.joined is not None:
        return turn.joined and side(turn) == side(group[-1][1])
    if side(turn) != side(group[-1][1]):
        return False
    if isinstance(turn, neutral.Message):  # a text joins only a message that has none yet
        return not any(isinstance(t, neutral.Message) for _, t in group) and not any(
            isinstance(t, neutral.ToolCall | neutral.ToolResult) for _, t in group
        )
    return True


class TurnWriter(Protocol):
    """A writer of one API's history, turn by turn, as :func:`write_turn` hands it the
    turns: a method for each kind, given the turn and its path (``turns[3]``). ``native``
    writes an item only the source API has words for back into that API, or says it lost."""

    def message(self, turn: neutral.Message, path: str) -> None: ...
    def reasoning(self, turn: neutral.Reasoning, path: str) -> None: ...
    def call(self, turn: neutral.ToolCall, path: str) -> None: ...
    def result(self, turn: neutral.ToolResult, path: str) -> None: ...
    def native(self, turn: neutral.Native, path: str) -> None: ...


def write_turn(writer: TurnWriter, index: int, turn: neutral.Turn) -> None:
    """The ``index``-th turn handed to ``writer``'s method for its kind."""
    path = f"turns[{index}]"
    if isinstance(turn, neutral.Message):
        writer.message(turn, path)
    elif isinstance(turn, neutral.Reasoning):
        writer.reasoning(turn, path)
    elif isinstance(turn, neutral.ToolCall):
        writer.call(turn, path)
    elif isinstance(turn, neutral.ToolResult):
        writer.result(turn, path)
    else:
        writer.native(turn, path)


def write_native(
    turn: neutral.Native, path: str, same: bool, out: list[Any], lost: list[str]
) -> None:
    """An item only its source API has words for into a history ``out`` of that API
    (``same``), as it came; into another API's, said lost by its kind."""
    if same:
        out.append(turn.value)
    else:
        lost.append(f"{path} ({turn.kind})")


def media_url(part: neutral.Part) -> str | None:
    """A media part's address as chat and Responses take it: its URL, or its inline
    ``data`` as a ``data:`` URL (of its media type); None for a part with neither."""
    if part.url is not None:
        return part.url
    if part.data is not None:
        return f"data:{part.media_type or 'application/octet-stream'};base64,{part.data}"
    return None


def text_of(parts: list[neutral.Part]) -> str:
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


def own_value(extra: dict[str, Any], path: str, same: bool, lost: list[str]) -> Any:
    """A value the neutral request holds whole (``extra[""]``: one only its source API has
    words for, a tool choice of its own): the value itself into that API (``same``); into
    another nothing (None), said lost at ``path``."""
    if same:
        return extra[""]
    lost.append(path)
    return None


def write_choice(
    choice: neutral.ToolChoice,
    same: bool,
    lost: list[str],
    write: Callable[[neutral.ToolChoice], T],
) -> T | Any:
    """A tool choice as a body writes it: one held whole (an API's own spelling,
    :func:`own_value`) back into its API or said lost; else as ``write`` makes it, the
    source fields it had besides said lost in another API than its own."""
    if "" in choice.extra:
        return own_value(choice.extra, "tool_choice", same, lost)
    if not same:
        lost.extend(extra_lost("tool_choice", choice.extra))
    return write(choice)


def extra_lost(path: str, extra: dict[str, Any]) -> list[str]:
    """The paths of ``extra``'s fields under ``path``, for a writer of another API."""
    return [f"{path}.{key}" for key in extra]


def with_extra(
    said: dict[str, Any], extra: dict[str, Any], path: str, same: bool, lost: list[str]
) -> dict[str, Any]:
    """``said``, a value written at ``path``, with the source fields ``extra`` holds when
    it is written into the API they came from (``same``); into another, they are said in
    ``lost`` by their paths."""
    if same:
        said.update(extra)
    else:
        lost.extend(extra_lost(path, extra))
    return said


def write_each(
    values: Iterable[T], path: str, write: Callable[[T, str], dict[str, Any] | None]
) -> list[dict[str, Any]]:
    """What ``write(value, its path)`` (``path[n]``) makes of each of ``values``, those
    it writes nothing for (said lost by ``write``) left out."""
    written = (write(value, f"{path}[{number}]") for number, value in enumerate(values))
    return [said for said in written if said is not None]


def call_input(call: neutral.ToolCall, path: str, lost: list[str]) -> dict[str, Any]:
    """A call's arguments as the JSON object an API that takes an object has them
    (Anthropic's ``input``, Gemini's ``args``): a custom tool's raw input as the function
    it became takes it, no arguments as ``{}``, arguments that are no JSON object said
    lost and sent as ``{}``."""
    arguments = custom_arguments(call.arguments) if call.kind == "custom" else call.arguments
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if not isinstance(value, dict):
        lost.append(f"{path}.arguments (not a JSON object)")
        value = {}
    return value


def user_message_lost(turn: neutral.Message, path: str, same: bool, lost: list[str]) -> None:
    """What a message says that an API whose turns are the user's and the model's, with
    no name (Anthropic, Gemini), has no place for: a system or developer turn amid the
    conversation (sent as the user's), chat's participant name, and into another API than
    its own its ``extra``."""
    if turn.role in ("system", "developer"):
        lost.append(f"{path}.role ({turn.role} amid the conversation, sent as user)")
    if turn.name is not None:
        lost.append(f"{path}.name")
    if not same:
        lost.extend(extra_lost(path, turn.extra))


def shared_extra(
    request: neutral.Request, api: str, keys: frozenset[str], lost: list[str]
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


def read_nested(
    request: neutral.Request, outer: str, value: dict[str, Any], named: Iterable[str]
) -> None:
    """A settings object's fields the neutral request has no name for (Responses'
    ``reasoning.context``, Anthropic's ``thinking.display``: those not in ``named``), kept
    in ``extra`` as ``OUTER.KEY`` in the order sent, for :func:`write_extra` to put back."""
    for key, inner in value.items():
        if key not in named:
            request.extra[f"{outer}.{key}"] = inner


def read_object(
    request: neutral.Request, outer: str, value: dict[str, Any], named: Iterable[str]
) -> None:
    """A settings object (Responses' ``reasoning`` and ``text``, Anthropic's
    ``output_config``) read: its keys in the order sent, in ``form`` for the same API's
    :func:`write_object`, and the fields not in ``named`` nested in ``extra``
    (:func:`read_nested`). The caller reads the named ones."""
    request.form[outer] = list(value)
    read_nested(request, outer, value, named)


def write_object(
    fields: dict[str, Any], request: neutral.Request, api: str, outer: str
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
    request: neutral.Request,
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


def read_fields(body: dict[str, Any], request: neutral.Request, names: Iterable[str]) -> None:
    """The settings ``body`` names as :class:`Request` does (``temperature``, ``top_p``,
    ``user``…), each as sent (``None`` when it has none): one table per API says which, in
    place of a line per field."""
    for name in names:
        setattr(request, name, body.get(name))


def write_fields(request: neutral.Request, body: dict[str, Any], names: Iterable[str]) -> None:
    """The settings of ``names`` into ``body`` under the same names, as :func:`read_fields`
    reads them (``None`` for one the request has not: :func:`finish_body` drops it)."""
    for name in names:
        body[name] = getattr(request, name)


def read_body(body: Any, api: str, what: str, model_key: str = "model") -> neutral.Request:
    """The request ``body`` of ``api`` opens: a JSON object (else an InputError saying
    ``what`` it should be), its model, and the form :func:`finish_body` writes it back in
    when the same API writes it: its top-level keys in order and the null or empty values
    it sent."""
    expect(body, dict, "the request", what)
    request = neutral.Request(api=api, model=body.get(model_key))
    request.form["keys"] = list(body)
    request.form["empty"] = {k: v for k, v in body.items() if v in (None, [], {})}
    return request


def finish_body(body: dict[str, Any], request: neutral.Request, api: str) -> dict[str, Any]:
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
