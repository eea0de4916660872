"""Streaming checker for Llama Stack's legacy inference stream (rules ``LLS…``).

Chunks look like ``{"event": {"event_type", "delta", "stop_reason", "logprobs"},
"metrics": [...] | null}``. A tool call either streams (``started`` → ``in_progress``* →
``succeeded``/``failed``) or arrives as one ``succeeded`` delta after the model wrote the
call as text; both shapes are valid.
"""

from __future__ import annotations

from typing import Any

from chatx.record import Record
from chatx.validation.base import Checker, is_int

EVENT_TYPES = ("start", "progress", "complete")
DELTA_TYPES = ("text", "tool_call", "image")
PARSE_STATUSES = ("started", "in_progress", "succeeded", "failed")


class LlamaStackChecker(Checker):
    """Checks a ``llama-stack-event`` stream one record at a time."""

    format = "llama-stack-event"

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self.seen_start = False
        self.complete_line: int | None = None
        self.call_line: int | None = None  # line of the open call's "started" delta
        self.last_line, self.last_index = 0, -1

    def check(self, record: Record) -> None:
        if record.done:
            return
        self.last_line, self.last_index = self.line, self.index
        chunk = record.data
        event = chunk.get("event") if isinstance(chunk, dict) else None
        if not isinstance(event, dict) or event.get("event_type") not in EVENT_TYPES:
            self.report(
                "LLS003", "chunk has no event object with event_type start, progress or complete"
            )
            return
        kind = event["event_type"]
        self._check_place(kind)
        delta = event.get("delta")
        if not isinstance(delta, dict) or delta.get("type") not in DELTA_TYPES:
            self.report("LLS003", f"{kind} event has no delta of type text, tool_call or image")
        elif delta["type"] == "tool_call":
            self._check_tool_call(delta)
        self._check_metrics(kind, chunk.get("metrics"))
        if kind == "complete" and not event.get("stop_reason"):
            self.report("LLS006", "complete event has no stop_reason")

    def _check_place(self, kind: str) -> None:
        if self.complete_line is not None:
            self.report(
                "LLS002", f"{kind} event after the complete event at line {self.complete_line}"
            )
        if kind == "start":
            if self.seen_start or self.index > 0:
                self.report("LLS001", "start event that is not the first event")
            self.seen_start = True
            return
        if not self.seen_start:
            self.seen_start = True  # report a missing start once, not on every event
            self.report("LLS001", f"stream starts with a {kind} event")
        if kind == "complete":
            if self.call_line is not None:
                self.report(
                    "LLS004",
                    f"complete event while the tool call started at line "
                    f"{self.call_line} is unfinished",
                )
                self.call_line = None
            self.complete_line = self.complete_line or self.line

    def _check_tool_call(self, delta: dict[str, Any]) -> None:
        status = delta.get("parse_status")
        if status not in PARSE_STATUSES:
            self.report("LLS004", f"tool_call delta with parse_status {status!r}")
        elif status == "started":
            if self.call_line is not None:
                self.report(
                    "LLS004",
                    f"tool call started while the one started at line "
                    f"{self.call_line} is unfinished",
                )
            self.call_line = self.line
        elif status == "in_progress":
            if self.call_line is None:
                self.report("LLS004", "in_progress tool_call delta without a started one")
        else:
            # A lone "succeeded" (no started) is the text-then-parse shape: valid.
            self.call_line = None
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
        if None not in (prompt, completion, total) and total != prompt + completion:
            self.report(
                "LLS008",
                f"total_tokens {total} != prompt_tokens {prompt} + completion_tokens {completion}",
            )

    def finish(self) -> list:
        if self.index < 0:
            return self.findings
        where = {"line": self.last_line, "index": self.last_index}
        if self.call_line is not None:
            self.report(
                "LLS004",
                f"tool call started at line {self.call_line} never succeeds or fails",
                **where,
            )
        if self.complete_line is None:
            self.report("LLS002", "stream ends without a complete event", **where)
        return self.findings


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, dict) and all(
        k in value for k in ("call_id", "tool_name", "arguments")
    )


def _is_count(value: Any) -> bool:
    return (is_int(value) or isinstance(value, float)) and value >= 0
