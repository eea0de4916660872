"""How the Llama Stack encoder ends a generation: the usage as the ``complete`` event's
``metrics``, the finish as a stop reason (on the record its batch wrote, and on
``complete``), an error as the ``{"error": …}`` frame Llama Stack's server stops with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.codecs.base import exact_reason
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .calls import Calls
from .generation import LS, Generation
from .text import Text

# What the Llama Stack client says for an error frame without a message (_streaming.py).
NO_MESSAGE = "An error occurred during streaming"


@dataclass(slots=True, eq=False)
class LlamaStackEnding:
    """Writes how the generation ends. ``text`` ends the message and ``calls`` closes
    the calls still open before an error frame."""

    generation: Generation
    text: Text
    calls: Calls
    notes: Notes

    def complete(self) -> dict[str, Any]:
        """The ``complete`` event: the stop reason and the usage as ``metrics``."""
        g = self.generation
        g.completed = True
        metrics = None
        usage = g.usage
        if usage is not None:
            counts = {"input": usage.input, "output": usage.output, "total": usage.total}
            if counts["total"] is None and usage.input is not None and usage.output is not None:
                # Only a total the source left out is computed, as Llama Stack's router
                # does (prompt + completion); a stated one is carried as it came (xAI's
                # counts reasoning tokens too: 354 for 12 + 2).
                counts["total"] = usage.input + usage.output
            residue = usage.extra.get(LS, {}).get("metrics") if self.generation.own else None
            metrics = r.render_metrics(counts, residue)
        stop = g.stop_word()
        if stop is None and not self.generation.own:
            # Llama Stack's OpenAI-compat layer reads a stream without a finish_reason so
            # (_convert_openai_finish_reason falls back to end_of_turn).
            self.notes.repaired("the input has no finish reason: complete says end_of_turn")
            stop = g.stop = "end_of_turn"
        return r.event("complete", r.text_delta(""), None, stop, metrics)

    def usage(self, event: ir.Usage, out: list[Any]) -> None:
        self.generation.usage = event
        if self.generation.own:
            return
        report(event.extra, self.notes, "usage.")
        if event.cached:
            self.notes.lost_field("usage.cached_tokens")
        if event.reasoning:
            self.notes.lost_field("usage.reasoning_tokens")
        if event.cache_write:
            self.notes.lost_field("usage.cache_write_tokens")

    def finish(self, event: ir.Finish, out: list[Any]) -> None:
        g = self.generation
        if not g.lane_ok(event.lane):
            return
        g.residue(event.extra, "finish.", event.own)
        if event.stop_sequence is not None and not self.generation.own:  # Anthropic's
            self.notes.lost_field("finish.stop_sequence")
        self.text.flush(out)
        g.stop = r.stop_word(event.reason, event.raw)
        g.reason = event.reason
        unsaid = exact_reason(event.reason) not in r.FINISH_TO_STOP
        if not self.generation.own and unsaid and not (event.reason == "error" and g.failed):
            self.notes.lost(
                f"finish reason {event.reason!r} has no Llama Stack stop reason: "
                f"written as {g.stop}"
            )
        # The record this batch wrote ends the generation; in a batch that also ends the
        # stream, the stop reason belongs to the complete event alone, and a Finish the
        # decoder deferred past a tool record was written on that record (its note's
        # stop).
        last = out[-1] if out else None
        ends = event.own is r.DEFERRED or any(type(e) is ir.StreamEnd for e in g.batch)
        if not ends and isinstance(last, dict) and isinstance(last.get("event"), dict):
            last["event"]["stop_reason"] = g.stop_word()

    def error(self, event: ir.Error, out: list[Any]) -> None:
        # Llama Stack's server reports a failure mid-stream with one {"error": {"message":
        # …}} record and stops (server.py sse_generator); its client raises at that record
        # (a truthy "error"), with error.message as the message. So everything goes before
        # it: open calls are closed, and a complete event carries an ending the source
        # said already (OpenRouter's finish "length", then its error chunk with usage).
        g = self.generation
        error: dict[str, Any] = {}
        for key in ("message", "type", "param", "code"):
            value = getattr(event, key)
            if value is not None:
                error[key] = value
        if self.generation.own:
            self.text.flush(out)
            merge(error, event.extra)
        else:
            self.calls.close_all(out)
            if g.open and not g.completed and g.said_ending():
                out.append(self.complete())
            if not isinstance(error.get("message"), str) or not error["message"]:
                error["message"] = NO_MESSAGE
        out.append({"error": error})
        g.failed = True
