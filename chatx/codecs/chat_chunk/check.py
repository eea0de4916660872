"""Streaming checker for OpenAI chat.completion.chunk streams (rules ``CHK…``).

Per choice it keeps the finish state and, per tool call, the argument fragments (joined
once, at the end, to check they parse as JSON). Both reasoning field names
(``reasoning_content``, ``reasoning``) are valid and need no rule.

``data: [DONE]`` is SSE framing: a JSON-lines file holds JSON values, so its chat stream
ends at the end of the file (CHK015 applies to SSE only). A file may hold several streams
one after the other, each ended by ``[DONE]`` (chatx writes a Responses file of several
turns so): a chunk of another completion id after ``[DONE]`` starts the next stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from chatx.codecs.byte_template import OBFUSCATION, TEXT
from chatx.codecs.chat_chunk.rules import CHAT_RULES
from chatx.pieces import Pieces
from chatx.record import Record
from chatx.validation.base import Checker, Known, catalogue, is_int

# Delta fields that carry content; anything else (role, channel, nulls, "") does not.
CONTENT_FIELDS = (
    "content",
    "refusal",
    "reasoning",
    "reasoning_content",
    "tool_calls",
    "function_call",
    "reasoning_details",
)


# The delta fields that hold text a run's records repeat (validation.base.Known).
_TEXTS = ("content", "reasoning_content", "reasoning")


@dataclass(slots=True)
class CheckedCall:
    line: int  # where the call's first entry is
    record: int
    index: int
    fragments: Pieces = field(default_factory=Pieces)


@dataclass(slots=True)
class Choice:
    finish: str | None = None
    finish_line: int = 0
    finish_record: int = 0
    calls: dict[int, CheckedCall] = field(default_factory=dict)
    last_line: int = 0
    last_index: int = 0


class ChatChecker(Checker):
    """Checks a ``chat-chunk`` stream one record at a time."""

    format = "chat-chunk"
    rules = catalogue(*CHAT_RULES)

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self.last_line, self.last_index = 0, -1
        self._new_stream()

    def _new_stream(self) -> None:
        self.first: dict[str, Any] | None = None  # id/created/line of the first chunk
        self.choices: dict[int, Choice] = {}
        self.done_line: int | None = None
        self.error_line: int | None = None
        self.usage_line: int | None = None
        self.reported_once: set[str] = set()

    def check(self, record: Record) -> None:
        if self.done_line is not None and self._next_stream(record.data):
            self._end_stream()
            self._new_stream()
        if self.done_line is not None:
            self.report("CHK016", f"record after data: [DONE] (line {self.done_line})")
        if record.done:
            self.done_line = self.done_line or record.line
            return
        self.last_line, self.last_index = self.line, self.index
        chunk = record.data
        if not isinstance(chunk, dict):
            self.report("CHK019", "chunk is not a JSON object")
            return
        if self.error_line is not None:
            self.report("CHK018", f"chunk after the error frame at line {self.error_line}")
        if chunk.get("error") not in (None, {}, ""):  # some servers send "error": null
            self._error_frame(chunk)
            if "choices" not in chunk:
                return
        if is_azure_preamble(chunk):
            return
        self._check_envelope(chunk)
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            self.report("CHK019", "chunk has no choices list")
            return
        self._check_usage(chunk, choices)
        for choice in choices:
            self._check_choice(choice)

    def _error_frame(self, chunk: dict[str, Any]) -> None:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        self.report("CHK017", f"error frame: {message}")
        self.error_line = self.error_line or self.line

    def _check_envelope(self, chunk: dict[str, Any]) -> None:
        obj = chunk.get("object")
        if obj != "chat.completion.chunk":
            self.report("CHK001", f"object is {obj!r}")
        if self.first is None:
            self.first = {"id": chunk.get("id"), "created": chunk.get("created"), "line": self.line}
            return
        for key, rule in (("id", "CHK002"), ("created", "CHK003")):
            # Once per stream: Groq's compound models change the id on every chunk, and
            # many servers stamp every chunk with its own created time.
            if chunk.get(key) != self.first[key] and rule not in self.reported_once:
                self.reported_once.add(rule)
                self.report(
                    rule,
                    f"{key} is {chunk.get(key)!r}; the first chunk (line "
                    f"{self.first['line']}) has {self.first[key]!r} "
                    "(reported once per stream)",
                )

    def _check_usage(self, chunk: dict[str, Any], choices: list[Any]) -> None:
        if choices and self.usage_line is not None:
            self.report(
                "CHK013", f"chunk with choices after the usage chunk at line {self.usage_line}"
            )
        if chunk.get("usage") is None:
            return
        if choices:
            if "CHK014" not in self.reported_once:
                self.reported_once.add("CHK014")
                self.report("CHK014", "usage on a chunk with choices (reported once per stream)")
            return
        if self.usage_line is not None:
            self.report("CHK013", f"second usage chunk (the first is at line {self.usage_line})")
        # A choice still open here is reported at the end (CHK009) if it never finishes,
        # or by the check above if it finishes after this chunk.
        self.usage_line = self.usage_line or self.line

    def _check_choice(self, choice: Any) -> None:
        if not isinstance(choice, dict) or not is_int(choice.get("index")):
            self.report("CHK019", "choice is not an object with an integer index")
            return
        delta = choice.get("delta")
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            self.report("CHK019", "choice delta is not an object")
            return
        index = choice["index"]
        state = self.choices.get(index)
        if state is None:
            state = self.choices[index] = Choice()
            if delta.get("role") is None:
                self.report("CHK004", f"first delta of choice {index} has no role")
        state.last_line, state.last_index = self.line, self.index
        if state.finish is not None and any(_filled(delta.get(k)) for k in CONTENT_FIELDS):
            self.report(
                "CHK011",
                f"delta for choice {index} after its finish_reason (line {state.finish_line})",
            )
        self._check_tool_calls(state, delta.get("tool_calls"))
        self._check_finish(index, state, choice.get("finish_reason"))

    def _check_finish(self, index: int, state: Choice, reason: Any) -> None:
        if reason is None:
            return
        if state.finish is not None:
            self.report(
                "CHK010",
                f"second finish_reason {reason!r} for choice {index} "
                f"(first {state.finish!r} at line {state.finish_line})",
            )
            return
        state.finish, state.finish_line, state.finish_record = reason, self.line, self.index

    def _check_tool_calls(self, state: Choice, entries: Any) -> None:
        if not entries:
            return
        if not isinstance(entries, list):
            self.report("CHK019", "delta.tool_calls is not a list")
            return
        for entry in entries:
            if not isinstance(entry, dict) or not is_int(entry.get("index")):
                self.report("CHK005", "tool_calls entry without an integer index")
                continue
            function = entry.get("function")
            if not isinstance(function, dict):
                function = {}
            call = state.calls.get(entry["index"])
            if call is None:
                call = state.calls[entry["index"]] = CheckedCall(
                    self.line, self.index, entry["index"]
                )
                self._check_first_entry(entry, function)
            elif entry.get("id") or function.get("name"):
                what = "id" if entry.get("id") else "function.name"
                self.report(
                    "CHK007",
                    f"tool call {entry['index']} repeats its {what} "
                    f"(first entry at line {call.line})",
                )
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                call.fragments.append(arguments)

    def _check_first_entry(self, entry: dict[str, Any], function: dict[str, Any]) -> None:
        missing = [
            name
            for name, ok in (
                ("id", bool(entry.get("id"))),
                ("type", entry.get("type") == "function"),
                ("function.name", bool(function.get("name"))),
            )
            if not ok
        ]
        if missing:
            self.report(
                "CHK006", f"first entry of tool call {entry['index']} lacks {', '.join(missing)}"
            )

    def knows(self, record: Record) -> Known | None:
        """A chunk of one choice whose delta is one piece of text or reasoning (beside a
        role, or fields set to null) and no finish_reason: the next ones repeat it but
        for that piece and the obfuscation, which no rule reads. What checking one
        keeps: the record as the stream's and its choice's last."""
        chunk = record.data
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1 or chunk.get("usage") is not None:
            return None
        choice = choices[0]
        delta = choice.get("delta")
        if type(delta) is not dict:  # none (read as empty), which holds no text
            return None
        name = next((k for k in _TEXTS if type(delta.get(k)) is str), None)
        if name is None or choice.get("finish_reason") is not None:
            return None
        if any(v is not None and k not in (name, "role") for k, v in delta.items()):
            return None
        state = self.choices[choice["index"]]
        holes = [TEXT]
        payload = {**chunk, "choices": [{**choice, "delta": {**delta, name: TEXT}}]}
        if type(chunk.get("obfuscation")) is str:
            holes.append(OBFUSCATION)
            payload["obfuscation"] = OBFUSCATION

        def take(text: str) -> None:
            self.last_line, self.last_index = self.line, self.index
            state.last_line, state.last_index = self.line, self.index

        return Known.of(payload, holes, record.event, take)

    def _next_stream(self, chunk: Any) -> bool:
        """Whether a record after ``[DONE]`` is the first chunk of another completion."""
        if not isinstance(chunk, dict) or not isinstance(chunk.get("id"), str):
            return False
        return self.first is None or chunk["id"] != self.first["id"]

    def finish(self) -> list:
        self._end_stream()
        return self.findings

    def _end_stream(self) -> None:
        for index, state in sorted(self.choices.items()):
            self._finish_choice(index, state)
        ended_by_error = self.error_line is not None
        if (
            self.container == "sse"
            and self.done_line is None
            and not ended_by_error
            and self.index >= 0
        ):
            self.report(
                "CHK015",
                "stream ends without data: [DONE]",
                line=self.last_line,
                index=self.last_index,
            )

    def _finish_choice(self, index: int, state: Choice) -> None:
        where = {"line": state.last_line, "index": state.last_index}
        if state.finish is None and self.error_line is None:
            self.report("CHK009", f"choice {index} never gets a finish_reason", **where)
        for call in state.calls.values():
            try:
                orjson.loads(call.fragments.text())
            except orjson.JSONDecodeError:
                self.report(
                    "CHK008",
                    f"arguments of tool call {call.index} (choice {index}) do not parse as JSON",
                    line=call.line,
                    index=call.record,
                )
        made_calls = bool(state.calls)
        at = {"line": state.finish_line, "index": state.finish_record}
        if state.finish == "tool_calls" and not made_calls:
            self.report("CHK012", f"choice {index} finishes with tool_calls but made none", **at)
        elif made_calls and state.finish in ("stop", "end_turn"):
            # length / content_filter may cut a call short: only a plain stop is wrong.
            self.report(
                "CHK012", f"choice {index} made tool calls but finishes with {state.finish!r}", **at
            )


def _filled(value: Any) -> bool:
    """True for a value that carries content (not None, "", [] or {})."""
    return value is not None and value != "" and value != [] and value != {}


def is_azure_preamble(chunk: dict[str, Any]) -> bool:
    # Azure OpenAI sends a first chunk with id "" (the Llama Stack recorder rewrites it),
    # object "", created 0, choices [] and prompt_filter_results; it belongs to no
    # completion and is not checked.
    return (
        chunk.get("choices") == []
        and "prompt_filter_results" in chunk
        and chunk.get("object") in ("", None)
    )
