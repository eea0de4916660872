"""Llama 3 special tokens in chat text, and the built-in tool calls they open.

A chat server that serves a Llama model raw can let the model's special tokens through
as content: ``<|eot_id|>`` (end of turn), ``<|eom_id|>`` (end of message: the model waits
for a tool result) and ``<|python_tag|>`` (what follows is a call to a built-in tool).
Llama Stack's own OpenAI-compat layer (``process_chat_completion_stream_response``) turns
them into stop reasons and ``tool_call`` deltas; the encoder does the same with
:class:`TokenScanner`, which finds the tokens even when a delta boundary splits one, and
:func:`parse_tool_call`, which reads the text after ``<|python_tag|>`` the way Llama
Stack's ``ChatFormat.decode_assistant_message_from_content`` does.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import orjson

EOT = "<|eot_id|>"
EOM = "<|eom_id|>"
PYTHON_TAG = "<|python_tag|>"
TOKENS = (EOT, EOM, PYTHON_TAG)
TOKEN_STOP = {EOT: "end_of_turn", EOM: "end_of_message"}

# Llama Stack's BuiltinTool members; the model calls them as ``name.call(query="...")``.
BUILTIN_TOOLS = ("brave_search", "wolfram_alpha", "photogen", "code_interpreter")


class TokenScanner:
    """Splits text into plain text and special tokens across deltas.

    ``feed`` returns ``("text", s)`` and ``("token", t)`` pieces; a tail that could be the
    start of a token (``"<|py"``) is held until the next delta decides, and ``flush``
    gives it back as text at the end.
    """

    __slots__ = ("tail",)

    def __init__(self) -> None:
        self.tail = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        text = self.tail + text
        self.tail = ""
        if "<" not in text:  # the hot path: no token can start here
            return [("text", text)] if text else []
        pieces: list[tuple[str, str]] = []
        start = 0
        at = text.find("<")
        while at != -1:
            rest = text[at : at + 14]
            token = next((t for t in TOKENS if rest.startswith(t)), None)
            if token is not None:
                if at > start:
                    pieces.append(("text", text[start:at]))
                pieces.append(("token", token))
                start = at + len(token)
                at = text.find("<", start)
            elif len(text) - at < 14 and any(t.startswith(text[at:]) for t in TOKENS):
                self.tail = text[at:]
                break
            else:
                at = text.find("<", at + 1)
        end = len(text) - len(self.tail)
        if end > start:
            pieces.append(("text", text[start:end]))
        return pieces

    def flush(self) -> str:
        tail, self.tail = self.tail, ""
        return tail


# Text that opens a call in one of the forms Llama Stack's ChatFormat parses.
_OPENERS = (PYTHON_TAG, "<function=", *(f"{name}.call(" for name in BUILTIN_TOOLS))
_OPENED = re.compile(r'\{\s*"|\[\s*[A-Za-z_]\w*\s*\(')  # {"…  or  [name(…
_OPENING = re.compile(r"\{\s*|\[\s*(?:[A-Za-z_]\w*\s*)?")  # {  or  [name


def call_prefix(text: str) -> str:
    """How the start of a message reads: ``"call"`` once it has opened a call in a form
    Llama Stack parses (``{"``, ``[name(``, ``<function=``, ``<|python_tag|>``,
    ``brave_search.call(``…), ``"maybe"`` while it could still open one, else ``"text"``."""
    text = text.lstrip()
    if text.startswith(_OPENERS) or _OPENED.match(text):
        return "call"
    if not text or any(opener.startswith(text) for opener in _OPENERS):
        return "maybe"
    return "maybe" if _OPENING.fullmatch(text) else "text"


_FUNCTION_TAG = re.compile(
    r"<function=(?P<name>[^}>]+)>(?P<args>\{.*?\})(?:</function>)?\s*$", re.DOTALL
)


def parse_tool_call(raw: str) -> tuple[str, dict[str, Any]] | None:
    """The (tool name, arguments) a ``<|python_tag|>`` call means, or ``None`` when there
    is nothing to call.

    In Llama Stack's order: a custom call (``<function=name>{…}</function>`` or a JSON
    object with ``name`` and ``parameters``), a python list of calls (the first one), a
    built-in ``tool.call(key=value, …)``; any other text is code for ``code_interpreter``.
    """
    text = raw.strip()
    if not text:
        return None
    return (
        _function_tag(text)
        or _json_call(text)
        or _python_call(text)
        or ("code_interpreter", {"code": text})
    )


def _function_tag(text: str) -> tuple[str, dict[str, Any]] | None:
    match = _FUNCTION_TAG.match(text)
    if not match:
        return None
    try:
        args = orjson.loads(match.group("args"))
    except orjson.JSONDecodeError:
        return None
    return (match.group("name"), args) if isinstance(args, dict) else None


def _json_call(text: str) -> tuple[str, dict[str, Any]] | None:
    if not text.startswith("{"):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    args = value.get("parameters", value.get("arguments", {}))
    return (value["name"], args) if isinstance(args, dict) else None


def _python_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """``[f(a=1), …]`` (first call) or ``tool.call(a=1)``, keyword literals only."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if isinstance(node, ast.List) and node.elts:
        node = node.elts[0]
    if not isinstance(node, ast.Call) or node.args:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "call" and isinstance(func.value, ast.Name):
        name = func.value.id
    elif isinstance(func, ast.Name) and text.startswith("["):
        name = func.id
    else:
        return None
    try:
        args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        orjson.dumps(args)  # literals JSON cannot say (sets, bytes) make it code instead
    except (ValueError, SyntaxError, TypeError, orjson.JSONEncodeError):
        return None
    return name, args
