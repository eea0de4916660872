"""Streaming checker for Llama Stack's legacy inference stream (rules ``LLS…``).

Chunks look like ``{"event": {"event_type", "delta", "stop_reason", "logprobs"},
"metrics": [...] | null}``. A tool call arrives in one of three shapes, all valid:

* streamed by the model's own parser: ``started`` → ``in_progress``* → ``succeeded`` or
  ``failed``;
* written as text, then one lone ``succeeded`` (the server parsed the message);
* from Llama Stack's OpenAI-compat layer (``convert_openai_chat_completion_stream`` with
  incremental tool calls): ``in_progress`` fragments with no ``started`` — ``name(``, the
  argument fragments, ``)`` — then ``succeeded`` or ``failed``; with parallel calls the
  fragments of several calls come first and each call's ``)`` + result at the end.

A failure is one ``{"error": {"message": …}}`` record, after which the server writes
nothing (server.py ``sse_generator``): it ends the stream in place of ``complete``.
A ``start`` after the end (``complete`` or an error frame) begins the next stream of a
file that holds several, as chatx writes them from a Responses file of several turns.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.byte_template import TEXT
from chatx.codecs.llama_stack_event.rules import LLAMA_STACK_RULES
from chatx.record import Record
from chatx.validation.base import Checker, Known, catalogue, is_int

EVENT_TYPES = ("start", "progress", "complete")
DELTA_TYPES = ("text", "tool_call", "image")
PARSE_STATUSES = ("started", "in_progress", "succeeded", "failed")


class LlamaStackChecker(Checker):
    """Checks a ``llama-stack-event`` stream one record at a time."""

    format = "llama-stack-event"
    rules = catalogue(*LLAMA_STACK_RULES)

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self._new_stream(0)

    def _new_stream(self, first: int) -> None:
        self.first = first  # index of the stream's first record
        self.seen_start = False
        self.complete_line: int | None = None
        self.error_line: int | None = None
        self.call_line: int | None = None  # line of the open call's "started" delta
        self.loose_line: int | None = None  # first in_progress delta with no "started"
        self.last_line, self.last_index = 0, -1

    def check(self, record: Record) -> None:
        if record.done:
            return
        chunk = record.data
        if isinstance(chunk, dict) and chunk.get("error"):
            self._after_end("an error frame")
            self._error_frame(chunk["error"])
            return
        event = chunk.get("event") if isinstance(chunk, dict) else None
        if not isinstance(event, dict) or event.get("event_type") not in EVENT_TYPES:
            self._after_end("a record")
            self.report(
                "LLS003", "chunk has no event object with event_type start, progress or complete"
            )
            return
        kind = event["event_type"]
        if kind == "start" and (self.complete_line or self.error_line) is not None:
            self._end_stream()
            self._new_stream(self.index)
        self.last_line, self.last_index = self.line, self.index
        self._check_place(kind)
        delta = event.get("delta")
        if not isinstance(delta, dict) or delta.get("type") not in DELTA_TYPES:
            self.report("LLS003", f"{kind} event has no delta of type text, tool_call or image")
        elif delta["type"] == "tool_call":
            self._check_tool_call(delta)
        self._check_metrics(kind, chunk.get("metrics"))
        if kind == "complete" and not event.get("stop_reason"):
            self.report("LLS006", "complete event has no stop_reason")

    def knows(self, record: Record) -> Known | None:
        """A progress event of text: the next ones repeat it but for that text, which no
        rule reads. What checking one keeps: the record as the stream's last."""
        event = record.data.get("event")
        delta = event.get("delta")  # check() found an event object
        if event.get("event_type") != "progress" or not isinstance(delta, dict):
            return None
        if delta.get("type") != "text" or not isinstance(delta.get("text"), str):
            return None
        payload = {**record.data, "event": {**event, "delta": {**delta, "text": TEXT}}}
        return Known.of(payload, [TEXT], record.event, self._take)

    def _take(self, text: str) -> None:
        self.last_line, self.last_index = self.line, self.index

    def _after_end(self, what: str) -> None:
        """A record that is no start, after the error frame that ended the stream."""
        self.last_line, self.last_index = self.line, self.index
        if self.error_line is not None:
            self.report(
                "LLS002",
                f"{what} after the error frame at line {self.error_line}: the server writes "
                "nothing after it, and its client stops reading there",
            )

    def _error_frame(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(message, str) or not message:
            self.report(
                "LLS003",
                'error frame without a message: Llama Stack writes {"error": {"message": …}}',
            )
        said = message if isinstance(message, str) else repr(error)
        self.report("LLS009", f"error frame: {said}")
        self.error_line = self.error_line or self.line

    def _check_place(self, kind: str) -> None:
        if self.error_line is not None:
            self._after_end(f"{kind} event")
        elif self.complete_line is not None:
            self.report(
                "LLS002", f"{kind} event after the complete event at line {self.complete_line}"
            )
        if kind == "start":
            if self.seen_start or self.index > self.first:
                self.report("LLS001", "start event that is not the first event")
            self.seen_start = True
            return
        if not self.seen_start:
            self.seen_start = True  # report a missing start once, not on every event
            self.report("LLS001", f"stream starts with a {kind} event")
        if kind == "complete":
            self._unfinished_calls("complete event while")
            self.complete_line = self.complete_line or self.line

    def _unfinished_calls(self, what: str, **where: int) -> None:
        if self.call_line is not None:
            self.report(
                "LLS004",
                f"{what} the tool call started at line {self.call_line} is unfinished",
                **where,
            )
        if self.loose_line is not None:
            self.report(
                "LLS004",
                f"{what} the in_progress tool_call fragments from line {self.loose_line} "
                "have no succeeded or failed delta",
                **where,
            )
        self.call_line = self.loose_line = None

    def _check_tool_call(self, delta: dict[str, Any]) -> None:
        status = delta.get("parse_status")
        if status not in PARSE_STATUSES:
            self.report("LLS004", f"tool_call delta with parse_status {status!r}")
        elif status == "started":
            self._unfinished_calls("tool call started while")
            self.call_line = self.line
        elif status == "in_progress":
            if self.call_line is None and self.loose_line is None:
                # The OpenAI-compat layer's incremental shape: no "started".
                self.loose_line = self.line
        else:
            # A lone "succeeded" (no started) is the text-then-parse shape: valid. With
            # parallel calls in the compat shape, a call's ")" fragment follows the result
            # of the call before it.
            self.call_line = self.loose_line = None
            if status == "succeeded" and not _is_tool_call(delta.get("tool_call")):
                self.report(
                    "LLS005",
                    "succeeded tool_call delta does not carry a ToolCall "
                    "object with call_id, tool_name and arguments",
                )

    def _check_metrics(self, kind: str, metrics: Any) -> None:
        if not metrics:
            return
        if kind != "complete":
            self.report("LLS007", f"metrics on a {kind} event")
            return
        values: dict[str, Any] = {}
        for metric in metrics if isinstance(metrics, list) else [metrics]:
            name = metric.get("metric") if isinstance(metric, dict) else None
            value = metric.get("value") if isinstance(metric, dict) else None
            if not _is_count(value):
                self.report(
                    "LLS008", f"metric {name!r} has value {value!r}, not a non-negative number"
                )
                continue
            values[str(name)] = value
        prompt, completion = values.get("prompt_tokens"), values.get("completion_tokens")
        total = values.get("total_tokens")
        if (
            prompt is not None
            and completion is not None
            and total is not None
            and total < prompt + completion
        ):
            # A total may count more than its parts (xAI's counts reasoning tokens), never
            # less.
            self.report(
                "LLS008",
                f"total_tokens {total} < prompt_tokens {prompt} + completion_tokens {completion}",
            )

    def _end_stream(self) -> None:
        """The stream ends: at the end of input, or where the next one starts."""
        if self.index < self.first:
            return
        if self.error_line is not None:
            return  # the server stopped where it failed, calls and all
        where = {"line": self.last_line, "index": self.last_index}
        self._unfinished_calls("the stream ends while", **where)
        if self.complete_line is None:
            self.report("LLS002", "stream ends without a complete event", **where)

    def finish(self) -> list:
        self._end_stream()
        return self.findings


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, dict) and all(
        k in value for k in ("call_id", "tool_name", "arguments")
    )


def _is_count(value: Any) -> bool:
    return (is_int(value) or isinstance(value, float)) and value >= 0
