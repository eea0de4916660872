"""A chat request's ``messages`` ⇄ the neutral request's instructions and turns.

A chat message nests what the neutral request lists apart: an assistant message's
reasoning (``reasoning_content``, as DeepSeek and Kimi send it back; ``reasoning``, as vLLM
and OpenRouter name it), its content and its ``tool_calls`` are read as a
:class:`~chatx.request.Reasoning`, a :class:`~chatx.request.Message` and
:class:`~chatx.request.ToolCall`\\ s joined to it, and written back into one message.
"""

from __future__ import annotations

from typing import Any

from chatx import request as neutral
from chatx.request_mapping import expect, extra_lost, media_url, read_each, with_extra, write_each
from chatx.tool_shapes import custom_arguments, flat_name

ROLES = ("system", "developer", "user", "assistant")
REASONING_FIELDS = ("reasoning_content", "reasoning")


# --- reading -------------------------------------------------------------------------


def read_messages(value: Any, request: neutral.Request) -> None:
    """Fill ``request``'s instructions and turns from ``messages``: a first system message
    of content only is the instructions."""
    for number, message in enumerate(expect(value, list, "messages", "an array of messages")):
        path = f"messages[{number}]"
        expect(message, dict, path, "a message object")
        role = message.get("role")
        if number == 0 and role == "system" and _only_content(message):
            request.instructions = read_content(message["content"], path)
            continue
        request.turns += read_message(message, path, request)


def _only_content(message: dict[str, Any]) -> bool:
    return set(message) == {"role", "content"} and isinstance(message["content"], str | list)


def read_message(
    message: dict[str, Any], path: str, request: neutral.Request
) -> list[neutral.Turn]:
    """One chat message as turns."""
    role = message.get("role")
    if role == "tool":
        return [read_tool_result(message, path)]
    if role not in ROLES:  # the legacy "function" role, or none
        return [neutral.Native(kind=f"message of role {role}", value=message)]
    turns: list[neutral.Turn] = []
    rest = dict(message)
    del rest["role"]
    reasoning = _read_reasoning(rest, request)
    if reasoning is not None:
        turns.append(reasoning)
    content = rest.pop("content", _ABSENT)
    said = neutral.Message(role=role, parts=[], joined=True if turns else None)
    if content is None:
        said.form["content"] = None
    elif content is not _ABSENT:
        said.parts = read_content(content, f"{path}.content")
    name = rest.pop("name", None)
    said.name = name if isinstance(name, str) else None
    if name is not None and said.name is None:
        rest["name"] = name
    calls = rest.pop("tool_calls", None)
    if "tool_calls" in message and not calls:
        said.form["tool_calls"] = message["tool_calls"]  # null or [], as some clients send
    said.extra = rest
    turns.append(said)
    if calls is not None:
        turns += read_each(calls, f"{path}.tool_calls", "an array", read_tool_call)
    return turns


_ABSENT: Any = object()


def _read_reasoning(rest: dict[str, Any], request: neutral.Request) -> neutral.Reasoning | None:
    for key in REASONING_FIELDS:
        text = rest.get(key)
        if isinstance(text, str):
            del rest[key]
            if key != "reasoning_content":
                request.form["reasoning_field"] = key
            return neutral.Reasoning(text=text)
    return None


def read_tool_call(call: Any, path: str) -> neutral.ToolCall | neutral.Native:
    expect(call, dict, path, "a tool call object")
    kind = call.get("type", "function")
    inner = call.get(kind)
    if kind not in ("function", "custom") or not isinstance(inner, dict):
        return neutral.Native(kind="tool call", value=call, role="assistant", joined=True)
    arguments = inner.get("arguments" if kind == "function" else "input")
    said = neutral.ToolCall(
        call_id=expect(call.get("id"), str, f"{path}.id", "the call's id"),
        name=expect(inner.get("name"), str, f"{path}.{kind}.name", "the tool's name"),
        arguments=expect(arguments, str, f"{path}.{kind}", "the call's arguments as text"),
        kind=kind,
        joined=True,
    )
    said.extra = {k: v for k, v in call.items() if k not in ("id", "type", kind)}
    said.extra.update(
        {f"{kind}.{k}": v for k, v in inner.items() if k not in ("name", "arguments", "input")}
    )
    if "type" not in call:
        said.form["untyped"] = True
    if kind == "custom":
        said.form["custom"] = True
    return said


def read_tool_result(message: dict[str, Any], path: str) -> neutral.ToolResult:
    call_id = expect(message.get("tool_call_id"), str, f"{path}.tool_call_id", "the call's id")
    content = message.get("content", _ABSENT)
    result = neutral.ToolResult(call_id=call_id, parts=[])
    if content is None:
        result.form["content"] = None
    elif content is not _ABSENT:
        result.parts = read_content(content, f"{path}.content")
    result.extra = {
        k: v for k, v in message.items() if k not in ("role", "tool_call_id", "content")
    }
    return result


def read_content(content: Any, path: str) -> list[neutral.Part]:
    """A message's content: a string is one plain text part."""
    if isinstance(content, str):
        return [neutral.Part(kind="text", text=content, plain=True)]
    return [read_part(part) for part in expect(content, list, path, "a string or an array")]


def read_part(part: Any) -> neutral.Part:
    kind = part.get("type") if isinstance(part, dict) else None
    reader = _PART_READERS.get(kind) if isinstance(kind, str) else None
    said = reader(part) if reader is not None else None
    return said if said is not None else neutral.Part(kind="other", extra={"": part})


def _text_part(part: dict[str, Any]) -> neutral.Part | None:
    if not isinstance(part.get("text"), str):
        return None
    rest = {k: v for k, v in part.items() if k not in ("type", "text")}
    return neutral.Part(kind="text", text=part["text"], extra=rest)


def _image_part(part: dict[str, Any]) -> neutral.Part | None:
    image = part.get("image_url")
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        return None
    rest = {k: v for k, v in part.items() if k not in ("type", "image_url")}
    rest.update({k: v for k, v in image.items() if k != "url"})
    return neutral.Part(kind="image", url=image["url"], extra=rest)


def _audio_part(part: dict[str, Any]) -> neutral.Part | None:
    audio = part.get("input_audio")
    if not isinstance(audio, dict) or not isinstance(audio.get("data"), str):
        return None
    fmt = audio.get("format")
    rest = {k: v for k, v in audio.items() if k not in ("data", "format")}
    media = f"audio/{fmt}" if isinstance(fmt, str) else None
    return neutral.Part(kind="audio", data=audio["data"], media_type=media, extra=rest)


def _file_part(part: dict[str, Any]) -> neutral.Part | None:
    file = part.get("file")
    if not isinstance(file, dict) or len(part) != 2:
        return None
    data = file.get("file_data")
    rest = {k: v for k, v in file.items() if k != "file_data"}
    if isinstance(data, str) and data.startswith("data:"):
        return neutral.Part(kind="file", url=data, extra=rest)
    if data is not None:
        return None
    return neutral.Part(kind="file", extra=rest)


_PART_READERS = {
    "text": _text_part,
    "image_url": _image_part,
    "input_audio": _audio_part,
    "file": _file_part,
}


# --- writing -------------------------------------------------------------------------


class MessagesWriter:
    """The neutral turns as chat messages, with what chat cannot hold in ``lost``."""

    def __init__(
        self, request: neutral.Request, names: dict[str, neutral.Tool], lost: list[str]
    ) -> None:
        self.same = request.api == "chat"
        self.reasoning_field = request.form.get("reasoning_field", "reasoning_content")
        self.flat = {(t.namespace, t.name): n for n, t in names.items()}
        self.lost = lost
        self.out: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None  # the message later turns may join

    def instructions(self, parts: list[neutral.Part]) -> None:
        if parts:
            self.out.append({"role": "system", "content": self.content(parts, "instructions")})

    def native(self, turn: neutral.Native, path: str) -> None:
        if not self.same:
            self.lost.append(f"{path} ({turn.kind})")
        elif turn.joined and self.open is not None:
            self.open.setdefault("tool_calls", []).append(turn.value)
        else:
            self.out.append(turn.value)
            self.open = None

    def message(self, turn: neutral.Message, path: str) -> None:
        said: dict[str, Any] = {"role": turn.role}
        if self._fills_open(turn):
            assert self.open is not None
            said = self.open
        else:
            self.out.append(said)
        if turn.parts and said.get("content"):  # more text after what was lost between
            said["content"] = _listed(said["content"]) + _listed(self.content(turn.parts, path))
        elif turn.parts:
            said["content"] = self.content(turn.parts, path)
        elif "content" in turn.form and self.same:
            said["content"] = None
        if turn.name is not None:
            said["name"] = turn.name
        if "tool_calls" in turn.form and self.same:
            calls = turn.form["tool_calls"]
            said["tool_calls"] = None if calls is None else list(calls)
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.open = said if turn.role in ("assistant", "user") else None

    def _fills_open(self, turn: neutral.Message) -> bool:
        """Whether the message is the open one's content: it was in the source, or it
        is an assistant text after reasoning only."""
        if self.open is None or turn.joined is False:
            return False
        if turn.joined:  # the message it sat in, unless what opened it was lost
            return self.same or self.open["role"] == turn.role
        holds = set(self.open) - {"role", self.reasoning_field}
        return turn.role == "assistant" == self.open["role"] and not holds

    def reasoning(self, turn: neutral.Reasoning, path: str) -> None:
        if not turn.text and (turn.encrypted is not None or turn.signature is not None):
            self.lost.append(f"{path} (encrypted reasoning)")  # nothing readable to send
            return
        if turn.signature is not None:
            self.lost.append(f"{path}.signature")
        if turn.encrypted is not None:
            self.lost.append(f"{path}.encrypted_content")
        self.lost += extra_lost(path, turn.extra)
        if not (turn.joined and self.open is not None):
            self.open = {"role": "assistant"}
            self.out.append(self.open)
        self.open[self.reasoning_field] = turn.text

    def call(self, turn: neutral.ToolCall, path: str) -> None:
        name = self.flat.get((turn.namespace, turn.name), flat_name(turn.name, turn.namespace))
        said: dict[str, Any] = {"id": turn.call_id, "type": "function"}
        if turn.kind == "custom" and self.same and turn.form.get("custom"):
            said = {"id": turn.call_id, "type": "custom"}
            said["custom"] = {"name": name, "input": turn.arguments}
        else:  # a custom tool's call as the function the tool became takes it
            custom = turn.kind == "custom"
            arguments = custom_arguments(turn.arguments) if custom else turn.arguments
            said["function"] = {"name": name, "arguments": arguments}
        if turn.form.get("untyped"):
            del said["type"]
        self._call_extra(said, turn, path)
        open_ = self.open
        # a call joins the message it sat in (a chat user message's too, as sent), or the
        # assistant message before it
        joins = self.same and turn.joined or open_ is not None and open_["role"] == "assistant"
        if open_ is None or turn.joined is False or not joins:
            open_ = self.open = {"role": "assistant", "content": None}
            self.out.append(open_)
        open_.setdefault("tool_calls", []).append(said)

    def _call_extra(self, said: dict[str, Any], turn: neutral.ToolCall, path: str) -> None:
        if not self.same:
            self.lost += extra_lost(path, turn.extra)
            return
        for key, value in turn.extra.items():
            inner, dot, field = key.partition(".")
            if dot and isinstance(said.get(inner), dict):
                said[inner][field] = value
            else:
                said[key] = value

    def result(self, turn: neutral.ToolResult, path: str) -> None:
        said: dict[str, Any] = {"role": "tool", "tool_call_id": turn.call_id}
        if turn.parts:
            texts = [p for p in turn.parts if p.kind == "text" or self.same]
            if len(texts) < len(turn.parts):
                self.lost.append(f"{path}.parts (media in a tool result)")
            said["content"] = self.content(texts, path)
        elif "content" in turn.form and self.same:
            said["content"] = None
        else:
            said["content"] = ""
        if turn.is_error:
            self.lost.append(f"{path}.is_error")
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.out.append(said)
        self.open = None

    def content(self, parts: list[neutral.Part], path: str) -> str | list[Any]:
        prefix = path if path == "instructions" else f"{path}.parts"
        if len(parts) == 1 and parts[0].kind == "text" and (parts[0].plain or not self.same):
            self.lost += [] if self.same else extra_lost(f"{prefix}[0]", parts[0].extra)
            return parts[0].text or ""  # one text: a string, which every chat server takes
        return write_each(parts, prefix, self.part)

    def part(self, part: neutral.Part, path: str) -> dict[str, Any] | None:
        extra = dict(part.extra)
        said: dict[str, Any] | None = None
        if part.kind == "other":
            said = extra.pop("", None) if self.same else None
        elif part.kind == "text":
            said = {"type": "text", "text": part.text or ""}
        elif part.kind == "image":
            said = _image(part, extra, self.same)
        elif part.kind == "audio" and part.data is not None:
            fmt = (part.media_type or "audio/wav").removeprefix("audio/")
            said = {"type": "input_audio", "input_audio": {"data": part.data, "format": fmt}}
        elif part.kind == "file":
            said = _file(part, extra, self.same)
        if said is None:
            self.lost.append(f"{path} ({part.kind})")
            return None
        with_extra(said, extra, path, self.same, self.lost)
        return said


def _listed(content: str | list[Any]) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _image(part: neutral.Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    url = media_url(part)
    if url is None:
        return None
    image: dict[str, Any] = {"url": url}
    for key in list(extra):  # chat keeps an image's settings inside image_url
        if same or key == "detail":
            image[key] = extra.pop(key)
    return {"type": "image_url", "image_url": image}


def _file(part: neutral.Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    file: dict[str, Any] = {}
    url = media_url(part)
    if url is not None and url.startswith("data:"):
        file["file_data"] = url
    elif url is not None:
        return None  # chat takes a file inline or by id, never by address
    for key in list(extra):
        if same or key in ("filename", "file_id"):
            file[key] = extra.pop(key)
    return {"type": "file", "file": file} if file else None
