"""Function calls in the Gemini decoder: a ``functionCall`` part read as one whole tool
call (``ItemStart``, one ``ToolArgsDelta``, ``ItemEnd``), an id derived where Gemini
gives none, and Vertex's streamed arguments (``partialArgs``, ``willContinue``) joined
into the call the empty ``functionCall`` ends."""

from __future__ import annotations

from typing import Any

import orjson

from chatx import ir
from chatx.residue import ABSENT, exact_diff

from . import partial
from . import records as r
from .read import GeminiRead, ReadLane, Streamed


def dumps(value: Any) -> str:
    """JSON text of arguments; integers beyond 64 bits kept exact."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CallReader:
    """Reads a candidate's ``functionCall`` parts; ``read`` is the response being read."""

    __slots__ = ("read",)

    def __init__(self, read: GeminiRead) -> None:
        self.read = read

    def call(
        self, lane: int, state: ReadLane, body: dict[str, Any], call: dict[str, Any],
        out: list[ir.Event],
    ) -> None:  # fmt: skip
        streamed = state.streamed
        going_on = call.get("willContinue") is True
        if streamed is None and going_on and "name" in call:
            # Vertex streams this call's arguments in the chunks that follow.
            state.streamed = Streamed(call.get("name"), call.get("id"))
            state.close(lane, out)
            out.append(self._held(lane, body))
            return
        if streamed is not None:
            self._piece(lane, state, streamed, body, call, going_on, out)
            return
        args = call.get("args", ABSENT)
        self.whole(lane, state, body, call.get("name"), args, call.get("id"), out)

    def _piece(
        self, lane: int, state: ReadLane, streamed: Streamed, body: dict[str, Any],
        call: dict[str, Any], going_on: bool, out: list[ir.Event],
    ) -> None:  # fmt: skip
        """A piece of a streamed call's arguments; the empty call that ends it."""
        for piece in call.get("partialArgs") or ():
            if not partial.apply(streamed.args, piece):
                streamed.bad = True
        if going_on:
            out.append(self._held(lane, body))
            return
        state.streamed = None
        self.whole(lane, state, body, streamed.name, streamed.args, streamed.id, out)
        if streamed.bad:
            self.read.notes.warning("a partialArgs entry without a readable jsonPath: left out")

    def _held(self, lane: int, body: dict[str, Any]) -> ir.Passthrough:
        """A part of a call still streaming: Gemini output writes it back, others wait."""
        return ir.Passthrough(r.NAME, {"lane": lane, "part": body}, line=self.read.line, item="")

    def unclosed(self, lane: int, state: ReadLane, out: list[ir.Event]) -> None:
        """End of input: a streamed call the stream never closed, its arguments as they
        stand."""
        streamed = state.streamed
        if streamed is not None:
            state.streamed = None
            self.read.notes.warning(f"candidate {lane}: a streamed function call never closed")
            self.whole(lane, state, None, streamed.name, streamed.args, streamed.id, out)

    def whole(
        self, lane: int, state: ReadLane, body: dict[str, Any] | None, name: Any, args: Any,
        call_id: Any, out: list[ir.Event],
    ) -> None:  # fmt: skip
        state.close(lane, out)
        number = state.calls
        state.calls += 1
        state.called = True
        given = call_id if isinstance(call_id, str) and call_id else None
        cid = given or r.derived_call_id(self.read.id, lane, number)
        arguments = args if args is not ABSENT else {}
        canonical = r.call_part(name if isinstance(name, str) else None, arguments, cid)
        if body is None:  # ended by the end of input: the source wrote no part for it
            extra: dict[str, Any] = {"functionCall": ABSENT}
        else:
            extra = exact_diff(body, canonical)
        out.append(
            ir.ItemStart(
                lane,
                "tool_call",
                call=number,
                call_id=cid,
                name=name if isinstance(name, str) else None,
                extra=extra,
            )
        )
        out.append(ir.ToolArgsDelta(lane, number, dumps(arguments)))
        out.append(ir.ItemEnd(lane, "tool_call", call=number))
