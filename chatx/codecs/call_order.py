"""Tool calls one at a time, for encoders whose format writes each call whole.

A chat stream may interleave its tool calls' fragments (index 0, index 1, then index 0
again); the openai SDK's accumulator joins each index's fragments whatever their order.
A Responses item, or Llama Stack's ``started`` → ``in_progress`` → ``succeeded``, is
written whole before the next one opens, so a call closed when the next one started
cannot take the fragments that come back for it.

So an encoder keeps a call open past its ``ItemEnd`` while its arguments are not yet a
whole JSON object or array (a whole one cannot grow), and holds the events of the calls
after it. Fragments of the open call go on as they come; once its arguments are whole
the call closes and the held events are replayed (a later call may be held open in its
turn). Any other content, the finish, an error or the end of input closes the call as
it stands and replays the rest in full. A stream whose calls do not interleave passes
unchanged: each call's arguments are whole when the next one starts, and those that
are not (a call without arguments, arguments that are not JSON) only close later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from chatx import ir

# Events that write nothing and close nothing: they go on while a call is held open.
_QUIET = (ir.Meta, ir.Usage, ir.LaneStart)


def whole_json(text: str) -> bool:
    """Whether ``text`` is a whole JSON object or array: no fragment can follow it."""
    if not text or text[-1] not in "}]":
        return False
    try:
        return isinstance(orjson.loads(text), dict | list)
    except orjson.JSONDecodeError:
        return False


class CallQueue:
    """The calls an encoder holds open, and the events held behind them. The encoder
    gives it ``step`` (encode one event as when nothing is held), ``call_text`` (the
    arguments so far of an open call, None when it is not open) and ``end_call_now``
    (close a call as it stands); it calls :meth:`defer` where a tool call's ``ItemEnd``
    would close it, :meth:`feed_held` for events while :attr:`held` is not None, and
    :meth:`release_all` before it drains."""

    __slots__ = ("step", "call_text", "end_call_now", "held", "pending", "flushing")

    def __init__(
        self,
        step: Callable[[ir.Event, list[Any]], None],
        call_text: Callable[[int | None], str | None],
        end_call_now: Callable[[int | None, list[Any]], None],
    ) -> None:
        self.step = step
        self.call_text = call_text
        self.end_call_now = end_call_now
        # Events of later calls, held while call ``pending`` stays open; None: nothing held.
        self.held: list[ir.Event] | None = None
        self.pending: int | None = None
        self.flushing = False  # replaying at a closing event: every call closes at its ItemEnd

    def clear(self) -> None:
        """Nothing held (a new stream)."""
        self.held = self.pending = None

    def encode(
        self,
        events: Iterable[ir.Event],
        handlers: Mapping[type, Callable[[Any, list[Any]], bool | None]],
        out: list[Any],
    ) -> None:
        """Encode a batch through the encoder's ``handlers`` (event type → method). While
        a call is held open the batch goes to :meth:`feed_held`; a handler that holds one
        open returns true, and the rest of the batch follows it there."""
        if self.held is not None:
            self.feed_held(events, out)
            return
        it = iter(events)
        for event in it:
            if handlers[type(event)](event, out):
                self.feed_held(it, out)

    def defer(self, call: int | None) -> bool:
        """At call ``call``'s ``ItemEnd``: keep it open (and hold what follows) when its
        arguments may still grow."""
        if self.flushing or call is None:
            return False
        text = self.call_text(call)
        if text is None or whole_json(text):
            return False
        self.pending = call
        self.held = []
        return True

    def feed_held(self, events: Iterable[ir.Event], out: list[Any]) -> None:
        """Encode ``events`` with call :attr:`pending` held open."""
        step = self.step
        for event in events:
            held = self.held
            if held is None:  # released by an earlier event of this batch
                step(event, out)
                continue
            kind = type(event)
            if kind is ir.ToolArgsDelta or (
                (kind is ir.ItemStart or kind is ir.ItemEnd) and event.kind == "tool_call"  # type: ignore[union-attr]
            ):
                if event.call != self.pending:  # type: ignore[union-attr]
                    held.append(event)
                    continue
                if kind is ir.ToolArgsDelta:
                    step(event, out)
                    if not event.fragment.rstrip().endswith(("}", "]")):  # type: ignore[union-attr]
                        continue  # cannot be whole yet: no need to join the arguments
                    text = self.call_text(self.pending)
                    if text is not None and whole_json(text):
                        self._release(out, final=False)
                    continue
                if kind is ir.ItemEnd:  # the source ends it (again): it ends here
                    self._release(out, final=False)
                    continue
            elif isinstance(event, _QUIET):
                step(event, out)
                continue
            self._release(out, final=True)
            step(event, out)

    def _release(self, out: list[Any], final: bool) -> None:
        """Close the held-open call and replay what was held; ``final``: close every
        call at its end, as a closing event follows."""
        held, call = self.held or [], self.pending
        self.held = self.pending = None
        self.end_call_now(call, out)
        self.flushing = final
        try:
            self.feed_held(held, out)
        finally:
            self.flushing = False

    def release_all(self, out: list[Any]) -> None:
        if self.held is not None:
            self._release(out, final=True)
