"""What the Llama Stack decoder and its parts share: the stream being read
(:class:`ReadStream`, one slotted state the decoder makes and hands to each part) and
the turn's stop reason (:class:`Stops`, the part that says its ``Finish``)."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes

from . import records as r

LS = r.LS


class ReadStream:
    """The stream being read and its turn, as the decoder and its parts (the held text,
    the tool calls, the stop reason) share it, and the input line of the record read
    last (a run moves it on)."""

    __slots__ = (
        "open",
        "id",
        "line",
        "message",
        "may_hold",
        "text_out",
        "hold",
        "held",
        "held_text",
        "committed",
        "stop",
        "pending",
        "calls",
        "failed",
    )

    def __init__(self) -> None:
        self.open = False  # a stream has started and not completed
        self.id = ""
        self.line = 0
        self.turn()

    def turn(self) -> None:
        """A new turn: nothing said, nothing held."""
        self.message = False  # an IR message item is open
        self.may_hold = True  # nothing said yet in this turn: text may still be a call
        self.text_out = False  # text went out as text in this turn
        self.hold: str | None = None  # "text" or "tool": what ``held`` holds
        self.held: list[dict[str, Any]] = []
        self.held_text: list[str] = []
        self.committed = False  # the held text has passed a call opener
        self.stop: str | None = None  # the stop reason of the Finish emitted (or pending)
        self.pending: ir.Finish | None = None  # a tool record's Finish, said once calls end
        self.calls = 0
        self.failed = False  # an error frame came: Llama Stack ends a stream so

    def take_held(self) -> tuple[list[dict[str, Any]], str | None]:
        """The records held and what they hold; nothing is held after."""
        held, hold = self.held, self.hold
        self.held, self.hold, self.held_text, self.committed = [], None, [], False
        return held, hold

    def open_message(self, out: list[ir.Event]) -> None:
        if not self.message:
            self.message = True
            out.append(ir.ItemStart(0, "message"))

    def close_message(self, out: list[ir.Event]) -> None:
        if self.message:
            self.message = False
            out.append(ir.ItemEnd(0, "message"))


class Stops:
    """The Llama Stack decoder's part that reads stop reasons into the turn's ``Finish``
    (:class:`ReadStream`'s ``stop`` and ``pending``)."""

    __slots__ = ("notes", "read")

    def __init__(self, read: ReadStream, notes: Notes) -> None:
        self.read = read
        self.notes = notes

    def stop(self, event: dict[str, Any], out: list[ir.Event], terminal: bool = False) -> Any:
        """Emit ``Finish`` for the first stop reason; return the one the encoder will write
        on this record (terminal tool records repeat a stop reason already known).

        A tool record's stop reason does not end the turn yet: Llama Stack's OpenAI-compat
        layer puts ``end_of_message`` on each ``succeeded`` of parallel calls, and the next
        call's records follow. Its ``Finish`` is pending until a record that is no tool
        call's, the ``complete`` event or the end of input (:meth:`settle`)."""
        read = self.read
        stop = event.get("stop_reason")
        if read.stop is None and isinstance(stop, str) and stop:
            reason = r.STOP_TO_FINISH.get(stop)
            if reason is None:
                self.notes.warning(f"unknown stop_reason {stop!r}: read as end_of_turn")
                reason = "stop"
            # A turn that ends in a call is a tool_calls finish for chat and Responses
            # clients, whichever of end_of_turn / end_of_message the model used.
            if reason == "stop" and read.calls:
                reason = "tool_calls"
            read.stop = r.stop_word(reason, stop)
            finish = ir.Finish(0, reason, stop)
            if terminal:
                # The Llama encoder writes this record before it sees the Finish: the
                # record's own note gives it the stop reason, the Finish's (deferred)
                # keeps the Finish off later records.
                finish.own = r.DEFERRED
                read.pending = finish
            else:
                out.append(finish)
            return read.stop
        return read.stop if terminal else None

    def terminal(self, event: dict[str, Any], out: list[ir.Event]) -> str | None:
        """Read a tool record's stop reason; the stop reason the Llama encoder writes on
        this record when its ``Finish`` is pending (later), for the record's own note."""
        pending = self.read.pending
        self.stop(event, out, terminal=True)
        return self.read.stop if self.read.pending is not pending else None

    def settle(self, out: list[ir.Event]) -> None:
        """Emit the pending ``Finish`` of a tool record: no more calls come in this turn."""
        read = self.read
        finish = read.pending
        if finish is not None:
            if finish.reason == "stop" and read.calls:  # a call came after the stop reason
                finish.reason = "tool_calls"
            out.append(finish)
            read.pending = None
