"""Streaming checker for Anthropic Messages streams (rules ``ANT…``).

A message is ``message_start``, its content blocks (``content_block_start``, deltas,
``content_block_stop``, numbered from 0), one or more ``message_delta`` and one
``message_stop``; ``ping`` may come anywhere, and an ``error`` event ends the stream in
place of ``message_stop``. A ``message_start`` after the end begins the next message of
a file that holds several (vercel's fixtures concatenate turns).

This module is the test oracle for the codec beside it: it reads records as a client
does and never calls the decoder or the encoder. It keeps, per message, the blocks by
index (with a tool block's ``partial_json`` fragments until its stop) and the usage
counts so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from chatx.codecs.anthropic_event.rules import ANTHROPIC_RULES
from chatx.codecs.byte_template import TEXT
from chatx.pieces import Pieces
from chatx.record import Record
from chatx.validation.base import Checker, Known, catalogue, is_int

FORMAT = "anthropic-event"

BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})
EVENTS = BLOCK_EVENTS | {"message_start", "message_delta", "message_stop", "ping", "error"}
# Blocks whose input streams as input_json_delta (the SDK's TRACKS_TOOL_INPUT).
TOOL_INPUT = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
# The deltas each streamed block type takes.
DELTAS_OF: dict[str, frozenset[str]] = {
    "text": frozenset({"text_delta", "citations_delta"}),
    "thinking": frozenset({"thinking_delta", "signature_delta"}),
    "compaction": frozenset({"compaction_delta"}),
    **{kind: frozenset({"input_json_delta"}) for kind in TOOL_INPUT},
}
# Blocks that arrive whole in content_block_start and take no delta.
WHOLE_BLOCKS = frozenset(
    (
        "redacted_thinking",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "advisor_tool_result",
        "mcp_tool_result",
        "mcp_tool_listing",
        "container_upload",
        "fallback",
    )
)
DELTAS = frozenset().union(*DELTAS_OF.values())
# The field each delta type carries, its type and the word for it.
DELTA_FIELD: dict[str, tuple[str, type, str]] = {
    "text_delta": ("text", str, "string"),
    "input_json_delta": ("partial_json", str, "string"),
    "thinking_delta": ("thinking", str, "string"),
    "signature_delta": ("signature", str, "string"),
    "citations_delta": ("citation", dict, "object"),
}
# The deltas whose text a record of a run holds (validation.base.Known), by type.
_TEXTS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
# The stop reasons that end a message where the token limit fell, in mid-block.
CUT_OFF = frozenset(("max_tokens", "model_context_window_exceeded"))
COUNTS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(slots=True)
class CheckedBlock:
    kind: str
    line: int  # where its content_block_start is
    stop_line: int | None = None
    fragments: Pieces | None = None  # a tool block's partial_json, until its stop
    said_open: bool = False  # reported open at message_delta (ANT010) already


@dataclass(slots=True)
class CheckedMessage:
    started: bool = False  # message_start seen, or reported missing (ANT001)
    end_line: int | None = None  # message_stop or error event
    end_what: str = ""
    blocks: dict[int, CheckedBlock] = field(default_factory=dict)
    next_index: int = 0
    delta_line: int | None = None  # the first message_delta
    stop_reason: Any = None
    usage: dict[str, tuple[int, int]] = field(default_factory=dict)  # count -> (value, line)
    cut: tuple[str, int, int] | None = None  # a tool input that does not parse (ANT012)

    @property
    def open(self) -> bool:
        return self.started and self.end_line is None


class AnthropicChecker(Checker):
    """Checks an ``anthropic-event`` stream one record at a time."""

    format = FORMAT
    rules = catalogue(*ANTHROPIC_RULES)

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self.message = CheckedMessage()
        self.last_line, self.last_index = 0, -1  # the current message's last record

    def check(self, record: Record) -> None:
        if record.done:
            return  # no Anthropic server sends [DONE]; the SDKs skip a block without a name
        data = record.data
        etype = data.get("type") if isinstance(data, dict) else None
        if not isinstance(etype, str):
            self.report("ANT004", "event is not a JSON object with a string type")
            return
        self._check_name(record.event, etype)
        if etype not in EVENTS:
            self.report("ANT005", f"unknown event type {etype!r}")
            return
        if etype == "ping":
            if self.message.open:
                self.last_line, self.last_index = self.line, self.index
            return
        if etype == "message_start":
            self._message_start(data)
            return
        message = self.message
        if etype == "error":
            self._error(data)
            return
        if message.end_line is not None:
            self.report(
                "ANT002", f"{etype} after the {message.end_what} at line {message.end_line}"
            )
            return
        self.last_line, self.last_index = self.line, self.index
        if not message.started:
            message.started = True  # said once; the events that follow are checked as usual
            self.report("ANT001", f"stream starts with {etype}, not message_start")
        self._in_message(etype, data)

    def knows(self, record: Record) -> Known | None:
        """A text, thinking or tool-input delta of an open block: the next ones repeat it
        but for that text. A rule reads of it only that it is a string (ANT004; a hole's
        value is one). What checking one keeps: the record as the message's last, and
        a tool input's fragment, which ANT012 parses at the block's stop."""
        data = record.data
        delta: Any = data.get("delta")
        if data.get("type") != "content_block_delta" or not isinstance(delta, dict):
            return None
        name = _TEXTS.get(delta.get("type"))  # type: ignore[arg-type]
        block = self.message.blocks.get(data.get("index"))
        if name is None or block is None or not isinstance(delta.get(name), str):
            return None
        fragments = block.fragments

        def take(text: str) -> None:
            if fragments is not None:
                fragments.append(text)
            self.last_line, self.last_index = self.line, self.index

        payload = {**data, "delta": {**delta, name: TEXT}}
        return Known.of(payload, [TEXT], record.event, take)

    def _in_message(self, etype: str, data: dict[str, Any]) -> None:
        """An event of the open message."""
        if etype == "content_block_start":
            self._block_start(data)
        elif etype == "content_block_delta":
            self._block_delta(data)
        elif etype == "content_block_stop":
            self._block_stop(data)
        elif etype == "message_delta":
            self._message_delta(data)
        else:
            self._message_stop()

    def _check_name(self, name: str | None, etype: str) -> None:
        if name is None:
            if self.container == "sse":
                self.report("ANT006", f"SSE block without an event: line ({etype} in its data)")
        elif name != etype:
            self.report("ANT006", f"SSE event name {name!r} but type {etype!r}")

    def _message_start(self, data: dict[str, Any]) -> None:
        if self.message.open:
            self._unended(f"the message_start at line {self.line} begins another")
        self.message = message = CheckedMessage(started=True)
        self.last_line, self.last_index = self.line, self.index
        body = data.get("message")
        if not isinstance(body, dict):
            self.report("ANT004", "message_start without a message object")
            return
        content = body.get("content")
        if isinstance(content, list):
            # A message_start may hold finished blocks already (programmatic tool calling).
            message.next_index = len(content)
        message.stop_reason = body.get("stop_reason")
        self._usage(body.get("usage"), "message_start", ("input_tokens", "output_tokens"))

    def _error(self, data: dict[str, Any]) -> None:
        message = self.message
        self._cut_input()  # the stream ends here, before it says why it stopped
        error = data.get("error")
        said = error.get("message") if isinstance(error, dict) else None
        if not isinstance(said, str) or not isinstance(error.get("type"), str):  # type: ignore[union-attr]
            self.report("ANT004", 'error event without an "error" object with type and message')
        self.report(
            "ANT014", f"error event: {said}" if isinstance(said, str) else f"error event: {error!r}"
        )
        if message.end_line is not None:
            self.report(
                "ANT002", f"error event after the {message.end_what} at line {message.end_line}"
            )
            return
        self.last_line, self.last_index = self.line, self.index
        message.started = True
        message.end_line, message.end_what = self.line, "error event"

    def _index(self, data: dict[str, Any], etype: str) -> int | None:
        index = data.get("index")
        if not is_int(index):
            self.report("ANT004", f"{etype} without an integer index")
            return None
        return index

    def _block_start(self, data: dict[str, Any]) -> None:
        message = self.message
        if message.delta_line is not None:
            self.report(
                "ANT010",
                f"content_block_start after the message_delta at line {message.delta_line}",
            )
        index = self._index(data, "content_block_start")
        block = data.get("content_block")
        kind = block.get("type") if isinstance(block, dict) else None
        if index is None:
            return
        if not isinstance(kind, str):
            self.report("ANT004", "content_block_start without a content_block object with a type")
            return
        before = message.blocks.get(index)
        if before is not None:
            self.report(
                "ANT007", f"content block index {index} again (first started at line {before.line})"
            )
        elif index != message.next_index:
            self.report(
                "ANT007", f"content block index {index}; the next one is {message.next_index}"
            )
        self._cut_input()  # another block follows: no limit cut that one off
        message.next_index = max(message.next_index, index + 1)
        if kind not in DELTAS_OF and kind not in WHOLE_BLOCKS:
            self.report("ANT005", f"unknown content block type {kind!r}")
        message.blocks[index] = CheckedBlock(
            kind, self.line, fragments=Pieces() if kind in TOOL_INPUT else None
        )

    def _open_block(self, data: dict[str, Any], etype: str) -> tuple[int, CheckedBlock] | None:
        """The block an event addresses, if it is open (ANT008 otherwise)."""
        index = self._index(data, etype)
        if index is None:
            return None
        block = self.message.blocks.get(index)
        if block is None:
            self.report("ANT008", f"{etype} for content block {index}, which was never started")
            return None
        if block.stop_line is not None:
            self.report(
                "ANT008",
                f"{etype} for content block {index} after its content_block_stop at line "
                f"{block.stop_line}",
            )
            return None
        return index, block

    def _block_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if not isinstance(dtype, str):
            self._index(data, "content_block_delta")
            self.report("ANT004", "content_block_delta without a delta object with a type")
            return
        found = self._open_block(data, "content_block_delta")
        if found is None:
            return
        index, block = found
        if dtype not in DELTAS:
            self.report("ANT005", f"unknown delta type {dtype!r}")
            return
        name, kind, word = DELTA_FIELD.get(dtype, ("", object, ""))
        value = delta.get(name) if name else None  # type: ignore[union-attr]
        if name and not isinstance(value, kind):
            self.report("ANT004", f"{dtype} without a {name} {word}")
            return
        if block.kind in DELTAS_OF and dtype not in DELTAS_OF[block.kind]:
            self.report("ANT009", f"{dtype} in the {block.kind} block {index}")
        elif block.kind in WHOLE_BLOCKS:
            self.report("ANT009", f"{dtype} in the {block.kind} block {index}, which takes none")
        elif block.fragments is not None and isinstance(value, str):
            block.fragments.append(value)

    def _block_stop(self, data: dict[str, Any]) -> None:
        found = self._open_block(data, "content_block_stop")
        if found is None:
            return
        index, block = found
        block.stop_line = self.line
        if block.fragments is None:
            return
        text = block.fragments.text()
        block.fragments = None
        if text == "":
            return  # no input streamed: content_block_start's input ({}) stands
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        else:
            if isinstance(value, dict):
                return
        what = "does not parse as JSON" if value is None else f"is a JSON {type(value).__name__}"
        said = f"the input of {block.kind} block {index} {what}, not an object"
        if value is None:
            # Cut off, it is what a message that stops on max_tokens ends with: whether
            # this is its last block and how it stops is known later.
            self.message.cut = (said, self.line, self.index)
        else:
            self.report("ANT012", said)

    def _cut_input(self, stop_reason: Any = None) -> None:
        """Say the tool input held back at its block stop unless the message stopped on
        max_tokens right after it (the limit cut it off: a client retries)."""
        cut, self.message.cut = self.message.cut, None
        if cut is not None and stop_reason not in CUT_OFF:
            said, line, index = cut
            self.report("ANT012", said, line=line, index=index)

    def _message_delta(self, data: dict[str, Any]) -> None:
        message = self.message
        self._open_blocks("message_delta")
        message.delta_line = message.delta_line or self.line
        delta = data.get("delta")
        if not isinstance(delta, dict):
            self.report("ANT004", "message_delta without a delta object")
        elif delta.get("stop_reason") is not None:
            message.stop_reason = delta["stop_reason"]
        self._usage(data.get("usage"), "message_delta", ("output_tokens",))

    def _message_stop(self) -> None:
        message = self.message
        self._open_blocks("message_stop")
        if message.stop_reason is None:
            why = (
                "no message_delta before it"
                if message.delta_line is None
                else "no message_delta gives one"
            )
            self.report("ANT011", f"message_stop without a stop_reason: {why}")
        self._cut_input(message.stop_reason)
        message.end_line, message.end_what = self.line, "message_stop"

    def _open_blocks(self, etype: str) -> None:
        for index, block in self.message.blocks.items():
            if block.stop_line is None and not block.said_open:
                block.said_open = True
                self.report(
                    "ANT010",
                    f"{etype} while content block {index} (started at line {block.line}) "
                    "has no content_block_stop",
                )

    def _usage(self, usage: Any, etype: str, required: tuple[str, ...]) -> None:
        if not isinstance(usage, dict):
            self.report("ANT013", f"{etype} without a usage object")
            return
        for key in required:
            if usage.get(key) is None:
                self.report("ANT013", f"{etype} usage has no {key}")
        counts = self.message.usage
        if "iterations" in usage:
            # Compaction and advisor calls run several iterations: message_start counts the
            # first, and a message_delta's top-level counts are its last one's alone (the
            # whole is in ``iterations``), so they are not compared with what came before.
            counts.clear()
        for key in COUNTS:
            value = usage.get(key)
            if value is None:
                continue
            if not is_int(value) or value < 0:
                self.report(
                    "ANT013", f"{etype} usage.{key} is {value!r}, not a non-negative integer"
                )
                continue
            before = counts.get(key)
            if before is not None and value < before[0]:
                self.report(
                    "ANT013",
                    f"{etype} usage.{key} {value} is below {before[0]} (line {before[1]}): "
                    "the counts are cumulative",
                )
            counts[key] = (value, self.line)

    def _unended(self, why: str) -> None:
        self._cut_input()
        blocks = [i for i, b in self.message.blocks.items() if b.stop_line is None]
        still = f", with content block {blocks[0]} open" if blocks else ""
        self.report(
            "ANT003",
            f"the message ends without message_stop{still}: {why}",
            line=self.last_line,
            index=self.last_index,
        )

    def finish(self) -> list:
        if self.message.open:
            self._unended("the stream ends")
        return self.findings
