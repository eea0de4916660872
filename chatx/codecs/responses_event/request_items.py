"""A Responses request's ``input`` items ⇄ the neutral request's turns.

Items are the neutral request's own grain: a message, a ``function_call`` or
``custom_tool_call`` (a freeform tool's raw ``input``), their ``*_output``, a ``reasoning``
item (its summary, its ``encrypted_content``). Items only Responses has (a
``web_search_call``, ``compaction``, ``item_reference``…) are :class:`~chatx.request.Native`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from chatx.request import Message, Native, Part, Reasoning, Request, ToolCall, ToolResult, Turn
from chatx.request_mapping import (
    expect,
    extra_lost,
    media_url,
    with_extra,
    write_each,
    write_native,
)

ROLES = ("system", "developer", "user", "assistant")


# --- reading -------------------------------------------------------------------------


def read_input(value: Any, request: Request) -> None:
    if isinstance(value, str):
        request.turns.append(
            Message(role="user", parts=[Part(kind="text", text=value, plain=True)])
        )
        request.form["input"] = "string"
        return
    for number, item in enumerate(expect(value, list, "input", "a string or an array of items")):
        request.turns.append(read_item(item, f"input[{number}]"))


def read_item(item: Any, path: str) -> Turn:
    expect(item, dict, path, "an input item object")
    kind = item.get("type", "message")
    reader = _ITEM_READERS.get(kind) if isinstance(kind, str) else None
    said = reader(item, path) if reader is not None else None
    return said if said is not None else Native(kind=str(kind), value=item)


def _rest(item: dict[str, Any], named: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in named}


def _message(item: dict[str, Any], path: str) -> Turn | None:
    role = item.get("role")
    if role not in ROLES:
        return None
    said = Message(role=role, parts=read_content(item.get("content"), f"{path}.content", role))
    said.id = item.get("id")
    said.form = _rest(item, ("role", "content", "id"))  # type, status: how it was sent
    return said


def _call(item: dict[str, Any], path: str) -> Turn | None:
    custom = item["type"] == "custom_tool_call"
    arguments = item.get("input" if custom else "arguments")
    said = ToolCall(
        call_id=expect(item.get("call_id"), str, f"{path}.call_id", "the call's id"),
        name=expect(item.get("name"), str, f"{path}.name", "the tool's name"),
        arguments=expect(arguments, str, path, "the call's arguments as text"),
        kind="custom" if custom else "function",
        namespace=item.get("namespace"),
        id=item.get("id"),
    )
    named = ("type", "call_id", "name", "input", "arguments", "namespace", "id", "status")
    said.extra = _rest(item, named)
    if "status" in item:
        said.form["status"] = item["status"]
    return said


def _output(item: dict[str, Any], path: str) -> Turn | None:
    output = item.get("output")
    said = ToolResult(
        call_id=expect(item.get("call_id"), str, f"{path}.call_id", "the call's id"),
        parts=read_content(output, f"{path}.output", "tool"),
        kind="custom" if item["type"] == "custom_tool_call_output" else "function",
    )
    said.form = _rest(item, ("type", "call_id", "output"))  # its id, status
    return said


def _reasoning(item: dict[str, Any], path: str) -> Turn | None:
    summary = item.get("summary", [])
    texts = (
        [p.get("text") for p in summary if isinstance(p, dict)]
        if isinstance(summary, list)
        else None
    )
    if texts is None or not all(isinstance(t, str) for t in texts):
        return None
    said = Reasoning(
        text="\n\n".join(str(t) for t in texts),
        encrypted=item.get("encrypted_content"),
        id=item.get("id"),
    )
    said.form["summary"] = texts
    said.extra = _rest(item, ("type", "summary", "encrypted_content", "id"))
    return said


_ITEM_READERS = {
    "message": _message,
    "function_call": _call,
    "custom_tool_call": _call,
    "function_call_output": _output,
    "custom_tool_call_output": _output,
    "reasoning": _reasoning,
}


def read_content(content: Any, path: str, role: str) -> list[Part]:
    """A message's content or a call's output: a string is one plain text part."""
    if isinstance(content, str):
        return [Part(kind="text", text=content, plain=True)]
    return [read_part(part) for part in expect(content, list, path, "a string or an array")]


def read_part(part: Any) -> Part:
    kind = part.get("type") if isinstance(part, dict) else None
    said: Part | None = None
    if kind in ("input_text", "output_text") and isinstance(part.get("text"), str):
        said = Part(kind="text", text=part["text"], extra=_rest(part, ("type", "text")))
    elif kind == "input_image" and isinstance(part.get("image_url", ""), str):
        said = Part(
            kind="image", url=part.get("image_url"), extra=_rest(part, ("type", "image_url"))
        )
    elif kind == "input_file" and isinstance(part.get("file_url", part.get("file_data", "")), str):
        url = part.get("file_url", part.get("file_data"))
        said = Part(kind="file", url=url, extra=_rest(part, ("type", "file_url", "file_data")))
        said.form["data"] = "file_data" in part
    if said is None:
        return Part(kind="other", extra={"": part})
    said.form["type"] = kind
    return said


# --- writing -------------------------------------------------------------------------


class ItemsWriter:
    """The neutral turns as Responses input items, with what Responses cannot hold in
    ``lost``."""

    def __init__(self, request: Request, lost: list[str]) -> None:
        self.same = request.api == "responses"
        self.lost = lost
        self.out: list[dict[str, Any]] = []

    def native(self, turn: Native, path: str) -> None:
        write_native(turn, path, self.same, self.out, self.lost)

    def message(self, turn: Message, path: str) -> None:
        if not turn.parts and not self.same:
            return  # an assistant message of tool calls only: the calls are items
        said: dict[str, Any] = {"type": "message", "role": turn.role}
        if self.same:
            said = {**turn.form, "role": turn.role}
            if turn.id is not None:
                said["id"] = turn.id
        elif turn.name is not None:
            self.lost.append(f"{path}.name")
        said["content"] = self.content(turn.parts, path, turn.role)
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.out.append(said)

    def call(self, turn: ToolCall, path: str) -> None:
        custom = turn.kind == "custom"
        said: dict[str, Any] = {
            "type": "custom_tool_call" if custom else "function_call",
            "call_id": turn.call_id,
            "name": turn.name,
            "input" if custom else "arguments": turn.arguments,
        }
        if turn.namespace is not None:
            said["namespace"] = turn.namespace
        if self.same:
            said.update({"id": turn.id, **turn.form} if turn.id is not None else turn.form)
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.out.append(said)

    def result(self, turn: ToolResult, path: str) -> None:
        kind = "custom_tool_call_output" if turn.kind == "custom" else "function_call_output"
        said: dict[str, Any] = {"type": kind, "call_id": turn.call_id}
        said["output"] = self.content(turn.parts, f"{path}.output", "tool")
        if turn.is_error:
            self.lost.append(f"{path}.is_error")
        if self.same:
            said.update(turn.form)
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.out.append(said)

    def reasoning(self, turn: Reasoning, path: str) -> None:
        if turn.id is None:  # Responses takes back only the reasoning items it made
            self.lost.append(f"{path} (reasoning from another API)")
            return
        pieces = turn.form.get("summary") if self.same else None
        if pieces is None or "\n\n".join(pieces) != turn.text:
            pieces = [turn.text] if turn.text else []
        said: dict[str, Any] = {"type": "reasoning", "id": turn.id}
        said["summary"] = [{"type": "summary_text", "text": text} for text in pieces]
        if turn.encrypted is not None:
            said["encrypted_content"] = turn.encrypted
        if turn.signature is not None:
            self.lost.append(f"{path}.signature")
        with_extra(said, turn.extra, path, self.same, self.lost)
        self.out.append(said)

    def content(self, parts: list[Part], path: str, role: str) -> str | list[Any]:
        if len(parts) == 1 and parts[0].plain and parts[0].kind == "text":
            return parts[0].text or ""
        if role == "assistant" and not self.same:
            return self._assistant_text(parts, path)
        return write_each(parts, f"{path}.parts", partial(self.part, role=role))

    def _assistant_text(self, parts: list[Part], path: str) -> str:
        """An assistant's earlier text as Responses takes it back from a client: one
        string (its parts as ``output_text`` would need the ids of a stored message)."""
        for number, part in enumerate(parts):
            if part.kind != "text":
                self.lost.append(f"{path}.parts[{number}] ({part.kind})")
            else:
                self.lost += extra_lost(f"{path}.parts[{number}]", part.extra)
        return "".join(part.text or "" for part in parts if part.kind == "text")

    def part(self, part: Part, path: str, role: str) -> dict[str, Any] | None:
        extra = dict(part.extra)
        said = _PART_WRITERS[part.kind](part, extra, self.same)
        if said is None:
            self.lost.append(f"{path} ({part.kind})")
            return None
        if self.same:
            said.update(extra)
            if "type" in part.form and part.kind != "other":
                said["type"] = part.form["type"]
        else:
            self.lost += extra_lost(path, extra)
        return said


def _text(part: Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    return {"type": "input_text", "text": part.text or ""}


def _image(part: Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    url = media_url(part)
    said: dict[str, Any] = {"type": "input_image"}
    if url is not None:
        said["image_url"] = url
    if "detail" in extra:
        said["detail"] = extra.pop("detail")
    elif not same:
        said["detail"] = "auto"  # the SDK's type asks for one
    return said if url is not None or same else None


def _file(part: Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    url = media_url(part)
    said: dict[str, Any] = {"type": "input_file"}
    if url is not None:
        inline = part.form.get("data", url.startswith("data:"))
        said["file_data" if inline else "file_url"] = url
    for key in ("filename", "file_id"):
        if key in extra:
            said[key] = extra.pop(key)
    if url is not None and url.startswith("data:") and "filename" not in said and not same:
        said["filename"] = "file"  # OpenAI refuses inline file data without a name
    return said if len(said) > 1 else None


def _other(part: Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    return extra.pop("") if same else None


def _audio(part: Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    return None  # Responses takes no audio input


_PART_WRITERS = {
    "text": _text,
    "image": _image,
    "file": _file,
    "other": _other,
    "audio": _audio,
}
