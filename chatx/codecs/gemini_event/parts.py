"""The parts of each candidate: text, thoughts, function calls and the signatures that
ride on them."""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Any

import orjson

from chatx import ir
from chatx.codecs.call_order import whole_json
from chatx.notes import Notes
from chatx.residue import merge, report

from . import records as r
from .written import Call, GeminiBatch, GeminiWritten


def is_base64(token: str) -> bool:
    """Whether ``token`` can be a ``thoughtSignature``: bytes, written in base64."""
    try:
        b64decode(token, validate=True)
    except (ValueError, binascii.Error):
        return False
    return True


def loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        import json

        return json.loads(text)  # integers beyond 64 bits, which orjson refuses


class Parts:
    """Writes the parts of a batch's candidates. A reasoning item's signature goes on
    the next part of its lane, as Gemini puts it on the first call or the answer; a
    call from another format is written whole once its arguments are (a call's
    ``ItemEnd`` with whole JSON, else the next content, finish or end of its lane)."""

    __slots__ = ("written", "notes")

    def __init__(self, written: GeminiWritten, notes: Notes) -> None:
        self.written = written
        self.notes = notes

    def add(self, batch: GeminiBatch, lane: int, part: dict[str, Any]) -> dict[str, Any]:
        """Place ``part`` in ``lane``, with the signature waiting there."""
        signature = self.written.signatures.pop(lane, None)
        if signature is not None:
            part["thoughtSignature"] = signature
        batch.lane_parts(lane).append(part)
        return part

    def lone_signature(self, batch: GeminiBatch, lane: int) -> None:
        """A signature no part came for: a part of its own, as Gemini 3 writes one."""
        signature = self.written.signatures.pop(lane, None)
        if signature is not None:
            batch.lane_parts(lane).append({"thoughtSignature": signature})

    def text(self, batch: GeminiBatch, lane: int, text: str, thought: bool) -> dict[str, Any]:
        parts = batch.parts.get(lane)
        if not self.written.own and parts and lane not in self.written.signatures:
            last = parts[-1]
            if last.keys() == ({"text", "thought"} if thought else {"text"}):
                last["text"] += text  # one part per kind per chunk
                return last
        return self.add(batch, lane, r.thought_part(text) if thought else r.text_part(text))

    def signature(self, batch: GeminiBatch, event: ir.ItemEnd) -> None:
        token = event.signature if event.signature is not None else event.encrypted
        if token is not None and not self.written.own and not is_base64(token):
            # Gemini's thoughtSignature is bytes, written in base64: another service's
            # token that is not base64 has no place there.
            self.notes.lost_field("reasoning.signature")
            return
        if token is not None:
            if not self.written.own:
                self.lone_signature(batch, event.lane)  # two in a row: the first alone
            self.written.signatures[event.lane] = token

    # -- calls ----------------------------------------------------------------------

    def call_start(self, batch: GeminiBatch, event: ir.ItemStart) -> None:
        written = self.written
        call = Call(event.name, event.call_id)
        written.calls[(event.lane, event.call or 0)] = call
        if written.own:
            call.part = self.add(batch, event.lane, r.call_part(event.name, None, event.call_id))
            call.extra = event.extra
        elif event.extra:
            report(event.extra, self.notes, "tool_call.")

    def args(self, event: ir.ToolArgsDelta) -> None:
        call = self.written.calls.get((event.lane, event.call))
        if call is None:
            self.notes.lost("arguments of a tool call already written")
            return
        call.fragments.append(event.fragment)
        if event.extra and not self.written.own:
            report(event.extra, self.notes, "tool_call.")

    def call_end(self, batch: GeminiBatch, event: ir.ItemEnd) -> None:
        written = self.written
        key = (event.lane, event.call or 0)
        call = written.calls.get(key)
        if call is None:
            return
        call.ended = True
        if written.own:
            del written.calls[key]
            part = call.part
            if part is not None:
                text = "".join(call.fragments)
                part["functionCall"]["args"] = loads(text) if text else {}
                merge(part, call.extra)
            return
        # The calls of the lane in order, each once its arguments are whole.
        for (lane, number), held in list(written.calls.items()):
            if lane != event.lane:
                continue
            if not (held.ended and whole_json("".join(held.fragments))):
                break
            self._write_call(batch, lane, number, held)

    def flush(self, batch: GeminiBatch, lane: int) -> None:
        """Every call of ``lane`` still held, as its arguments stand."""
        for (held_lane, number), call in list(self.written.calls.items()):
            if held_lane == lane:
                self._write_call(batch, lane, number, call)

    def flush_all(self, batch: GeminiBatch) -> None:
        for lane in sorted({lane for lane, _ in self.written.calls}):
            self.flush(batch, lane)

    def _write_call(self, batch: GeminiBatch, lane: int, number: int, call: Call) -> None:
        del self.written.calls[(lane, number)]
        text = "".join(call.fragments)
        call_id = call.id or r.derived_call_id(self.written.id, lane, number)
        part = r.call_part(call.name, {}, call_id)
        if text.strip():
            try:
                args = loads(text)
            except ValueError:
                args = None
            if isinstance(args, dict):
                part["functionCall"]["args"] = args
            else:
                # Gemini's args is an object: anything else is said, not guessed at.
                del part["functionCall"]["args"]
                self.notes.lost(
                    f"tool call {call.name!r}: arguments that are not a JSON object have no "
                    f"place in a Gemini functionCall: {text[:60]!r}"
                )
        self.add(batch, lane, part)
