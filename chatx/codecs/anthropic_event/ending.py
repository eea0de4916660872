"""How the anthropic encoder ends a message: ``message_delta`` with the stop reason and
the usage (another format's once, at the end; this format's where its source had it),
then ``message_stop``; an ``error`` event, after which the API writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.codecs.call_order import CallQueue
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .content import Content, merged
from .written import Written


@dataclass(slots=True, eq=False)
class AnthropicEnding:
    """Writes the message's usage, stop reason, ending and errors. ``content`` closes the
    open block and ``queue`` releases the calls it holds before the ending."""

    written: Written
    content: Content
    queue: CallQueue
    notes: Notes

    def usage(self, event: ir.Usage, out: list[Any]) -> None:
        written = self.written
        if self.written.own:
            if event.own is not r.AGAIN:  # message_start's, said again at the end
                written.usage = event
                written.delta_due = True
            return
        written.usage = event
        if event.extra:
            report(event.extra, self.notes, "usage.")
        inputs, outputs, total = event.input, event.output, event.total
        if total is not None and inputs is not None and outputs is not None:
            self._total(total, inputs + outputs)

    def _total(self, total: int, counted: int) -> None:
        if total != counted:
            self.written.note_once(
                "total",
                f"usage total {total}: Anthropic usage has no total, and input + output "
                f"is {counted}",
            )

    def finish(self, event: ir.Finish, out: list[Any]) -> None:
        written = self.written
        if self.written.own:
            if event.own is not r.PREFILL:
                written.finish = event
                self.own_delta(out)
            return
        if not written.lane_ok(event.lane):
            return
        self.content.close_block(out)
        if written.finish is None:
            written.finish = event
        if event.extra:
            report(event.extra, self.notes, "finish.")

    def error(self, event: ir.Error, out: list[Any]) -> None:
        written = self.written
        if self.written.own:
            record = r.error(event.type, event.message)
            merge(record["error"], event.extra)
            out.append(record)
            written.failed = True
            return
        # The API ends a stream with its error event. A finish reason or usage the source
        # said before its error (OpenRouter's length, then an error chunk) goes first, in
        # the message_delta: nothing follows the error.
        if written.open and (written.finish is not None or written.usage is not None):
            self.queue.release_all(out)
            self.content.close_block(out)
            self._foreign_delta(out)
        written.block = None
        etype = event.type or (event.code if isinstance(event.code, str) else None)
        for key, value in (("code", event.code), ("param", event.param)):
            if value is not None and not (key == "code" and etype == value):
                self.notes.lost_field(f"error.{key}")
        if event.extra:
            report(event.extra, self.notes, "error.")
        out.append(r.error(etype or "api_error", event.message or ""))
        written.failed = True

    def after_error(self, event: ir.Event) -> None:
        """The API writes nothing after its error event: what a source says there
        (a Responses response.failed's usage) has no place."""
        kind = type(event)
        said = kind is ir.Usage or (kind is ir.Finish and event.reason != "error")  # type: ignore[union-attr]
        content = kind in (ir.TextDelta, ir.ReasoningDelta, ir.ToolArgsDelta, ir.RefusalDelta)
        if said or content:
            self.written.note_once("after error", "what came after the error event has no place")

    def end(self, out: list[Any]) -> None:
        """``message_delta`` and ``message_stop``: the source's stream has ended."""
        self.queue.release_all(out)
        self.content.close_block(out)
        self._foreign_delta(out)
        out.append(r.message_stop())
        self.written.open = False

    def _foreign_delta(self, out: list[Any]) -> None:
        """``message_delta`` from another format: its stop reason and usage, once."""
        written = self.written
        if written.delta_written:
            return
        usage = written.usage
        if usage is None and written.start_usage:  # message_start's counts, the last said
            usage = r.read_usage({}, written.start_usage)
        if usage is None:
            self.notes.warning(
                "the input has no usage: message_delta says 0 tokens (the API requires counts)"
            )
            usage = ir.Usage()
        finish = written.finish
        sequence = finish.stop_sequence if finish is not None else None
        out.append(r.message_delta(self._stop_word(), r.usage_object(usage, False), sequence))
        written.delta_written = True

    def _stop_word(self) -> str:
        finish = self.written.finish
        if finish is None:
            word = "tool_use" if self.written.called else "end_turn"
            self.notes.repaired(f"the input has no finish reason: stop_reason {word} written")
            return word
        said = r.stop_word(finish.reason, finish.raw)
        if finish.reason == "function_call":
            self.notes.lost("finish reason 'function_call' (a legacy function call): tool_use")
        if said is None:
            what = " (the generation failed)" if finish.reason == "error" else ""
            self.notes.lost(
                f"finish reason {finish.reason!r}{what} has no Anthropic stop reason: "
                "written as end_turn"
            )
            said = "end_turn"
        return said

    def own_delta(self, out: list[Any]) -> None:
        """This format's ``message_delta``, as its source had it: the finish or usage
        said since the last one, their residue merged back."""
        written = self.written
        finish, usage = written.finish, written.usage
        word = (finish.raw or finish.reason) if finish is not None else None
        sequence = finish.stop_sequence if finish is not None else None
        record = r.message_delta(
            word, r.usage_record(usage) if usage is not None else None, sequence
        )
        if finish is not None:
            merged(record, finish.extra)
        elif usage is not None:
            merged(record, r.own_of(usage).patch)
        out.append(record)
        written.finish = written.usage = None
        written.delta_due = False
        written.delta_written = True
