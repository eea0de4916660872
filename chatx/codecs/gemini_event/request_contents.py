"""A Gemini request's ``contents`` and ``systemInstruction`` ⇄ the neutral request's turns
and instructions.

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
import mimetypes
import re
from typing import Any

from chatx import request as neutral
from chatx.codecs.anthropic_event.request_blocks import FERNET
from chatx.request_mapping import (
    call_input,
    expect,
    extra_lost,
    flat_name,
    user_message_lost,
    with_extra,
    write_each,
)

_MEDIA = ("inlineData", "fileData")
# What base64 data begins with, by its media type (Gemini needs one; Llama Stack sends none)
_MAGIC = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"),
          ("UklGR", "image/webp"), ("JVBERi0", "application/pdf"))  # fmt: skip


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


def side(turn: neutral.Turn) -> str:
    """Whose content a turn goes in: ``user`` or ``model``."""
    if isinstance(turn, neutral.Message):
        return "model" if turn.role == "assistant" else "user"
    if isinstance(turn, neutral.ToolResult):
        return "user"
    if isinstance(turn, neutral.Native):
        return "model" if turn.role == "assistant" else "user"
    return "model"


class ContentsWriter:
    """The neutral turns as Gemini contents, with what Gemini cannot hold in ``lost``."""

    def __init__(
        self, request: neutral.Request, keys: Keys, names: dict[str, neutral.Tool], lost: list[str]
    ) -> None:
        self.same = request.api == "gemini"
        self.keys = keys
        self.flat = {(t.namespace, t.name): n for n, t in names.items()}
        self.lost = lost
        self.calls: dict[str, str] = {}  # call id → the name Gemini knows the call by
        self.carry: str | None = None  # a signature for the next part written

    def instructions(self, request: neutral.Request, start: list[int]) -> dict[str, Any] | None:
        """The system instruction: the instructions, and from another API the system and
        developer messages the conversation opens with (Gemini has no other place)."""
        parts = list(request.instructions)
        if not self.same:
            for turn in request.turns:
                if not (isinstance(turn, neutral.Message) and turn.role in ("system", "developer")):
                    break
                parts += turn.parts
                self.lost += extra_lost(f"turns[{start[0]}]", turn.extra)
                start[0] += 1
        if not parts and not (self.same and "system" in request.form):
            return None
        said = {self.keys.name("parts"): write_each(parts, "instructions", self.part)}
        if self.same:
            said.update(request.form.get("system", {}))
        return said

    def contents(self, turns: list[neutral.Turn], start: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        groups: list[list[tuple[int, neutral.Turn]]] = []
        for index, turn in list(enumerate(turns))[start:]:
            if isinstance(turn, neutral.Native) and not self.same:  # said lost; its neighbours join
                self.lost.append(f"turns[{index}] ({turn.kind})")
                continue
            if groups and self._joins(turn, groups[-1][-1][1]):
                groups[-1].append((index, turn))
            else:
                groups.append([(index, turn)])
        for group in groups:
            first = group[0][1]
            if isinstance(first, neutral.Native) and first.role is None:
                out.append(first.value)  # a whole content Gemini's reader kept as it was
                continue
            self.carry = None
            parts: list[Any] = []
            for index, turn in group:
                parts += self.turn(index, turn)
            if self.carry is not None:  # a signature after the last part: a part of its own
                parts.append({"text": "", self.keys.name("thoughtSignature"): self.carry})
            if parts or self.same:  # Gemini refuses a content of no parts
                out.append(self._content(first, parts))
        return out

    def _joins(self, turn: neutral.Turn, last: neutral.Turn) -> bool:
        if self.same and turn.joined is not None:
            return turn.joined
        return side(turn) == side(last)

    def _content(self, first: neutral.Turn, parts: list[Any]) -> dict[str, Any]:
        form = getattr(first, "form", {}).get("content") if self.same else None
        if form is None:
            return {"role": side(first), "parts": parts}
        said: dict[str, Any] = {}
        if form["role"] is not None:
            said["role"] = form["role"]
        if form["parts"] or parts:
            said[self.keys.name("parts")] = parts
        return said

    def turn(self, index: int, turn: neutral.Turn) -> list[Any]:
        path = f"turns[{index}]"
        if isinstance(turn, neutral.Message):
            user_message_lost(turn, path, self.same, self.lost)
            return [self._signed(w) for w in write_each(turn.parts, f"{path}.parts", self.part)]
        if isinstance(turn, neutral.ToolCall):
            return [self._signed(self.call(turn, path))]
        if isinstance(turn, neutral.ToolResult):
            return [self._signed(self.result(turn, path))]
        if isinstance(turn, neutral.Reasoning):
            return self.reasoning(turn, path)
        if self.same:
            return [turn.value]
        self.lost.append(f"{path} ({turn.kind})")
        return []

    def _signed(self, part: dict[str, Any]) -> dict[str, Any]:
        if self.carry is not None:
            part[self.keys.name("thoughtSignature")] = self.carry
            self.carry = None
        return part

    def call(self, turn: neutral.ToolCall, path: str) -> dict[str, Any]:
        name = self.flat.get((turn.namespace, turn.name), flat_name(turn.name, turn.namespace))
        self.calls[turn.call_id] = name
        args = call_input(turn, path, self.lost)
        extra = dict(turn.extra)
        outer = extra.pop("part", {}) if self.same else {}
        said: dict[str, Any] = {"name": name}
        if not self.same or turn.form.get("id") is not None:
            said["id"] = turn.call_id
        if not self.same or turn.form.get("args") or args:
            said["args"] = args
        with_extra(said, extra, path, self.same, self.lost)
        return {self.keys.name("functionCall"): said, **outer}

    def result(self, turn: neutral.ToolResult, path: str) -> dict[str, Any]:
        extra = dict(turn.extra)
        outer = extra.pop("part", {}) if self.same else {}
        name = turn.form.get("name") if self.same else None
        if name is None:
            name = self.calls.get(turn.call_id)
        if name is None:
            self.lost.append(f"{path} (a result of no call before it: Gemini names the function)")
            name = turn.call_id
        said: dict[str, Any] = {"name": name}
        if not self.same or turn.form.get("id") is not None:
            said["id"] = turn.call_id
        said["response"] = self._response(turn, path)
        with_extra(said, extra, path, self.same, self.lost)
        return {self.keys.name("functionResponse"): said, **outer}

    def _response(self, turn: neutral.ToolResult, path: str) -> Any:
        texts = [p for p in turn.parts if p.kind == "text"]
        for number, part in enumerate(turn.parts):
            if part.kind != "text":
                self.lost.append(f"{path}.parts[{number}] ({part.kind})")
        text = "".join(p.text or "" for p in texts)
        how = turn.form.get("response") if self.same else None
        if how == "json":
            try:
                return json.loads(text)
            except ValueError:
                pass
        if turn.is_error or how == "error":
            return {"error": text}
        return {"result" if how == "result" else "output": text}

    def reasoning(self, turn: neutral.Reasoning, path: str) -> list[Any]:
        signature = turn.signature
        if signature is None and turn.encrypted is not None:
            # a Responses reasoning item chatx made of Gemini thinking holds the signature as
            # its encrypted_content; OpenAI's own (a Fernet token) and Anthropic's redacted
            # thinking are no signature Gemini takes
            if turn.encrypted.startswith(FERNET) or turn.form.get("redacted"):
                if not turn.text:
                    self.lost.append(f"{path} (encrypted reasoning)")
                    return []
                self.lost.append(f"{path}.encrypted_content (OpenAI's)")
            else:
                signature = turn.encrypted
        keep = self.same and not turn.form.get("rides")
        if signature is not None and not keep:
            self.carry = signature  # rides the next part, as Gemini puts it on a call
        if self.same and turn.form.get("bare"):
            return []
        said: dict[str, Any] = {"text": turn.text, "thought": True}
        if keep and signature is not None:
            said[self.keys.name("thoughtSignature")] = signature
        if self.same:
            said.update(turn.extra)
        elif not turn.text:
            return []  # a signature alone: it rides the next part
        else:
            self.lost += extra_lost(path, turn.extra)
        return [said]

    def part(self, part: neutral.Part, path: str) -> dict[str, Any] | None:
        said: dict[str, Any] | None = None
        if part.kind == "text":
            said = {"text": part.text or ""}
        elif part.kind in ("image", "file", "audio"):
            said = self._media(part)
        elif part.kind == "other" and self.same:
            said = dict(part.extra[""])
        if said is None:
            self.lost.append(f"{path} ({part.kind})")
            return None
        extra = {k: v for k, v in part.extra.items() if k != ""}
        with_extra(said, extra, path, self.same, self.lost)
        return said

    def _media(self, part: neutral.Part) -> dict[str, Any] | None:
        keys = self.keys
        data, mime, url = part.data, part.media_type, part.url
        if data is None and url is not None and url.startswith("data:"):
            head, _, data = url.partition(",")
            mime = head.removeprefix("data:").removesuffix(";base64")
            url = None
        if mime is None and url is not None:
            mime = mimetypes.guess_type(url)[0]
        if mime is None and data is not None:
            mime = next((m for head, m in _MAGIC if data.startswith(head)), None)
        inner: dict[str, Any] = {}
        if mime is not None and (not self.same or part.form.get("mime")):
            inner[keys.name("mimeType")] = mime
        if data is not None:
            inner[keys.name("data")] = data
            outer = "inlineData"
        elif url is not None:
            inner[keys.name("fileUri")] = url
            outer = "fileData"
        else:
            return None
        if self.same:
            inner.update(part.form.get("inner", {}))
        return {keys.name(outer): inner}
