"""The neutral request's turns and instructions as a Gemini request's ``contents`` and
``systemInstruction`` (read in :mod:`.request_contents`, whose docstring says how each
part maps): each turn in the content of its side, consecutive turns of one side joined,
a thinking's signature carried to the part it rides, a result named for the call it
answers, and what Gemini cannot hold in ``lost``.
"""

from __future__ import annotations

import json
import mimetypes
from typing import Any

from chatx import request as neutral
from chatx.codecs.anthropic_event.request_blocks import FERNET
from chatx.codecs.gemini_event.request_contents import Keys
from chatx.request_mapping import call_input, extra_lost, user_message_lost, with_extra, write_each
from chatx.tool_shapes import flat_name

# What base64 data begins with, by its media type (Gemini needs one; Llama Stack sends none)
_MAGIC = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"),
          ("UklGR", "image/webp"), ("JVBERi0", "application/pdf"))  # fmt: skip


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
