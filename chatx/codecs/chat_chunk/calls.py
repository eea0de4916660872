"""Tool calls in chat chunks: an entry of a delta's ``tool_calls``, read by the decoder
(:class:`CallEntry`) and written by the encoder (:func:`first_entry`,
:func:`join_fragment`).

A call's first entry carries its id, type and name (the IR's ``ItemStart``), each later
one more of its arguments (a ``ToolArgsDelta``). A call may resume after another one
started (fragments of index 0, 1, then 0 again): chat says that as it is, and the
encoders of formats that write one call at a time hold the later calls
(:mod:`chatx.codecs.call_order`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.plain import ChoiceState
from chatx.notes import Notes

_ENTRY_KEYS = ("index", "id", "type", "function")
_FUNCTION_KEYS = ("name", "arguments")


@dataclass(slots=True)
class CallEntry:
    """One ``tool_calls`` entry: the call it belongs to, its arguments fragment ("" when
    it has none), and its residue, the entry's own and its function's."""

    entry: dict[str, Any]
    function: dict[str, Any]
    call: int
    fragment: str
    extra: dict[str, Any]
    fextra: dict[str, Any]

    @classmethod
    def read(cls, entry: dict[str, Any], lane: ChoiceState, notes: Notes) -> CallEntry:
        call = entry.get("index")
        if not isinstance(call, int):
            # Mistral sends a whole call without an index: a call with an id is new.
            call = len(lane.calls) if entry.get("id") or lane.open_call is None else lane.open_call
            notes.repaired(f"tool call without an index: numbered {call}")
        function = entry.get("function")
        if not isinstance(function, dict):
            function = {}
        fragment = function.get("arguments")
        extra = {k: v for k, v in entry.items() if k not in _ENTRY_KEYS}
        fextra = {k: v for k, v in function.items() if k not in _FUNCTION_KEYS}
        if not isinstance(fragment, str) or not fragment:
            if "arguments" in function:
                fextra["arguments"] = fragment
            fragment = ""
        return cls(entry, function, call, fragment, extra, fextra)

    def start(self, lane: int) -> list[ir.Event]:
        """The call's first entry: it opens the call."""
        entry, extra, call = self.entry, self.extra, self.call
        if "id" in entry and not isinstance(entry["id"], str):
            extra["id"] = entry["id"]
        if entry.get("type") != "function" and "type" in entry:
            extra["type"] = entry.get("type")
        if self.fextra:
            extra["function"] = self.fextra
        name = self.function.get("name")
        call_id = entry["id"] if isinstance(entry.get("id"), str) else None
        name = name if isinstance(name, str) else None
        out: list[ir.Event] = [
            ir.ItemStart(lane, "tool_call", call=call, call_id=call_id, name=name, extra=extra)
        ]
        if self.fragment:
            out.append(ir.ToolArgsDelta(lane, call, self.fragment))
        return out

    def more(self, lane: int) -> list[ir.Event]:
        """A later entry: more arguments, and whatever else it says as residue."""
        entry, extra, fextra = self.entry, self.extra, self.fextra
        for key in ("id", "type"):
            if key in entry:
                extra[key] = entry[key]
        if "name" in self.function:
            fextra["name"] = self.function["name"]
        if fextra:
            extra["function"] = fextra
        if self.fragment or extra:
            return [ir.ToolArgsDelta(lane, self.call, self.fragment, extra)]
        return []


def first_entry(event: ir.ItemStart, own: bool) -> dict[str, Any]:
    """The entry that opens call ``event`` (its residue aside). From another format it
    has empty arguments, as OpenAI writes a call's first chunk."""
    entry: dict[str, Any] = {"index": event.call}
    if event.call_id is not None:
        entry["id"] = event.call_id
    entry["type"] = "function"
    entry["function"] = {"name": event.name or ""}
    if not own:
        entry["function"]["arguments"] = ""
    return entry


def join_fragment(
    calls: list[Any], event: ir.ToolArgsDelta, scanned: dict[tuple[int, int], int], own: bool
) -> dict[str, Any]:
    """The entry of ``calls`` (one chunk's) that takes ``event``'s fragment: the call's
    opening entry while it has no arguments, else a new one. ``scanned`` is where the
    search for each call starts in this chunk: no entry before it can take the fragment
    (a long call in one chunk would be searched from the start for each fragment)."""
    key = (event.lane, event.call)
    for position in range(scanned.get(key, 0), len(calls)):
        # Join the call's opening entry; a second fragment of one call in one chunk
        # stays a separate entry, as the source sent it (Bedrock does).
        entry = calls[position]
        function = entry.get("function")
        if entry.get("index") == event.call and not (function or {}).get("arguments"):
            function = entry.setdefault("function", {})
            function["arguments"] = event.fragment
            break
    else:
        position = len(calls)
        entry = {"index": event.call}
        if event.fragment or not own:
            entry["function"] = {"arguments": event.fragment}
        calls.append(entry)
    # This entry may still be joined (its fragment was empty); none before it will.
    scanned[key] = position
    return entry
