"""Tool calls in the Llama Stack encoder: ``started`` → ``in_progress`` (the argument
fragments) → ``succeeded`` with the parsed call, or ``failed`` with the raw text when
the arguments are not JSON; one call at a time (:mod:`chatx.codecs.call_order`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.call_order import CallQueue
from chatx.notes import Notes

from . import records as r
from .generation import Generation, OpenCall, patch
from .text import Text


@dataclass(slots=True, eq=False)
class Calls:
    """Writes the generation's tool calls. ``text`` ends the message before a call;
    ``step`` is the encoder's, for the queue of calls held open (:attr:`queue`)."""

    generation: Generation
    text: Text
    notes: Notes
    step: Callable[[ir.Event, list[Any]], None]  # the encoder's, for the queue
    queue: CallQueue = field(init=False)

    def __post_init__(self) -> None:
        self.queue = CallQueue(self.step, self.call_text, self.end_call_now)

    def item_start(self, event: ir.ItemStart, out: list[Any]) -> None:
        g = self.generation
        if not g.lane_ok(event.lane):
            return
        g.residue(event.extra, "tool_call." if event.kind == "tool_call" else "", event.own)
        if event.kind == "tool_call":
            self.text.flush(out)
            self._start(event.call, event.call_id, event.name, out)

    def _start(
        self, number: int | None, call_id: str | None, name: str | None, out: list[Any]
    ) -> OpenCall:
        g = self.generation
        call = g.calls[number] = OpenCall(call_id or r.call_id(g.id, g.count), name)
        g.count += 1
        if not self.generation.own:
            g.raw = []
            out.append(r.event("progress", r.tool_delta("started", "")))
        return call

    def args(self, event: ir.ToolArgsDelta, out: list[Any]) -> None:
        g = self.generation
        if not g.lane_ok(event.lane):
            return
        ls = g.residue(event.extra, "tool_call.", event.own)
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        call = g.calls.get(event.call) or self._start(event.call, None, None, out)
        if event.fragment:
            call.fragments.append(event.fragment)
            # From the Llama decoder, only fragments it read from in_progress records.
            if not self.generation.own or event.own is r.IN_PROGRESS:
                out.append(r.event("progress", r.tool_delta("in_progress", event.fragment)))
                patch(out, ls)

    def item_end(self, event: ir.ItemEnd, out: list[Any]) -> bool:
        """End an item; true when a tool call is held open instead (see
        :mod:`chatx.codecs.call_order`)."""
        g = self.generation
        if not g.lane_ok(event.lane):
            return False
        ls = g.residue(event.extra, "", event.own)
        if not self.generation.own and (event.signature is not None or event.encrypted is not None):
            sealed = {"signature": event.signature, "encrypted_content": event.encrypted}
            g.residue(sealed, "reasoning.")  # Anthropic's: no place in Llama Stack events
        if event.kind == "message":
            self.text.flush(out)
        if event.kind == "tool_call" and not self.generation.own and self.queue.defer(event.call):
            return True
        call = g.calls.pop(event.call, None) if event.kind == "tool_call" else None
        if call is not None:
            self._end(call, r.own_of(event).args_string, out)
            patch(out, ls)
        return False

    def call_text(self, call: int | None) -> str | None:
        """The arguments so far of call ``call`` when it is open (for the queue)."""
        held = self.generation.calls.get(call)
        return None if held is None else "".join(held.fragments)

    def end_call_now(self, call: int | None, out: list[Any]) -> None:
        held = self.generation.calls.pop(call, None)
        if held is not None:
            self._end(held, False, out)

    def close_all(self, out: list[Any]) -> None:
        """The message and every call still open end as they stand."""
        self.text.flush(out)
        calls = self.generation.calls
        for call in list(calls.values()):
            self._end(call, False, out)
        calls.clear()

    def _end(self, call: OpenCall, as_string: bool, out: list[Any]) -> None:
        stop = self.generation.stop_word()
        arguments = "".join(call.fragments)
        if r.is_json(arguments):
            payload = r.tool_call(call.id, call.name, arguments, as_string)
            out.append(r.event("progress", r.tool_delta("succeeded", payload), None, stop))
            return
        self.notes.lost(
            f"tool call {call.name!r} ({call.id}): its arguments are not JSON; "
            "written as a failed call, which has no name or call_id"
        )
        out.append(r.event("progress", r.tool_delta("failed", arguments), None, stop))
