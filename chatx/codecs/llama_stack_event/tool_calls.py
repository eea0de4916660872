"""Tool calls in the Llama Stack decoder: ``started`` → ``in_progress`` → ``succeeded``
or ``failed``, and the lone ``succeeded`` that follows a call written as text.

Fragments are raw model text (python, ``brave_search.call(...)``, a ``{"name", …}``
wrapper), and the call's id and name arrive only with ``succeeded``: the fragments are
held, and the call is said whole once the stream decides what it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.notes import Notes

from . import records as r
from .held import Held, instruction
from .read_stream import ReadStream, Stops

_HELD_STATUSES = ("started", "in_progress")


@dataclass(slots=True, eq=False)
class ToolCalls:
    """The Llama Stack decoder's part that reads tool-call records. It shares the
    :class:`~chatx.codecs.llama_stack_event.read_stream.ReadStream` with the decoder and
    its other parts: ``held`` holds a call's records until it ends and releases what
    was none, ``stops`` says a record's stop reason, ``passthrough`` is the decoder's
    (a record it keeps as it is)."""

    read: ReadStream
    notes: Notes
    held: Held
    stops: Stops
    passthrough: Callable[[dict[str, Any], str, list[ir.Event]], None]

    def feed(
        self,
        data: dict[str, Any],
        event: dict[str, Any],
        delta: dict[str, Any],
        out: list[ir.Event],
    ) -> None:
        """A ``tool_call`` delta: held until the call ends, or the call said whole."""
        read = self.read
        status = delta.get("parse_status")
        if status in _HELD_STATUSES:
            if status == "started" or read.hold != "tool":
                self.held.release(out)
                read.hold = "tool"
            read.held.append(data)
        elif status == "succeeded" and isinstance(delta.get("tool_call"), dict):
            self._succeeded(data, event, delta["tool_call"], out)
        elif status == "failed":
            self._failed(data, event, delta.get("tool_call"), out)
        else:
            self.passthrough(data, f"tool_call delta with parse_status {status!r}", out)

    def _succeeded(
        self, data: dict[str, Any], event: dict[str, Any], call: dict[str, Any], out: list[ir.Event]
    ) -> None:
        read = self.read
        held, hold = read.take_held()
        arguments, as_string = r.arguments_text(call)
        streamed = _argument_fragments(held, arguments) if hold == "tool" else None
        # The started record (and, unless they are the arguments, the fragments) say no
        # more than the call: only the Llama encoder writes them back.
        out.extend(instruction(d) for d in (held[:1] if streamed else held))
        if hold is None and read.text_out and not read.calls:
            self.notes.warning(
                "text before this tool call may have been the call itself "
                "(it did not look like one): it stays message text"
            )
        read.close_message(out)
        number = read.calls
        read.calls += 1
        read.may_hold = False
        name = r.tool_name(call.get("tool_name"))
        cid = call.get("call_id")
        cid = cid if isinstance(cid, str) else r.call_id(read.id, number)
        out.append(ir.ItemStart(0, "tool_call", call=number, call_id=cid, name=name))
        _arguments(number, arguments, streamed, out)
        end = ir.ItemEnd(0, "tool_call", call=number)
        out.append(end)
        carried = self.stops.terminal(event, out)
        payload = r.tool_call(cid, name, arguments, as_string)
        stop = read.stop
        end.extra = r.kept(
            r.residue(data, r.event("progress", r.tool_delta("succeeded", payload), None, stop))
        )
        if carried is not None or as_string:
            end.own = r.LlamaStackOwn(stop=carried, args_string=as_string)

    def _failed(
        self, data: dict[str, Any], event: dict[str, Any], value: Any, out: list[ir.Event]
    ) -> None:
        """A call Llama Stack could not parse: its raw text is message text."""
        read = self.read
        if read.hold == "text":
            self.held.release(out)
        held = read.held
        read.held, read.hold = [], None
        fragments = [
            d["event"]["delta"].get("tool_call")
            for d in held
            if d["event"]["delta"].get("parse_status") == "in_progress"
        ]
        joined = "".join(f for f in fragments if isinstance(f, str))
        if isinstance(value, str) and value and value != joined:
            said, shown = self._failed_text(held, value, out)
        else:
            said, shown = self._failed_fragments(held, value, out)
        r.own_of(said).stop = self.stops.terminal(event, out)  # said made with a note
        canonical = r.event("progress", r.tool_delta("failed", shown), None, read.stop)
        said.extra = r.kept(r.residue(data, canonical))

    def _failed_text(
        self, held: list[dict[str, Any]], value: str, out: list[ir.Event]
    ) -> tuple[ir.TextDelta | ir.Meta, Any]:
        """The failed text is not the fragments: it is the text, they are residue. The
        residue of the failed record goes with that text; the text shown is returned."""
        out.extend(instruction(d) for d in held)
        self.read.open_message(out)
        text = ir.TextDelta(0, value, None, {}, None, r.LlamaStackOwn(held="failed"))
        out.append(text)
        self.read.may_hold, self.read.text_out = False, True
        return text, value

    def _failed_fragments(
        self, held: list[dict[str, Any]], value: Any, out: list[ir.Event]
    ) -> tuple[ir.TextDelta | ir.Meta, Any]:
        """The failed text is the fragments (or there is none): they are the text, and
        the failed record no IR content."""
        for d in held:
            self.held.release_tool(d, out)
        mark = None if isinstance(value, str) and value else ""
        meta = ir.Meta(0, {}, None, None, r.LlamaStackOwn(held="failed", value=mark))
        out.append(meta)
        return meta, value if mark is None else ""


def _arguments(
    number: int, arguments: str, streamed: list[tuple] | None, out: list[ir.Event]
) -> None:
    """Call ``number``'s arguments: the fragments as they streamed when they are its
    JSON arguments, else the arguments in one delta."""
    if not streamed:
        out.append(ir.ToolArgsDelta(0, number, arguments))
        return
    for held_data, fragment in streamed:
        canonical = r.event("progress", r.tool_delta("in_progress", fragment))
        extra = r.kept(r.residue(held_data, canonical))
        out.append(ir.ToolArgsDelta(0, number, fragment, extra, None, r.IN_PROGRESS))


def _argument_fragments(held: list[dict[str, Any]], arguments: str) -> list[tuple] | None:
    """The ``in_progress`` fragments with their records, when they are the call's JSON
    arguments (as chatx and Llama Stack's OpenAI-compat layer write them); ``None`` when
    they are the model's raw text (python, ``tool.call(…)``, a ``{"name", "parameters"}``
    envelope), which a JSON-arguments stream cannot carry."""
    if len(held) < 2 or held[0]["event"]["delta"].get("parse_status") != "started":
        return None
    out = []
    for data in held[1:]:
        value = data["event"]["delta"].get("tool_call")
        if not isinstance(value, str) or not value:
            return None
        out.append((data, value))
    return out if "".join(value for _, value in out) == arguments else None
