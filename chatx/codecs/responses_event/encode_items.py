"""Output items in the Responses encoder: each opened with ``output_item.added`` (one at a
time: opening one closes the one before), closed with its last part's done events, a
function call's ``function_call_arguments.done``, and ``output_item.done``; a tool call
may be held open past its end (:mod:`chatx.codecs.call_order`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx import ir
from chatx.codecs.call_order import CallQueue
from chatx.codecs.responses_event import shapes
from chatx.codecs.responses_event.envelope import item_id
from chatx.codecs.responses_event.parts import OpenItem, PartEncoding
from chatx.codecs.responses_event.searches import Searches
from chatx.residue import merge

_PREFIX = {"message": "msg", "reasoning": "rs", "tool_call": "fc"}


class ItemEncoding(PartEncoding):
    """The item half of :class:`~chatx.codecs.responses_event.encode.ResponsesEncoder`,
    over its parts (its citations and web searches are its collaborators)."""

    response: dict[str, Any]
    output: list[Any]
    closed: dict[int, Any]
    next_index: int
    ids: Any
    searches: Searches
    queue: CallQueue

    def _lost(self, extra: dict[str, Any], prefix: str) -> None:  # pragma: no cover
        raise NotImplementedError

    def _open(
        self, kind: str, lane: int, out: list[dict[str, Any]], start: ir.ItemStart | None = None
    ) -> OpenItem:
        if lane != 0:
            self.notes.lost(f"choice {lane}: a Responses stream holds one choice")
        iid = start.id if start is not None and start.id and self.own else None
        item = self._new_item(kind, out, iid)
        if kind == "message":
            added = shapes.message_item(item.id, "in_progress", [])
        elif kind == "reasoning":
            added = shapes.reasoning_item(item.id, [], None)
        else:
            item.call = start.call if start is not None else None
            item.call_id = start.call_id if start is not None else None
            item.name = start.name if start is not None else None
            if item.call is not None:
                self.calls.add(item.call)
            added = shapes.function_item(item.id, "in_progress", "", item.call_id, item.name)
        if start is not None and start.extra:
            if self.own:
                merge(added, start.extra.get("added", {}))
                item.extra = start.extra
            else:
                self._lost(start.extra, "item.")
        self._emit(
            out,
            {"type": "response.output_item.added", "item": added, "output_index": item.index},
            item.extra.get("event") if self.own else None,
        )
        return item

    def _new_item(self, kind: str, out: list[dict[str, Any]], iid: str | None) -> OpenItem:
        """The open item, closed; a new one of ``kind`` open with the next output index,
        its id ``iid`` or one derived from the response's."""
        self._close(out)
        index = self.next_index
        self.next_index += 1
        if iid is None:
            rid = self.response.get("id")
            if not isinstance(rid, str):  # the source's own envelope, with an id of another type
                rid = "resp_0"
            iid = item_id(rid, _PREFIX[kind], index)
        item = self.item = OpenItem(kind, iid, index)
        self.ids.items[index] = iid
        return item

    def _item_start(self, event: ir.ItemStart, out: list[dict[str, Any]]) -> None:
        self._open(event.kind, event.lane, out, event)

    def _item_end(
        self, event: ir.ItemEnd, out: list[dict[str, Any]], rest: Iterator[ir.Event]
    ) -> None:
        """Close the open item; or hold a tool call open, and with it ``rest``, the events
        after this one in its batch (see :mod:`chatx.codecs.call_order`)."""
        item = self.item
        if item is None or item.kind != event.kind:
            return
        if event.extra and not self.own:
            self._lost(event.extra, "item.")
        if item.kind == "tool_call" and not self.own and self.queue.defer(item.call):
            self.queue.feed_held(rest, out)
            return
        sealed = event.encrypted if event.encrypted is not None else event.signature
        if sealed is not None and not self.own:
            # Anthropic's signature or redacted thinking: the token a client hands back
            # with the reasoning, what Responses keeps as encrypted_content.
            self._close(out, {"item": {"encrypted_content": sealed}})
            return
        self._close(out, event.extra if self.own else None)

    def _call_text(self, call: int | None) -> str | None:
        """The arguments so far of call ``call`` when it is the open item (for the queue)."""
        item = self.item
        if item is None or item.kind != "tool_call" or item.call != call:
            return None
        return item.args.text()

    def _end_call_now(self, call: int | None, out: list[dict[str, Any]]) -> None:
        self._close(out)  # nothing opens while a call is held open: it is the open item

    def _close(self, out: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
        item = self.item
        if item is None:
            return
        self.item = None
        self._close_part(item, out)
        base: dict[str, Any] = {"type": "response.output_item.done", "output_index": item.index}
        if item.search is not None:
            done = self.searches.done(item, out)
        elif item.kind != "tool_call":
            done = item.done()
        else:
            arguments = item.args.text()
            self._emit(out, shapes.arguments_done(item.id, item.index, arguments, item.name))
            done = shapes.function_item(item.id, "completed", arguments, item.call_id, item.name)
        base["item"] = done
        if extra and extra.get("item"):
            merge(done, extra["item"])
            self.ids.keep(base, self.notes)
            done = base["item"]
        self._emit(out, base, (extra or {}).get("event"))
        self.output.append(done)
        self.closed[item.index] = done
