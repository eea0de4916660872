"""The end of a candidate and of the response: finish reasons, usage, errors, and the
finishing chunk held back for the usage that follows it in other formats."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.residue import report

from . import records as r
from .written import GeminiBatch, GeminiWritten


def usage_metadata(event: ir.Usage, notes: Notes) -> dict[str, Any]:
    """The IR's usage in Gemini's names: the answer's tokens leave the thoughts out."""
    out: dict[str, Any] = {}
    if event.input is not None:
        out["promptTokenCount"] = event.input
    reasoning = event.reasoning or 0
    total = event.total
    if total is None and event.input is not None and event.output is not None:
        total = event.input + event.output
    if event.output is not None:
        out["candidatesTokenCount"] = event.output - reasoning
        if reasoning > event.output:
            # Output counts the reasoning (as chat's completion tokens do); a source whose
            # reasoning is more counted it apart (xAI, when its total says so) or
            # counted it wrong, and then it is left out.
            out["candidatesTokenCount"] = event.output
            apart = total is not None and total >= (event.input or 0) + event.output + reasoning
            if not apart:
                notes.lost("reasoning tokens beyond the output tokens: left out of usageMetadata")
                reasoning = 0
    if reasoning:
        out["thoughtsTokenCount"] = reasoning
    if event.cached:
        out["cachedContentTokenCount"] = event.cached
    if total is not None:
        out["totalTokenCount"] = total
    return out


def error_body(event: ir.Error, notes: Notes) -> dict[str, Any]:
    """Another format's error as the body of a failed request (``code`` the HTTP status,
    ``status`` the gRPC word); what it has no place for said in ``notes``."""
    code = event.code
    if isinstance(code, str) and code.isdigit():
        code = int(code)  # an HTTP status another format wrote as a string
    status = event.type or (event.code if isinstance(event.code, str) else None)
    if type(code) is not int:
        # Google's error always has its HTTP status, and google-genai cannot read one
        # without (it compares the code with 400): a server error's.
        if code is not None and code != status:
            notes.lost(f"error code {code!r} is no HTTP status: 500 written")
        else:
            notes.repaired("an error without an HTTP status: code 500 written")
        code = 500
    if event.param is not None:
        notes.lost_field("error.param")
    if event.extra:
        report(event.extra, notes, "error.")
    return {"error": r.error_object(code, event.message, status)}


class Ending:
    """Finish reasons, usage and errors from another format. Gemini puts the usage on
    the chunk that finishes the last candidate: that chunk waits (``GeminiWritten.held``) for
    a usage event after it, and goes out with the next chunk, the end or the drain."""

    __slots__ = ("written", "notes")

    def __init__(self, written: GeminiWritten, notes: Notes) -> None:
        self.written = written
        self.notes = notes

    def finish(self, batch: GeminiBatch, event: ir.Finish) -> None:
        word, exact = r.gemini_reason(event.reason, event.raw)
        if not exact:
            self.notes.lost(f"finish reason {event.reason!r} has no Gemini word: written as OTHER")
        if event.stop_sequence is not None:
            self.notes.lost_field("stop_sequence")
        if event.extra:
            report(event.extra, self.notes, "finish.")
        batch.finish[event.lane] = word
        self.written.finished.add(event.lane)

    def usage(self, batch: GeminiBatch, event: ir.Usage) -> None:
        if event.extra:
            report(event.extra, self.notes, "usage.")
        if event.cache_write:
            self.notes.lost_field("usage.cache_write")
        usage = usage_metadata(event, self.notes)
        written = self.written
        if written.held is not None:
            written.held["usageMetadata"] = usage
            self.release(batch.out)
        elif written.lanes and written.lanes <= written.finished:
            batch.usage = usage  # after every candidate finished: a chunk of its own
        else:
            written.usage = usage  # for the chunk that finishes the last candidate

    def error(self, batch: GeminiBatch, event: ir.Error) -> None:
        """An error ends the stream: Gemini's error object (:func:`error_body`)."""
        self.release(batch.out)
        batch.out.append(error_body(event, self.notes))
        self.written.failed = True

    def close(self, batch: GeminiBatch, chunk: dict[str, Any] | None) -> None:
        """The batch's chunk: out now, or held when it finishes the last candidate."""
        written = self.written
        if chunk is None:
            return
        written.shown.update(batch.parts.keys() | batch.finish.keys())
        self.release(batch.out)
        if batch.finish and written.lanes <= written.finished:
            if written.usage is not None:
                # A usage the batch said itself (on the chunk) is the later count.
                chunk.setdefault("usageMetadata", written.usage)
                written.usage = None
            written.held = chunk
            return
        batch.out.append(chunk)

    def release(self, out: list[Any]) -> None:
        held = self.written.held
        if held is not None:
            self.written.held = None
            out.append(held)
