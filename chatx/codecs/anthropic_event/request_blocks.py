"""An Anthropic request's ``system`` and ``messages`` ⇄ the neutral request's instructions
and turns.

A message's content blocks are read one after the other: text, image and document blocks
make a :class:`~chatx.request.Message`, a ``tool_use`` a
:class:`~chatx.request.ToolCall` (its ``input`` object as JSON text), a ``tool_result`` a
:class:`~chatx.request.ToolResult`, a ``thinking`` block a
:class:`~chatx.request.Reasoning` with its ``signature`` (``redacted_thinking``: its
``data`` as the encrypted content). Server tools' blocks (``server_tool_use``,
``web_search_tool_result``, MCP's) are :class:`~chatx.request.Native`. Each keeps the
message it sat in (``joined``), so that a turn is written back as one message.
"""

from __future__ import annotations

import json
from typing import Any

from chatx import request as neutral
from chatx.request_mapping import (
    call_input,
    expect,
    extra_lost,
    messages,
    user_message_lost,
    with_extra,
    write_each,
)
from chatx.tool_shapes import flat_name

_MEDIA = ("image", "document")
FERNET = "gAAAAA"  # how OpenAI's encrypted reasoning begins: a Fernet token, version 0x80


# --- reading -------------------------------------------------------------------------


def read_system(value: Any) -> list[neutral.Part]:
    if isinstance(value, str):
        return [neutral.Part(kind="text", text=value, plain=True)]
    return [read_part(block) for block in expect(value, list, "system", "a string or blocks")]


def read_messages(value: Any, request: neutral.Request) -> None:
    for number, message in enumerate(expect(value, list, "messages", "an array of messages")):
        path = f"messages[{number}]"
        expect(message, dict, path, "a message object")
        request.turns += read_message(message, path)


def read_message(message: dict[str, Any], path: str) -> list[neutral.Turn]:
    role = message.get("role")
    content = message.get("content")
    if role not in ("user", "assistant") or set(message) != {"role", "content"}:
        return [neutral.Native(kind=f"message of role {role}", value=message, joined=False)]
    if isinstance(content, str):
        return [
            neutral.Message(
                role=role, parts=[neutral.Part(kind="text", text=content, plain=True)], joined=False
            )
        ]
    turns: list[neutral.Turn] = []
    for number, block in enumerate(expect(content, list, f"{path}.content", "a string or blocks")):
        turn = read_block(block, f"{path}.content[{number}]", role)
        if isinstance(turn, neutral.Part):
            last = turns[-1] if turns else None
            if isinstance(last, neutral.Message):
                last.parts.append(turn)
                continue
            turn = neutral.Message(role=role, parts=[turn])
        turn.joined = bool(turns)
        turns.append(turn)
    if not turns:
        return [neutral.Message(role=role, parts=[], joined=False)]
    return turns


def read_block(block: Any, path: str, role: neutral.Role) -> neutral.Turn | neutral.Part:
    expect(block, dict, path, "a content block")
    kind = block.get("type")
    if kind in ("text", *_MEDIA):
        return read_part(block)
    reader = _BLOCK_READERS.get(kind) if isinstance(kind, str) else None
    said = reader(block, path) if reader is not None else None
    if said is None:
        return neutral.Native(kind=str(kind), value=block, role=role)
    return said


def _tool_use(block: dict[str, Any], path: str) -> neutral.Turn | None:
    if not isinstance(block.get("input"), dict):
        return None
    said = neutral.ToolCall(
        call_id=expect(block.get("id"), str, f"{path}.id", "the call's id"),
        name=expect(block.get("name"), str, f"{path}.name", "the tool's name"),
        arguments=json.dumps(block["input"], ensure_ascii=False),
    )
    said.extra = {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}
    return said


def _tool_result(block: dict[str, Any], path: str) -> neutral.Turn | None:
    content = block.get("content", [])
    said = neutral.ToolResult(
        call_id=expect(block.get("tool_use_id"), str, f"{path}.tool_use_id", "the call's id"),
        parts=[neutral.Part(kind="text", text=content, plain=True)]
        if isinstance(content, str)
        else [read_part(b) for b in expect(content, list, f"{path}.content", "text or blocks")],
        is_error=block.get("is_error"),
    )
    if "content" not in block:
        said.form["content"] = None
    if "is_error" in block:
        said.form["is_error"] = True
    named = ("type", "tool_use_id", "content", "is_error")
    said.extra = {k: v for k, v in block.items() if k not in named}
    return said


def _thinking(block: dict[str, Any], path: str) -> neutral.Turn | None:
    text = block.get("thinking")
    if not isinstance(text, str):
        return None
    said = neutral.Reasoning(text=text, signature=block.get("signature"))
    said.extra = {k: v for k, v in block.items() if k not in ("type", "thinking", "signature")}
    return said


def _redacted(block: dict[str, Any], path: str) -> neutral.Turn | None:
    data = block.get("data")
    if not isinstance(data, str) or set(block) != {"type", "data"}:
        return None
    return neutral.Reasoning(encrypted=data, form={"redacted": True})


_BLOCK_READERS = {
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "thinking": _thinking,
    "redacted_thinking": _redacted,
}


def read_part(block: Any) -> neutral.Part:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and isinstance(block.get("text"), str):
        rest = {k: v for k, v in block.items() if k not in ("type", "text")}
        return neutral.Part(kind="text", text=block["text"], extra=rest)
    source = block.get("source") if kind in _MEDIA else None
    if isinstance(source, dict) and source.get("type") in ("base64", "url"):
        said = neutral.Part(kind="image" if kind == "image" else "file")
        said.data = source.get("data")
        said.url = source.get("url")
        said.media_type = source.get("media_type")
        said.extra = {k: v for k, v in block.items() if k not in ("type", "source")}
        rest = {k: v for k, v in source.items() if k not in ("type", "data", "url", "media_type")}
        if rest:
            said.form["source"] = rest
        return said
    return neutral.Part(kind="other", extra={"": block})


# --- writing -------------------------------------------------------------------------


def side(turn: neutral.Turn) -> str:
    """Whose message a turn goes in."""
    if isinstance(turn, neutral.Message):
        return "user" if turn.role in ("user", "system", "developer") else "assistant"
    if isinstance(turn, neutral.ToolResult):
        return "user"
    if isinstance(turn, neutral.Native):
        return turn.role or "user"
    return "assistant"


class BlocksWriter:
    """The neutral turns as Anthropic messages of content blocks, with what Anthropic
    cannot hold in ``lost``."""

    def __init__(
        self, request: neutral.Request, names: dict[str, neutral.Tool], lost: list[str]
    ) -> None:
        self.same = request.api == "anthropic"
        self.flat = {(t.namespace, t.name): n for n, t in names.items()}
        self.lost = lost

    def system(self, request: neutral.Request) -> Any:
        """The system prompt: the instructions, and the system and developer messages the
        conversation opens with (Anthropic has no other place for them)."""
        parts = list(request.instructions)
        leading = 0
        for turn in request.turns:
            if not (isinstance(turn, neutral.Message) and turn.role in ("system", "developer")):
                break
            parts += turn.parts
            self.lost += extra_lost(f"turns[{leading}]", turn.extra)
            leading += 1
        if not parts:
            return None, leading
        if len(parts) == 1 and parts[0].plain and parts[0].kind == "text":
            return parts[0].text, leading
        return write_each(parts, "instructions", self.part), leading

    def messages(self, turns: list[neutral.Turn], start: int) -> list[dict[str, Any]]:
        out = []
        indexed = list(enumerate(turns))[start:]
        for group in messages([t for _, t in indexed], side):
            blocks: list[Any] = []
            for index, turn in group:
                blocks += self.blocks(index + start, turn)
            first = group[0][1]
            if isinstance(first, neutral.Native) and first.role is None and self.same:
                out.append(first.value)  # a whole message Anthropic's reader kept as it was
                continue
            content: Any = blocks
            if isinstance(first, neutral.Message) and len(group) == 1 and self._plain(first):
                content = first.parts[0].text
            if blocks or self.same:
                out.append({"role": side(first), "content": content})
        return out

    @staticmethod
    def _plain(turn: neutral.Message) -> bool:
        return len(turn.parts) == 1 and turn.parts[0].plain and turn.parts[0].kind == "text"

    def blocks(self, index: int, turn: neutral.Turn) -> list[Any]:
        path = f"turns[{index}]"
        if isinstance(turn, neutral.Message):
            user_message_lost(turn, path, self.same, self.lost)
            return write_each(turn.parts, f"{path}.parts", self.part)
        if isinstance(turn, neutral.ToolCall):
            return [self.call(turn, path)]
        if isinstance(turn, neutral.ToolResult):
            return [self.result(turn, path)]
        if isinstance(turn, neutral.Reasoning):
            return self.reasoning(turn, path)
        if self.same:
            return [turn.value] if turn.role is not None else []
        self.lost.append(f"{path} ({turn.kind})")
        return []

    def call(self, turn: neutral.ToolCall, path: str) -> dict[str, Any]:
        name = self.flat.get((turn.namespace, turn.name), flat_name(turn.name, turn.namespace))
        value = call_input(turn, path, self.lost)
        said = {"type": "tool_use", "id": turn.call_id, "name": name, "input": value}
        with_extra(said, turn.extra, path, self.same, self.lost)
        return said

    def result(self, turn: neutral.ToolResult, path: str) -> dict[str, Any]:
        said: dict[str, Any] = {"type": "tool_result", "tool_use_id": turn.call_id}
        if len(turn.parts) == 1 and turn.parts[0].plain and turn.parts[0].kind == "text":
            said["content"] = turn.parts[0].text
        elif turn.parts or "content" not in turn.form:
            said["content"] = write_each(turn.parts, f"{path}.parts", self.part)
        if turn.is_error is not None and (turn.is_error or "is_error" in turn.form):
            said["is_error"] = turn.is_error
        with_extra(said, turn.extra, path, self.same, self.lost)
        return said

    def reasoning(self, turn: neutral.Reasoning, path: str) -> list[dict[str, Any]]:
        foreign = turn.encrypted is not None and turn.encrypted.startswith(FERNET)
        if turn.form.get("redacted") and self.same or (turn.encrypted and not turn.text):
            if turn.encrypted is None or foreign and not self.same:
                self.lost.append(f"{path} (OpenAI's encrypted reasoning)")
                return []
            return [{"type": "redacted_thinking", "data": turn.encrypted}]
        # A signature proves the text is the model's own; a Responses reasoning item
        # chatx made of a thinking block holds it as its encrypted_content. OpenAI's own
        # encrypted reasoning (a Fernet token: gAAAAA…) is no signature Anthropic takes.
        signature = turn.signature
        if signature is None and turn.encrypted is not None:
            if turn.encrypted.startswith(FERNET):
                self.lost.append(f"{path}.encrypted_content (OpenAI's)")
            else:
                signature = turn.encrypted
        if signature is None:
            self.lost.append(f"{path} (reasoning without a signature)")
            return []
        said: dict[str, Any] = {"type": "thinking", "thinking": turn.text, "signature": signature}
        with_extra(said, turn.extra, path, self.same, self.lost)
        return [said]

    def part(self, part: neutral.Part, path: str) -> dict[str, Any] | None:
        extra = dict(part.extra)
        said: dict[str, Any] | None = None
        if part.kind == "text":
            if not part.text and not self.same:
                return None  # Anthropic refuses an empty text block; it says nothing
            said = {"type": "text", "text": part.text or ""}
        elif part.kind in ("image", "file"):
            said = _media(part, extra, self.same)
        elif part.kind == "other" and self.same:
            said = extra.pop("")
        if said is None:
            self.lost.append(f"{path} ({part.kind})")
            return None
        if self.same:
            said.update(extra)
        else:
            self.lost += extra_lost(path, {k: v for k, v in extra.items() if k != "cache_control"})
            if "cache_control" in extra:
                said["cache_control"] = extra["cache_control"]
        return said


def _media(part: neutral.Part, extra: dict[str, Any], same: bool) -> dict[str, Any] | None:
    kind = "image" if part.kind == "image" else "document"
    source: dict[str, Any]
    data, media = part.data, part.media_type
    url = part.url
    if data is None and url is not None and url.startswith("data:"):
        head, _, data = url.partition(",")
        media = head.removeprefix("data:").removesuffix(";base64")
        url = None
    if data is not None:
        source = {"type": "base64", "media_type": media or "application/octet-stream", "data": data}
    elif url is not None:
        source = {"type": "url", "url": url}
    else:
        return None
    if same:
        source.update(part.form.get("source", {}))
    return {"type": kind, "source": source}
