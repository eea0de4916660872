"""Streaming checker for OpenAI Responses API events (rules ``RSP…``).

Lifecycle and sequence numbers are checked here; items, parts and the agreement of
``.done`` events with their deltas in :mod:`chatx.codecs.responses_event.check_items`.

A file may hold several streams one after the other (vercel/ai fixtures concatenate the
turns of a conversation): a ``response.created`` after a terminal event starts a new
stream with fresh state, and is not an error.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.byte_template import NUMBER, OBFUSCATION, TEXT
from chatx.codecs.responses_event.check_items import ItemTracker
from chatx.codecs.responses_event.check_shapes import FAMILIES
from chatx.codecs.responses_event.rules import RESPONSES_RULES
from chatx.record import Record
from chatx.validation.base import Checker, Known, catalogue, is_int

TERMINAL = {
    "response.completed": "completed",
    "response.incomplete": "incomplete",
    "response.failed": "failed",
}
STARTS = ("response.created", "response.queued")
LIFECYCLE = {
    "response.created": ("in_progress", "queued"),
    "response.queued": ("queued",),
    "response.in_progress": ("in_progress",),
}

# Every event type of the openai SDK's ResponseStreamEvent union, the Open Responses names
# for raw reasoning, and OpenAI's apply_patch tool events (newer than the SDK types chatx
# was calibrated with). Anything else is an extension (RSP029).
_FAMILY_EVENTS = {
    "response": "created queued in_progress completed incomplete failed",
    "response.output_item": "added done",
    "response.content_part": "added done",
    "response.output_text": "delta done",
    "response.output_text.annotation": "added",
    "response.refusal": "delta done",
    "response.reasoning_text": "delta done",
    "response.reasoning": "delta done",
    "response.reasoning_summary_part": "added done",
    "response.reasoning_summary_text": "delta done",
    "response.function_call_arguments": "delta done",
    "response.custom_tool_call_input": "delta done",
    "response.mcp_call_arguments": "delta done",
    "response.mcp_call": "in_progress completed failed",
    "response.mcp_list_tools": "in_progress completed failed",
    "response.code_interpreter_call_code": "delta done",
    "response.code_interpreter_call": "in_progress interpreting completed",
    "response.file_search_call": "in_progress searching completed",
    "response.web_search_call": "in_progress searching completed",
    "response.image_generation_call": "in_progress generating partial_image completed",
    "response.shell_call_command": "added delta done",
    "response.shell_call_output_content": "delta done",
    "response.compaction": "compacting",
    "response.audio": "delta done",
    "response.audio.transcript": "delta done",
    "response.apply_patch_call_operation_diff": "delta done",
}
KNOWN_TYPES = frozenset(
    {"error"}
    | {
        f"{family}.{action}"
        for family, actions in _FAMILY_EVENTS.items()
        for action in actions.split()
    }
)


class ResponsesChecker(Checker):
    """Checks a ``responses-event`` stream one record at a time."""

    format = "responses-event"
    rules = catalogue(*RESPONSES_RULES)

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self.done_at: int | None = None  # line of a [DONE] sentinel
        self.unknown_types: set[str] = set()
        self._new_stream()

    def _new_stream(self) -> None:
        self.started = False
        self.response_id: Any = None
        self.last_seq: int | None = None
        self.seq_missing = False
        self.in_progress_seen = False
        self.in_progress_warned = False
        self.terminal: str | None = None
        self.error_at: tuple[int, int] | None = None  # (line, index) of a pending error
        self.items = ItemTracker(self)
        self.last_line, self.last_index = 0, -1

    # -- per record --------------------------------------------------------------------

    def check(self, record: Record) -> None:
        if record.done:
            self.done_at = record.line
            return
        data = record.data
        etype = data.get("type") if isinstance(data, dict) else None
        if not isinstance(etype, str):
            self.report("RSP030", "event is not a JSON object with a string type")
            return
        if record.event is not None and record.event != etype:
            self.report("RSP028", f"SSE event name {record.event!r} but type {etype!r}")
        if self.done_at is not None:
            self.report("RSP008", f"{etype} after data: [DONE] (line {self.done_at})")
        if etype == "response.created" and self.started:
            self._end_stream()
            self._new_stream()
        self._check_order(data, etype)
        self._dispatch(data, etype)
        self.last_line, self.last_index = self.line, self.index

    def knows(self, record: Record) -> Known | None:
        """A delta event of a text, summary or arguments value: the next ones repeat it
        but for their delta, obfuscation and sequence number. No rule reads an
        obfuscation; a delta's one is that it is a string (each hole's value is); the
        sequence number must be the one expected (the number hole is that, RSP005). What
        checking one keeps: its number, and its delta added to the value's text, which
        RSP023 and RSP025 compare with the value's done event."""
        data = record.data
        family, _, action = data["type"].rpartition(".")  # a string: check() found it so
        seq = data.get("sequence_number")
        if action != "delta" or family not in FAMILIES or not is_int(seq):
            return None
        text = self.items.text_of(data, family)
        if text is None or not isinstance(data.get("delta"), str):
            return None
        holes = [TEXT, NUMBER]
        payload = {**data, "delta": TEXT, "sequence_number": NUMBER}
        if isinstance(data.get("obfuscation"), str):
            holes.append(OBFUSCATION)
            payload["obfuscation"] = OBFUSCATION
        deltas = text.deltas

        def take(piece: str) -> None:
            deltas.append(piece)
            self.last_seq += 1  # type: ignore[operator]  # the number hole's, as expected
            self.last_line, self.last_index = self.line, self.index

        return Known.of(payload, holes, record.event, take, self._next_seq)

    def _next_seq(self) -> int:
        return self.last_seq + 1  # type: ignore[operator]  # knows() saw a number

    def _check_order(self, data: dict[str, Any], etype: str) -> None:
        """Rules that depend only on the event's place in the stream."""
        if not self.started:
            self.started = True
            if etype not in STARTS:
                self.report("RSP001", f"stream starts with {etype}")
        self._check_sequence(data.get("sequence_number"))
        if self.error_at is not None:
            if etype != "response.failed":
                line, index = self.error_at
                self.report("RSP010", f"error event is followed by {etype}", line=line, index=index)
            self.error_at = None
        if self.terminal is not None:
            self.report("RSP008", f"{etype} after {self.terminal}")
        if etype not in LIFECYCLE and not self.in_progress_seen and not self.in_progress_warned:
            self.in_progress_warned = True
            self.report("RSP003", f"{etype} before any response.in_progress")

    def _check_sequence(self, seq: Any) -> None:
        if not is_int(seq):
            if not self.seq_missing:
                self.seq_missing = True
                self.report(
                    "RSP004",
                    "event has no integer sequence_number (later events of "
                    "this stream are not reported again)",
                )
            return
        if self.last_seq is None:
            if seq != 0:
                self.report("RSP006", f"first sequence_number is {seq}, not 0")
        elif seq != self.last_seq + 1:
            what = "repeats" if seq <= self.last_seq else "skips to"
            self.report("RSP005", f"sequence_number {what} {seq} after {self.last_seq}")
        self.last_seq = seq

    def _dispatch(self, data: dict[str, Any], etype: str) -> None:
        if etype in LIFECYCLE:
            self._lifecycle(data, etype)
        elif etype in TERMINAL:
            self._terminal(data, etype)
        elif etype == "error":
            self._error(data)
        elif etype == "response.output_item.added":
            self.items.added(data)
        elif etype == "response.output_item.done":
            self.items.item_done(data)
        elif etype in ("response.content_part.added", "response.reasoning_summary_part.added"):
            self.items.part_added(data, etype, _part_kind(etype))
        elif etype in ("response.content_part.done", "response.reasoning_summary_part.done"):
            self.items.part_done(data, etype, _part_kind(etype))
        else:
            family, _, action = etype.rpartition(".")
            if family in FAMILIES and action in ("delta", "done"):
                self.items.value_event(data, etype, family, action == "delta")
            else:
                self._other(data, etype)

    def _other(self, data: dict[str, Any], etype: str) -> None:
        if etype not in KNOWN_TYPES and etype not in self.unknown_types:
            self.unknown_types.add(etype)
            self.report("RSP029", f"unknown event type {etype!r} (reported once)")
        if "output_index" in data or "item_id" in data:
            self.items.item_for(data, etype, required=False)

    # -- lifecycle -----------------------------------------------------------------------

    def _response(self, data: dict[str, Any], etype: str) -> dict[str, Any] | None:
        response = data.get("response")
        if not isinstance(response, dict):
            self.report("RSP030", f"{etype} has no response object")
            return None
        rid = response.get("id")
        if self.response_id is None:
            self.response_id = rid
        elif rid is not None and rid != self.response_id:
            self.report(
                "RSP032", f"{etype} is for response {rid!r}; the stream is {self.response_id!r}"
            )
        return response

    def _lifecycle(self, data: dict[str, Any], etype: str) -> None:
        if etype == "response.in_progress":
            self.in_progress_seen = True
        response = self._response(data, etype)
        if response is None:
            return
        status = response.get("status")
        if status not in LIFECYCLE[etype]:
            self.report(
                "RSP002",
                f"{etype} has response.status {status!r}, expected {' or '.join(LIFECYCLE[etype])}",
            )
        if etype in STARTS and response.get("output"):
            self.report("RSP002", f"{etype} already has output items")

    def _terminal(self, data: dict[str, Any], etype: str) -> None:
        if self.terminal is None:
            self.terminal = etype
        response = self._response(data, etype)
        if response is None:
            return
        status = response.get("status")
        if status != TERMINAL[etype]:
            self.report("RSP009", f"{etype} has response.status {status!r}")
        self.items.terminal(etype, response)

    def _error(self, data: dict[str, Any]) -> None:
        self.error_at = (self.line, self.index)
        nested = data.get("error")
        # Both shapes occur: flat (documented) and nested under "error" (OpenAI's wire).
        message = nested.get("message") if isinstance(nested, dict) else data.get("message")
        if not isinstance(message, str):
            self.report("RSP031", "error event has neither a message nor an error object with one")

    # -- end of input ----------------------------------------------------------------------

    def _end_stream(self) -> None:
        """The stream ends (end of input, or another stream starts)."""
        if self.error_at is not None:
            line, index = self.error_at
            self.report(
                "RSP010",
                "error event is the last event; response.failed never came",
                line=line,
                index=index,
            )
        if self.started and self.terminal is None:
            self.report(
                "RSP007",
                "stream ends without response.completed, response.incomplete or response.failed",
                line=self.last_line,
                index=self.last_index,
            )

    def finish(self) -> list:
        self._end_stream()
        return self.findings


def _part_kind(etype: str) -> str:
    return "summary" if "summary" in etype else "content"
