"""Decode Anthropic Messages stream events into IR events.

One record gives one batch. ``message_start`` opens the stream and lane 0; each content
block is one IR item: ``text`` a message, ``thinking`` and ``redacted_thinking`` a
reasoning item (its signature, or the redacted data, closes it: ``ItemEnd.signature`` /
``ItemEnd.encrypted``), ``tool_use`` a tool call whose ``input_json_delta`` fragments are
its argument deltas (a call that streams no argument says ``{}``). Server tool blocks
(``server_tool_use``, ``web_search_tool_result``…) and any block type the IR has no words
for pass through whole, as :class:`~chatx.ir.Passthrough` records of an item.
``message_delta`` gives the ``Usage`` and the ``Finish``, ``message_stop`` the
``StreamEnd``, an ``error`` event an ``Error``.

**Residue.** Each record is compared with the canonical record the encoder writes for
its events (:mod:`.records`); the difference is the event's ``extra`` (keys the source
left out are ``ABSENT``). What this codec's encoder needs beyond the source's fields is
the event's own note, an :class:`~chatx.codecs.anthropic_event.records.AnthropicOwn`,
which other encoders never read: ``usage`` (the counts of ``message_start``, which the IR
says once, at ``message_delta``), ``content`` and ``stop`` (a ``message_start`` that holds
its content already, as programmatic tool calling sends it; the events of that content
say ``prefill``), ``seed`` (content a block start already holds), ``redacted`` (the
redacted thinking), ``again`` (a delta of content said elsewhere: a seed, a prefilled
block, the ``{}`` of a call without arguments), ``cut`` (an item closed because the input
ended). A record with no IR content (``ping``, an empty delta, a ``signature_delta``, a
``citations_delta``) is a ``Meta`` whose note's ``record`` is the record itself; what
another format should hear of it is that ``Meta``'s ``extra``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from chatx import ir
from chatx.codecs.base import object_payload
from chatx.codecs.whole import expand
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import ABSENT, exact_diff

from . import records as r
from . import whole
from .blocks import Blocks, kept
from .read_message import ReadMessage

NAME = r.NAME


# What is said of a record that is no Anthropic event: of [DONE], of a value that is no
# object, and the shape expected (object_payload).
_PAYLOAD = (
    "[DONE] is not part of an Anthropic stream: left out",
    "an Anthropic event must be a JSON object",
    '{"type": "message_start" | "content_block_delta" | …}',
)


class AnthropicDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one record.

    It shares the :class:`~chatx.codecs.anthropic_event.read_message.ReadMessage`
    (``read``) with its part ``blocks``, which reads content blocks. ``handlers`` is
    the table from a record's type to what reads it; the message's own records (start,
    delta, stop, ping, error) are the decoder's."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.renamed = False  # an SSE event name that differs from the type was noted
        self.read = ReadMessage()
        self.blocks = blocks = Blocks(self.read, notes, self._implicit)
        self.handlers: dict[str, Callable[[dict[str, Any]], list[ir.Event]]] = {
            "message_start": self._start,
            "content_block_start": blocks.start,
            "content_block_delta": blocks.delta,
            "content_block_stop": blocks.stop,
            "message_delta": self._message_delta,
            "message_stop": self._stop,
            "ping": self._ping,
            "error": self._error,
        }

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one record (an event, or a whole ``message`` object)."""
        self.read.line = record.line
        data = self._payload(record)
        if data is None:
            return []
        kind = data.get("type")
        handler = self.handlers.get(kind) if type(kind) is str else None
        if handler is None:
            return self._other(data, kind, record.line)
        if record.event is not None and record.event != kind and not self.renamed:
            self.renamed = True
            self.notes.repaired(
                f"SSE event name {record.event!r} differs from its type {kind!r}: "
                "written as the type"
            )
        return handler(data)

    def finish(self) -> list[ir.Event]:
        """End of input. A message without its ``message_stop`` is left unended (no
        ``StreamEnd``): nothing is invented. Its open block closes for other formats'
        sake, its note ``cut`` so that anthropic output leaves it as it came."""
        out: list[ir.Event] = []
        if self.read.open:
            self.notes.warning("the stream ends without message_stop")
            block = self.read.block
            if block is not None and block.kind is not None:
                out.append(ir.ItemEnd(0, block.kind, block.call, {}, None, None, r.CUT))
            self.read.restart()
        return out

    def _payload(self, record: Record) -> dict[str, Any] | None:
        return object_payload(record, self.notes, *_PAYLOAD)

    def _other(self, data: dict[str, Any], kind: Any, line: int) -> list[ir.Event]:
        """A whole ``message``, or an event type this decoder does not know."""
        if not self.read.open and whole.is_message(data):
            return expand(self.feed, whole.events(data, self.notes), line)
        if type(kind) is not str:
            raise InputError(
                'an Anthropic event needs a string "type"',
                line=line,
                expected='{"type": "message_start" | "content_block_delta" | …}',
            )
        self.notes.warning(f"event type {kind!r}: kept as it is, no IR meaning")
        return [ir.Passthrough(NAME, data, kind, line)]

    def _implicit(self, out: list[ir.Event]) -> None:
        """A content record before any ``message_start``: the stream is read as begun
        (anthropic output writes no start it did not have)."""
        if not self.read.open:
            self.notes.warning("the stream has no message_start")
            self.read.restart()
            self.read.open = True
            out.append(ir.StreamStart("", own=r.AnthropicOwn(implicit=True)))
            out.append(ir.LaneStart(0))

    # --- the message ---------------------------------------------------------------------

    def _start(self, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        if self.read.open:
            self.notes.warning("message_start before the last message stopped: a new one begins")
            self.blocks.close(out, cut=True)
        self.read.restart()
        self.read.open = True
        message = data.get("message")
        if type(message) is not dict:
            message = {}
        mid, model = message.get("id"), message.get("model")
        mid = mid if type(mid) is str else ""
        model = model if type(model) is str else None
        usage = message.get("usage")
        self.read.start = counts = r.counts_of(usage)
        content = message.get("content")
        content = content if type(content) is list else []
        stop = [message.get("stop_reason"), message.get("stop_sequence")]
        canonical = r.message_start(mid, model, dict(counts), content, stop)
        own = r.AnthropicOwn(
            usage=counts, content=content or None, stop=stop if stop != [None, None] else None
        )
        out.append(ir.StreamStart(mid, model, None, exact_diff(data, canonical), own))
        out.append(ir.LaneStart(0))
        for block in content:
            self._prefill(block, out)
        if type(stop[0]) is str and stop[0]:
            finish = r.finish_of(stop[0], stop[1])
            finish.own = r.PREFILL
            out.append(finish)
        return out

    def _prefill(self, block: Any, out: list[ir.Event]) -> None:
        """A content block ``message_start`` already holds (programmatic tool calling
        sends the whole turn there): its IR events, which anthropic output does not write
        again (its note ``prefill``)."""
        btype = block.get("type") if type(block) is dict else None
        kind = r.BLOCK_KINDS.get(btype) if type(btype) is str else None
        if kind is None or btype == "redacted_thinking":
            self.notes.warning(f"a {btype or 'untyped'} block in message_start: kept as it is")
            return
        known = {"type", "id", "name", "input", "text", "thinking", "signature"}
        rest = {k: v for k, v in block.items() if k not in known}
        if kind == "tool_call":
            self._prefilled_call(block, rest, out)
            return
        out.append(ir.ItemStart(0, kind, None, None, None, None, rest, r.PREFILL))
        text = block.get("text" if kind == "message" else "thinking")
        if type(text) is str and text:
            if kind == "message":
                out.append(ir.TextDelta(0, text, None, {}, None, r.AGAIN))
            else:
                out.append(ir.ReasoningDelta(0, text, "text", 0, {}, None, None, r.AGAIN))
        signature = block.get("signature")
        end = ir.ItemEnd(0, kind, None, {}, None, None, r.PREFILL)
        end.signature = signature if type(signature) is str and signature else None
        out.append(end)

    def _prefilled_call(
        self, block: dict[str, Any], extra: dict[str, Any], out: list[ir.Event]
    ) -> None:
        """A ``tool_use`` block ``message_start`` holds: the whole call, its input the
        one argument delta (``{}`` when it has none)."""
        call, self.read.calls = self.read.calls, self.read.calls + 1
        call_id, name = block.get("id"), block.get("name")
        start = ir.ItemStart(
            0,
            "tool_call",
            None,
            call,
            call_id if type(call_id) is str else None,
            name if type(name) is str else None,
            extra,
            r.PREFILL,
        )
        value = block.get("input")
        arguments = orjson.dumps(value).decode() if type(value) is dict and value else "{}"
        out += [start, ir.ToolArgsDelta(0, call, arguments, {}, None, r.AGAIN)]
        out.append(ir.ItemEnd(0, "tool_call", call, {}, None, None, r.PREFILL))

    def _message_delta(self, data: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        self._implicit(out)
        if self.read.block is not None:
            self.notes.repaired(
                f"content block {self.read.block.index} was not stopped before message_delta: "
                "stopped there"
            )
            self.blocks.close(out)
        delta = data.get("delta")
        delta = delta if type(delta) is dict else {}
        usage = data.get("usage")
        read = r.read_usage(usage, self.read.start) if type(usage) is dict else None
        word = delta.get("stop_reason")
        finish = (
            r.finish_of(word, delta.get("stop_sequence")) if type(word) is str and word else None
        )
        canonical = r.message_delta(
            (finish.raw or finish.reason) if finish is not None else None,
            r.usage_record(read) if read is not None else None,
            finish.stop_sequence if finish is not None else None,
        )
        patch = exact_diff(data, canonical)
        if read is not None:
            self.read.counted = True
            out.append(read)
        if finish is not None:
            finish.extra = patch
            out.append(finish)
        elif read is not None:
            read.own = r.AnthropicOwn(patch=patch)
        else:
            out.append(kept(data))
        return out

    def _stop(self, data: dict[str, Any]) -> list[ir.Event]:
        if not self.read.open:
            self.notes.warning("message_stop with no message open: kept as it is")
            return [kept(data)]
        out: list[ir.Event] = []
        if self.read.block is not None:
            self.notes.repaired(
                f"content block {self.read.block.index} was not stopped before message_stop: "
                "stopped there"
            )
            self.blocks.close(out)
        if not self.read.counted and self.read.start:
            # No message_delta (programmatic tool calling's turns): message_start's usage
            # is the message's, as a client accumulates it.
            usage = r.read_usage({}, self.read.start)
            usage.own = r.AGAIN
            out.append(usage)
        out.append(ir.StreamEnd(exact_diff(data, r.message_stop())))
        self.read.restart()
        return out

    def _ping(self, data: dict[str, Any]) -> list[ir.Event]:
        return [kept(data)]

    def _error(self, data: dict[str, Any]) -> list[ir.Event]:
        """An ``error`` event ends the stream where it stands (no ``message_stop``)."""
        error = r.read_error(data.get("error"))
        out: list[ir.Event] = [error]
        top = {k: v for k, v in data.items() if k not in ("type", "error")}
        if "error" not in data:
            top["error"] = ABSENT
        elif type(data["error"]) is not dict:
            top["error"] = data["error"]
        if top:
            out.append(ir.Meta(None, top))
        self.read.restart()
        return out
