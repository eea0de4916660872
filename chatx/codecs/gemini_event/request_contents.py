"""A Gemini request's ``contents`` and ``systemInstruction`` read as the neutral request's
turns and instructions (written back in :mod:`.request_contents_write`).

A content is a role (``user`` or ``model``) and its parts, read one after the other: text
and media (``inlineData``, ``fileData``) make a :class:`~chatx.request.Message`, a
``functionCall`` a :class:`~chatx.request.ToolCall` (its ``args`` object as JSON text), a
``functionResponse`` a :class:`~chatx.request.ToolResult`, a ``thought: true`` text a
:class:`~chatx.request.Reasoning`. A ``thoughtSignature`` on a thought is its signature;
one on a call or a text belongs to the thinking before it (a reasoning with no text of its
own when there was none), and is written back on the part it rode.

A ``functionResponse``'s ``response`` of one text (``{"output": …}``, google-genai's
``{"result": …}``, ``{"error": …}``, which is an error) is that text; any other object
its JSON text. Gemini's calls often have no ``id``: one is made from the call's place
(``call_<content>_<part>``), and a ``functionResponse`` without one answers the first call
of its name not yet answered. Written from another API, calls and results carry the
source's ids, and a result takes the name of the call it answers (Gemini requires it).

The REST API takes each field in lowerCamelCase or in the proto's snake_case, and the
google-genai SDK sends both in one body (``functionCall`` beside ``mime_type``):
:class:`Keys` reads either and remembers which, for the same API's writer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chatx import request as neutral
from chatx.request_mapping import (
    expect,
)

_MEDIA = ("inlineData", "fileData")


def snake(camel: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


class Keys:
    """Field names as one body spelled them: each field is asked for by its lowerCamelCase
    name and found under either spelling; ``seen`` holds those found in snake_case, and
    :meth:`name` gives the spelling to write (the source's for the same API, else
    lowerCamelCase)."""

    def __init__(self, seen: dict[str, str] | None = None) -> None:
        self.seen: dict[str, str] = {} if seen is None else seen

    def get(self, value: dict[str, Any], name: str) -> Any:
        if name in value:
            return value[name]
        other = snake(name)
        if other in value:
            self.seen[name] = other
            return value[other]
        return None

    def has(self, value: dict[str, Any], name: str) -> bool:
        return name in value or snake(name) in value

    def rest(self, value: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
        """``value``'s fields but ``names`` (in either spelling), by their own names."""
        known = {*names, *(snake(n) for n in names)}
        return {k: v for k, v in value.items() if k not in known}

    def name(self, name: str) -> str:
        return self.seen.get(name, name)


def media_kind(mime: Any) -> neutral.PartKind:
    if isinstance(mime, str) and mime.startswith("image/"):
        return "image"
    if isinstance(mime, str) and mime.startswith("audio/"):
        return "audio"
    return "file"


# --- reading -------------------------------------------------------------------------


def read_instructions(value: Any, keys: Keys, request: neutral.Request) -> None:
    expect(value, dict, "systemInstruction", "a content object")
    parts = keys.get(value, "parts")
    said = expect([] if parts is None else parts, list, "systemInstruction.parts", "parts")
    request.instructions = [
        read_part(p, f"systemInstruction.parts[{n}]", keys) for n, p in enumerate(said)
    ]
    request.form["system"] = keys.rest(value, ("parts",))


class ContentsReader:
    """``contents`` as turns. ``pending`` holds, by name, the ids of the calls not yet
    answered, in order: a result without an id answers the first."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.pending: dict[str, list[str]] = {}

    def read(self, value: Any) -> list[neutral.Turn]:
        turns: list[neutral.Turn] = []
        for number, content in enumerate(expect(value, list, "contents", "an array of contents")):
            turns += self.content(content, number)
        return turns

    def content(self, content: Any, number: int) -> list[neutral.Turn]:
        path = f"contents[{number}]"
        expect(content, dict, path, "a content object")
        role = content.get("role")
        parts = self.keys.get(content, "parts")
        if role not in (None, "user", "model", "function") or self.keys.rest(
            content, ("role", "parts")
        ):
            return [neutral.Native(kind=f"content of role {role}", value=content, joined=False)]
        side = "assistant" if role == "model" else "user"
        turns: list[neutral.Turn] = []
        listed = expect([] if parts is None else parts, list, f"{path}.parts", "an array of parts")
        for index, part in enumerate(listed):
            self.part(part, f"{path}.parts[{index}]", (number, index), side, turns)
        if not turns:
            turns.append(neutral.Message(role=side, parts=[]))  # type: ignore[arg-type]
        for index, turn in enumerate(turns):
            turn.joined = index > 0
        head = turns[0]
        assert not isinstance(head, neutral.Native)
        head.form["content"] = {"role": role, "parts": parts is not None}
        return turns

    def part(
        self, part: Any, path: str, place: tuple[int, int], side: str, turns: list[neutral.Turn]
    ) -> None:
        expect(part, dict, path, "a part object")
        keys = self.keys
        signature = keys.get(part, "thoughtSignature")
        if part.get("thought") is True and isinstance(part.get("text"), str):
            rest = keys.rest(part, ("text", "thought", "thoughtSignature"))
            turns.append(neutral.Reasoning(text=part["text"], signature=signature, extra=rest))
            return
        if signature is not None:
            _signed(turns, signature)
        if keys.has(part, "functionCall"):
            turns.append(self.call(part, path, place))
        elif keys.has(part, "functionResponse"):
            turns.append(self.result(part, path, place))
        else:
            said = read_part(part, path, keys)
            last = turns[-1] if turns else None
            if isinstance(last, neutral.Message):
                last.parts.append(said)
            else:
                turns.append(neutral.Message(role=side, parts=[said]))  # type: ignore[arg-type]

    def call(self, part: dict[str, Any], path: str, place: tuple[int, int]) -> neutral.ToolCall:
        keys = self.keys
        value = expect(
            keys.get(part, "functionCall"), dict, f"{path}.functionCall", "a call object"
        )
        name = expect(value.get("name"), str, f"{path}.functionCall.name", "the function's name")
        args = value.get("args", {})
        given = value.get("id")
        call_id = given if isinstance(given, str) and given else "call_{}_{}".format(*place)
        said = neutral.ToolCall(
            call_id=call_id,
            name=name,
            arguments=json.dumps(args, ensure_ascii=False),
            extra=keys.rest(value, ("id", "name", "args")),
        )
        said.form = {"id": given, "args": "args" in value}
        outer = keys.rest(part, ("functionCall", "thoughtSignature"))
        if outer:
            said.extra["part"] = outer
        self.pending.setdefault(name, []).append(call_id)
        return said

    def result(self, part: dict[str, Any], path: str, place: tuple[int, int]) -> neutral.ToolResult:
        keys = self.keys
        where = f"{path}.functionResponse"
        value = expect(keys.get(part, "functionResponse"), dict, where, "a response object")
        name = expect(value.get("name"), str, f"{where}.name", "the function's name")
        given = value.get("id")
        waiting = self.pending.get(name, [])
        if isinstance(given, str) and given:
            call_id = given
            if given in waiting:
                waiting.remove(given)
        else:
            call_id = waiting.pop(0) if waiting else "call_{}_{}".format(*place)
        response = value.get("response")
        said = neutral.ToolResult(
            call_id=call_id, parts=[], extra=keys.rest(value, ("id", "name", "response"))
        )
        said.form = {"id": given, "name": name}
        only = next(iter(response)) if isinstance(response, dict) and len(response) == 1 else None
        if only in ("output", "error", "result") and isinstance(response[only], str):
            said.parts = [neutral.Part(kind="text", text=response[only], plain=True)]
            said.is_error = True if only == "error" else None
            said.form["response"] = only
        else:
            text = json.dumps(response, ensure_ascii=False)
            said.parts = [neutral.Part(kind="text", text=text, plain=True)]
            said.form["response"] = "json"
        outer = keys.rest(part, ("functionResponse", "thoughtSignature"))
        if outer:
            said.extra["part"] = outer
        return said


def _signed(turns: list[neutral.Turn], signature: str) -> None:
    """A signature on a call or a text: the thinking just before it is signed by it, or
    a reasoning of no text holds it; either is written back with the signature on the
    next part."""
    last = turns[-1] if turns else None
    if isinstance(last, neutral.Reasoning) and last.signature is None and "rides" not in last.form:
        last.signature = signature
        last.form["rides"] = True
        return
    turns.append(
        neutral.Reasoning(text="", signature=signature, form={"rides": True, "bare": True})
    )


def read_part(part: Any, path: str, keys: Keys) -> neutral.Part:
    """A text or media part; any other (code, a result of code) kept whole."""
    expect(part, dict, path, "a part object")
    if isinstance(part.get("text"), str) and part.get("thought") is not True:
        rest = keys.rest(part, ("text", "thoughtSignature"))
        return neutral.Part(kind="text", text=part["text"], extra=rest)
    for outer in _MEDIA:
        inner = keys.get(part, outer)
        if not isinstance(inner, dict):
            continue
        mime = keys.get(inner, "mimeType")
        said = neutral.Part(kind=media_kind(mime), media_type=mime)
        if outer == "inlineData":
            said.data = keys.get(inner, "data")
        else:
            said.url = keys.get(inner, "fileUri")
        if not isinstance(said.data or said.url, str):
            break
        said.extra = keys.rest(part, (outer, "thoughtSignature"))
        said.form["inner"] = keys.rest(inner, ("mimeType", "data", "fileUri"))
        said.form["mime"] = keys.has(inner, "mimeType")
        return said
    rest = {k: v for k, v in part.items() if k not in ("thoughtSignature", "thought_signature")}
    return neutral.Part(kind="other", extra={"": rest})


# --- writing -------------------------------------------------------------------------
