"""Tool calls in the Llama Stack encoder: ``started`` → ``in_progress`` (the argument
fragments) → ``succeeded`` with the parsed call, or ``failed`` with the raw text when
the arguments are not JSON; one call at a time (:mod:`chatx.codecs.call_order`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.call_order import CallQueue

from . import records as r


class OpenCall:
    __slots__ = ("id", "name", "fragments")

    def __init__(self, call_id: str, name: str | None) -> None:
        self.id = call_id
        self.name = name
        self.fragments: list[str] = []


class CallEncoding:
    """Mixed into :class:`~chatx.codecs.llama_stack_event.encode.LlamaStackEncoder`."""

    # What the encoder holds and does that this part uses (set or defined there).
    notes: Any
    own: bool
    id: str
    count: int
    raw: list[str]
    calls: dict[int | None, OpenCall]
    queue: CallQueue
    _lane_ok: Callable[[int], bool]
    _stop_word: Callable[[], str | None]
    _patch: Callable[[list[Any], dict[str, Any]], None]
    _own: Callable[[dict[str, Any], str], dict[str, Any]]
    _flush: Callable[[list[Any]], None]

    def _item_start(self, event: ir.ItemStart, out: list[Any]) -> None:
        if not self._lane_ok(event.lane):
            return
        self._own(event.extra, "tool_call." if event.kind == "tool_call" else "")
        if event.kind == "tool_call":
            self._flush(out)
            self._call_start(event.call, event.call_id, event.name, out)

    def _call_start(
        self, number: int | None, call_id: str | None, name: str | None, out: list[Any]
    ) -> OpenCall:
        call = self.calls[number] = OpenCall(call_id or r.call_id(self.id, self.count), name)
        self.count += 1
        if not self.own:
            self.raw = []
            out.append(r.event("progress", r.tool_delta("started", "")))
        return call

    def _args(self, event: ir.ToolArgsDelta, out: list[Any]) -> None:
        if not self._lane_ok(event.lane):
            return
        ls = self._own(event.extra, "tool_call.")
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        call = self.calls.get(event.call) or self._call_start(event.call, None, None, out)
        if event.fragment:
            call.fragments.append(event.fragment)
            # From the Llama decoder, only fragments it read from in_progress records.
            if not self.own or "~in_progress" in ls:
                out.append(r.event("progress", r.tool_delta("in_progress", event.fragment)))
                self._patch(out, ls)

    def _item_end(self, event: ir.ItemEnd, out: list[Any]) -> bool:
        """End an item; true when a tool call is held open instead (see
        :mod:`chatx.codecs.call_order`)."""
        if not self._lane_ok(event.lane):
            return False
        ls = self._own(event.extra, "")
        if not self.own and (event.signature is not None or event.encrypted is not None):
            sealed = {"signature": event.signature, "encrypted_content": event.encrypted}
            self._own(sealed, "reasoning.")  # Anthropic's: no place in Llama Stack events
        if event.kind == "message":
            self._flush(out)
        if event.kind == "tool_call" and not self.own and self.queue.defer(event.call):
            return True
        call = self.calls.pop(event.call, None) if event.kind == "tool_call" else None
        if call is not None:
            self._end_call(call, "args_string" in ls, out)
            self._patch(out, ls)
        return False

    def _call_text(self, call: int | None) -> str | None:
        held = self.calls.get(call)
        return None if held is None else "".join(held.fragments)

    def _end_call_now(self, call: int | None, out: list[Any]) -> None:
        held = self.calls.pop(call, None)
        if held is not None:
            self._end_call(held, False, out)

    def _end_call(self, call: OpenCall, as_string: bool, out: list[Any]) -> None:
        arguments = "".join(call.fragments)
        if r.is_json(arguments):
            payload = r.tool_call(call.id, call.name, arguments, as_string)
            out.append(
                r.event("progress", r.tool_delta("succeeded", payload), None, self._stop_word())
            )
            return
        self.notes.lost(
            f"tool call {call.name!r} ({call.id}): its arguments are not JSON; "
            "written as a failed call, which has no name or call_id"
        )
        out.append(r.event("progress", r.tool_delta("failed", arguments), None, self._stop_word()))
