"""Output items and their parts in the Responses encoder: each item opened with
``output_item.added`` (one at a time: opening one closes the one before), each part with
``content_part.added`` (or ``reasoning_summary_part.added``) when its first delta comes;
a part closed with its done events (its annotations first), an item with its last part's,
a function call's ``function_call_arguments.done``, and ``output_item.done``. A tool call
may be held open past its end (:mod:`chatx.codecs.call_order`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatx import ir
from chatx.codecs.call_order import CallQueue
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.residue import MetaReport, merge, report

from . import shapes
from .envelope import item_id
from .written import OpenItem, OpenPart, ResponseState

if TYPE_CHECKING:
    from .citations import ResponsesCitations
    from .searches import ResponsesSearches

_PREFIX = {"message": "msg", "reasoning": "rs", "tool_call": "fc"}


@dataclass(slots=True, eq=False)
class Items:
    """Opens and closes the response's output items and their parts. What it makes with
    its own openers: ``citations`` (another format's citations, annotations of the part
    they fall in), ``searches`` (another format's web searches, items of their own) and
    ``queue`` (tool calls held open; ``step`` is the encoder's)."""

    state: ResponseState
    notes: Notes
    lost_meta: MetaReport
    step: Callable[[ir.Event, list[Any]], None]  # the encoder's, for the queue
    queue: CallQueue = field(init=False)
    # Made when another format's first citation or web search comes: most streams have
    # neither, and a convert of them loads neither part.
    _citations: ResponsesCitations | None = field(init=False, default=None)
    _searches: ResponsesSearches | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.queue = CallQueue(self.step, self.call_text, self.end_call_now)

    @property
    def citations(self) -> ResponsesCitations:
        made = self._citations
        if made is None:
            from .citations import ResponsesCitations

            made = ResponsesCitations(self.notes, self.lost_meta, self.state.emit, self.part)
            self._citations = made
        return made

    @property
    def searches(self) -> ResponsesSearches:
        made = self._searches
        if made is None:
            from .searches import ResponsesSearches

            made = ResponsesSearches(self.notes, self.state.emit, self.new_item, self.close)
            self._searches = made
        return made

    def open(
        self, kind: str, lane: int, out: list[dict[str, Any]], start: ir.ItemStart | None = None
    ) -> OpenItem:
        """A new item of ``kind`` (the one open closed), as ``start`` says it when given."""
        if lane != 0:
            self.notes.lost(f"choice {lane}: a Responses stream holds one choice")
        own = self.state.own
        iid = start.id if start is not None and start.id and own else None
        item = self.new_item(kind, out, iid)
        if kind == "message":
            added = shapes.message_item(item.id, "in_progress", [])
        elif kind == "reasoning":
            added = shapes.reasoning_item(item.id, [], None)
        else:
            item.call = start.call if start is not None else None
            item.call_id = start.call_id if start is not None else None
            item.name = start.name if start is not None else None
            if item.call is not None:
                self.state.calls.add(item.call)
            added = shapes.function_item(item.id, "in_progress", "", item.call_id, item.name)
        if start is not None and start.extra:
            if own:
                merge(added, start.extra.get("added", {}))
                item.extra = start.extra
            else:
                report(start.extra, self.notes, "item.")
        self.state.emit(
            out,
            {"type": "response.output_item.added", "item": added, "output_index": item.index},
            item.extra.get("event") if own else None,
        )
        return item

    def new_item(self, kind: str, out: list[dict[str, Any]], iid: str | None) -> OpenItem:
        """The open item, closed; a new one of ``kind`` open with the next output index,
        its id ``iid`` or one derived from the response's."""
        self.close(out)
        state = self.state
        index = state.next_index
        state.next_index += 1
        if iid is None:
            rid = state.response.get("id")
            if not isinstance(rid, str):  # the source's own envelope, with an id of another type
                rid = "resp_0"
            iid = item_id(rid, _PREFIX[kind], index)
        item = state.item = OpenItem(kind, iid, index)
        state.ids.items[index] = iid
        return item

    def item_start(self, event: ir.ItemStart, out: list[dict[str, Any]]) -> None:
        self.open(event.kind, event.lane, out, event)

    def item_end(self, event: ir.ItemEnd, out: list[dict[str, Any]]) -> bool:
        """Close the open item; true when a tool call is held open instead, and with it
        the events after this one in its batch (see :mod:`chatx.codecs.call_order`)."""
        item = self.state.item
        if item is None or item.kind != event.kind:
            return False
        own = self.state.own
        if event.extra and not own:
            report(event.extra, self.notes, "item.")
        if item.kind == "tool_call" and not own and self.queue.defer(item.call):
            return True
        sealed = event.encrypted if event.encrypted is not None else event.signature
        if sealed is not None and not own:
            # Anthropic's signature or redacted thinking: the token a client hands back
            # with the reasoning, what Responses keeps as encrypted_content.
            if event.encrypted is None and not item.parts:
                # Empty thinking with its signature: an empty summary part tells it from
                # reasoning withheld (none), which the decoder reads back as redacted.
                self.part(item, "summary_text", out)
            self.close(out, {"item": {"encrypted_content": sealed}})
            return False
        self.close(out, event.extra if own else None)
        return False

    def call_text(self, call: int | None) -> str | None:
        """The arguments so far of call ``call`` when it is the open item (for the queue)."""
        item = self.state.item
        if item is None or item.kind != "tool_call" or item.call != call:
            return None
        return item.args.text()

    def end_call_now(self, call: int | None, out: list[dict[str, Any]]) -> None:
        self.close(out)  # nothing opens while a call is held open: it is the open item

    def close(self, out: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
        """Close the open item, its open part first; ``extra`` is own residue."""
        state = self.state
        item = state.item
        if item is None:
            return
        state.item = None
        self.close_part(item, out)
        emit = state.emit
        base: dict[str, Any] = {"type": "response.output_item.done", "output_index": item.index}
        if item.search is not None:
            done = self.searches.done(item, out)
        elif item.kind != "tool_call":
            done = item.done()
        else:
            arguments = item.args.text()
            emit(out, shapes.arguments_done(item.id, item.index, arguments, item.name))
            done = shapes.function_item(item.id, "completed", arguments, item.call_id, item.name)
        base["item"] = done
        if extra and extra.get("item"):
            merge(done, extra["item"])
            state.ids.keep(base, self.notes)
            done = base["item"]
        emit(out, base, (extra or {}).get("event"))
        state.output.append(done)
        state.closed[item.index] = done

    # --- parts ------------------------------------------------------------------------

    def part(
        self, item: OpenItem, ptype: str, out: list[dict[str, Any]], number: int = 0
    ) -> OpenPart:
        """The open part of ``ptype`` (summary parts also by number), opened if need be."""
        part = item.part
        if (
            part is not None
            and part.kind == ptype
            and (ptype != "summary_text" or part.number == number)
        ):
            return part
        self.close_part(item, out)
        part = OpenPart(ptype, Pieces(), number if ptype == "summary_text" else len(item.parts))
        item.parts.append(part)
        item.part = part
        self.state.emit(out, shapes.part_added(item.id, item.index, part.number, ptype))
        return part

    def close_part(self, item: OpenItem, out: list[dict[str, Any]]) -> None:
        part = item.part
        if part is None:
            return
        item.part = None
        if part.cites:
            self.citations.annotate(item, part, out)
        payloads = shapes.part_done(
            item.id, item.index, part.number, part.kind, part.texts.text(), part.logprobs
        )
        if part.annotations:
            payloads[-1]["part"]["annotations"] = list(part.annotations)
        emit = self.state.emit
        for payload in payloads:
            emit(out, payload)
