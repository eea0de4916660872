"""Text in the Llama Stack decoder, and what it holds back: text that may still be a
tool call written as text (shape 2 in :mod:`.decode`), and the fragments of a call that
has not ended (shape 1). What the stream did not make a call of is released as text."""

from __future__ import annotations

from typing import Any

from chatx import ir

from . import records as r
from .read_stream import LS, ReadStream, Stops
from .special_tokens import call_prefix


class Held:
    """The Llama Stack decoder's part that reads text deltas, holds what may be a call
    and releases it. It shares the
    :class:`~chatx.codecs.llama_stack_event.read_stream.ReadStream` with the decoder
    and its other parts, and says a record's stop reason through ``stops``."""

    __slots__ = ("read", "stops")

    def __init__(self, read: ReadStream, stops: Stops) -> None:
        self.read = read
        self.stops = stops

    def text(
        self, data: dict[str, Any], event: dict[str, Any], text: str, out: list[ir.Event]
    ) -> None:
        """A text delta: held while it may be a call, else said."""
        read = self.read
        if read.hold == "tool":
            self.release(out)
        holdable = text != "" and event.get("stop_reason") is None
        if holdable and (read.hold == "text" or (read.may_hold and read.hold is None)):
            read.hold = "text"
            read.held.append(data)
            read.held_text.append(text)
            if not self._could_be_call():
                self.release(out)
            return
        self.release(out)
        self.emit_text(data, event, text, out)

    def _could_be_call(self) -> bool:
        """Whether the held text may still turn out to be a tool call."""
        read = self.read
        if not read.committed:
            verdict = call_prefix("".join(read.held_text))
            read.committed = verdict == "call"  # past the opener: hold until decided
            return verdict != "text"
        return True

    def emit_text(
        self, data: dict[str, Any], event: dict[str, Any], text: str, out: list[ir.Event]
    ) -> None:
        read = self.read
        if not text:  # no content, one record all the same: a Meta says so
            meta = ir.Meta(0, {})
            out.append(meta)
            stop = self.stops.stop(event, out)
            canonical = r.event("progress", r.text_delta(""), None, stop)
            meta.extra = r.kept(r.residue(data, canonical))
            meta.own = r.LlamaStackOwn(held="text", value="")
            return
        if not read.message:
            read.open_message(out)
        raw = event.get("logprobs")
        logprobs = r.logprobs_to_ir(raw) if raw is not None else None
        delta = ir.TextDelta(0, text, logprobs)
        out.append(delta)
        stop = self.stops.stop(event, out) if event.get("stop_reason") is not None else None
        back = r.logprobs_from_ir(logprobs) if logprobs is not None else None
        ls = r.residue(data, r.event("progress", r.text_delta(text), back, stop))
        if ls:
            delta.extra = {LS: ls}
        read.may_hold = False
        read.text_out = True

    def release(self, out: list[ir.Event]) -> None:
        """The stream did not make a call of what is held: give it back as text."""
        read = self.read
        held, hold = read.held, read.hold  # read.take_held(), without the call
        read.held, read.hold, read.held_text, read.committed = [], None, [], False
        for data in held:
            event = data["event"]
            if hold == "text":
                self.emit_text(data, event, event["delta"]["text"], out)
            else:
                self.release_tool(data, out)

    def release_tool(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        """A held record of a call that was none: an ``in_progress`` fragment is message
        text, any other record no IR content (:func:`instruction`)."""
        value = data["event"]["delta"].get("tool_call")
        if (
            data["event"]["delta"].get("parse_status") != "in_progress"
            or not value
            or not isinstance(value, str)
        ):
            out.append(instruction(data))
            return
        read = self.read
        read.open_message(out)
        canonical = r.event("progress", r.tool_delta("in_progress", value))
        extra = r.kept(r.residue(data, canonical))
        out.append(ir.TextDelta(0, value, None, extra, None, r.IN_PROGRESS))
        read.may_hold = False
        read.text_out = True


def instruction(data: dict[str, Any]) -> ir.Meta:
    """A held record that becomes no IR content, described for the Llama encoder."""
    delta = data["event"]["delta"]
    if delta.get("type") == "text":
        key, value = "text", delta.get("text")
        text = value if isinstance(value, str) else ""
        canonical = r.event("progress", r.text_delta(text))
    else:
        key, value = delta.get("parse_status"), delta.get("tool_call")
        text = value if isinstance(value, str) else ""
        canonical = r.event("progress", r.tool_delta(key, text))
    extra = r.kept(r.residue(data, canonical))
    return ir.Meta(0, extra, None, None, r.LlamaStackOwn(held=key, value=text))
