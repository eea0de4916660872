"""Tools an upstream knows under another shape: a Responses client's custom (freeform)
tools and the members of its namespace tool sets, which an upstream without them (chat,
Anthropic, Llama Stack) is offered as plain functions.

The upstream API's request mapping says which of its names stands for which of the
client's tools (:attr:`~chatx.request.Mapped.names`): a custom tool becomes a function
taking one string (``input``), a namespace member a function named ``NAMESPACE__NAME``.

Coming back, a call of such a tool is put back in the client's shape by
:class:`Renamer`, which rewrites the Responses events the encoder wrote: a namespace
member's call gets its own name and its ``namespace``; a custom tool's call becomes a
``custom_tool_call`` item whose ``input`` is the raw text, streamed as
``response.custom_tool_call_input.delta`` / ``.done``. The upstream's arguments (a JSON
object holding one string, what the function the tool became takes) are read as they
arrive (:class:`Unwrap`), so the input streams as the model writes it, never JSON-wrapped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from chatx.request import Tool
from chatx.tool_shapes import custom_input

# The events a rename can touch: everything else passes as its bytes.
_TOUCHED = (
    b"event: response.output_item.",
    b"event: response.function_call_arguments.",
    b"event: response.completed",
    b"event: response.incomplete",
    b"event: response.failed",
)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class Unwrap:
    """A custom tool's input, read out of the JSON arguments of the function it became
    as they arrive: the first string value of the object, its escapes decoded. Arguments
    that are no JSON object are the input as they are."""

    __slots__ = ("escape", "raw", "state")

    def __init__(self) -> None:
        self.state = "start"
        self.escape = ""  # an escape sequence under way, backslash included
        self.raw = False

    def feed(self, fragment: str) -> str:
        if self.raw:
            return fragment
        out: list[str] = []
        for char in fragment:
            self._char(char, out)
            if self.raw:  # no JSON object: what came is the input
                return fragment
        return "".join(out)

    def _char(self, char: str, out: list[str]) -> None:
        _STATES[self.state](self, char, out)

    def _value(self, char: str, out: list[str]) -> None:
        if self.escape:
            self._escaped(char, out)
        elif char == "\\":
            self.escape = "\\"
        elif char == '"':
            self.state = "done"
        else:
            out.append(char)

    def _start(self, char: str, out: list[str]) -> None:
        if char == "{":
            self.state = "key"
        elif not char.isspace():
            self.raw = True

    def _key(self, char: str, out: list[str]) -> None:  # up to the key's opening quote
        if char == '"':
            self.state = "in_key"

    def _in_key(self, char: str, out: list[str]) -> None:
        if self.escape:
            self.escape = ""
        elif char == "\\":
            self.escape = "\\"
        elif char == '"':
            self.state = "colon"

    def _colon(self, char: str, out: list[str]) -> None:
        if char == ":":
            self.state = "seek"

    def _seek(self, char: str, out: list[str]) -> None:
        if char == '"':
            self.state = "value"
        elif not char.isspace():
            self.state = "done"  # not a string: the whole arguments say what it is

    def _done(self, char: str, out: list[str]) -> None:
        pass

    def _escaped(self, char: str, out: list[str]) -> None:
        self.escape += char
        escape = self.escape
        if len(escape) == 2 and escape[1] != "u":
            out.append(_ESCAPES.get(escape[1], escape[1]))
            self.escape = ""
            return
        if len(escape) < 6:
            return
        high = 0xD800 <= int(escape[2:6], 16) <= 0xDBFF
        if high and len(escape) < 12:  # wait for the low half of a surrogate pair
            if len(escape) == 7 and char != "\\":  # a lone high half, then a character
                out.append("\ufffd")
                self.escape = ""
                self._char(char, out)
            elif len(escape) == 8 and char != "u":  # a lone high half, then another escape
                out.append("\ufffd")
                self.escape = "\\"
                self._escaped(char, out)
            return
        try:
            out.append(orjson.loads(f'"{escape}"'.encode()))
        except orjson.JSONDecodeError:
            out.append("\ufffd")
        self.escape = ""


_STATES: dict[str, Callable[[Unwrap, str, list[str]], None]] = {
    "start": Unwrap._start,
    "key": Unwrap._key,
    "in_key": Unwrap._in_key,
    "colon": Unwrap._colon,
    "seek": Unwrap._seek,
    "value": Unwrap._value,
    "done": Unwrap._done,
}


class Renamer:
    """Rewrites a Responses stream's events (SSE, as chatx's writer frames them) for the
    calls of ``tools`` (the upstream's name → the client's tool)."""

    def __init__(self, tools: dict[str, Tool]) -> None:
        self.tools = tools
        self.open: dict[str, tuple[Tool, Unwrap]] = {}  # item id → its tool

    def event(self, event: bytes) -> bytes:
        if not event.startswith(_TOUCHED):
            return event
        head, sep, data = event.partition(b"\ndata: ")
        if not sep:
            return event
        payload = orjson.loads(data)
        changed = self.payload(payload)
        if changed is None:
            return event
        kind = changed["type"].encode()
        return b"event: " + kind + b"\ndata: " + orjson.dumps(changed) + b"\n\n"

    def payload(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The payload rewritten, or None when it is not about a renamed call."""
        kind = payload.get("type")
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = payload.get("item")
            tool = self._tool(item) if isinstance(item, dict) else None
            if tool is None or not isinstance(item, dict):
                return None
            if kind.endswith("added") and isinstance(item.get("id"), str):
                self.open[item["id"]] = (tool, Unwrap())
            return {**payload, "item": self.item(item)}
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            response = payload.get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), list):
                return {**payload, "response": self.response(response)}
            return None
        return self._arguments(kind, payload)

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """A whole response object with its renamed calls put back."""
        output = response["output"]
        if not any(isinstance(i, dict) and self._tool(i) is not None for i in output):
            return response
        items = [self.item(i) if isinstance(i, dict) else i for i in output]
        return {**response, "output": items}

    def item(self, item: dict[str, Any]) -> dict[str, Any]:
        tool = self._tool(item)
        if tool is None:
            return item
        if tool.kind != "custom":
            renamed = {**item, "name": tool.name}
            if tool.namespace is not None:
                renamed["namespace"] = tool.namespace
            return renamed
        arguments = item.get("arguments")
        said = {
            "id": item.get("id"),
            "type": "custom_tool_call",
            "status": item.get("status"),
            "call_id": item.get("call_id"),
            "input": custom_input(arguments) if isinstance(arguments, str) else "",
            "name": tool.name,
        }
        if tool.namespace is not None:
            said["namespace"] = tool.namespace
        return said

    def _tool(self, item: dict[str, Any]) -> Tool | None:
        if item.get("type") != "function_call":
            return None
        name = item.get("name")
        return self.tools.get(name) if isinstance(name, str) else None

    def _arguments(self, kind: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
        opened = self.open.get(payload.get("item_id"))  # type: ignore[arg-type]
        if opened is None:
            return None
        tool, unwrap = opened
        if kind == "response.function_call_arguments.done":
            arguments = payload.get("arguments")
            if tool.kind != "custom":
                return {**payload, "name": tool.name}
            del self.open[payload["item_id"]]
            return {
                "type": "response.custom_tool_call_input.done",
                "item_id": payload["item_id"],
                "output_index": payload.get("output_index"),
                "input": custom_input(arguments) if isinstance(arguments, str) else "",
                "sequence_number": payload.get("sequence_number"),
            }
        if kind != "response.function_call_arguments.delta" or tool.kind != "custom":
            return None
        delta = payload.get("delta")
        return {
            "type": "response.custom_tool_call_input.delta",
            "item_id": payload["item_id"],
            "output_index": payload.get("output_index"),
            "delta": unwrap.feed(delta) if isinstance(delta, str) else "",
            "sequence_number": payload.get("sequence_number"),
        }
