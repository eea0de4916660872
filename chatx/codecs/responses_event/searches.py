"""Web searches: a ``web_search_call`` item ⇄ the IR's :class:`~chatx.ir.WebSearch`.

A Responses web search is one output item: ``output_item.added`` (status
``in_progress``), ``response.web_search_call.in_progress``, ``.searching`` and
``.completed``, then ``output_item.done`` with its ``action`` (``{"type": "search",
"query", "sources": [{"type": "url", "url"}]}``, sources only when the request asks for
them). The decoder passes the item's records through, as for every built-in item, and
says on its added and done records what another format may write of it (``begin``,
``end``). The encoder writes another format's web search (Anthropic's ``web_search``
server tool) as such an item: opened at ``begin``, searching once its query is known,
done at ``end``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.residue import report

from .written import Emit, OpenItem

ITEM = "web_search_call"


def begin(item: dict[str, Any]) -> ir.WebSearch | None:
    """What an added ``web_search_call`` item says: a search begins."""
    if item.get("type") != ITEM:
        return None
    return ir.WebSearch(str(item.get("id") or ""), "begin")


def end(item: dict[str, Any]) -> ir.WebSearch | None:
    """What a done ``web_search_call`` item says: its query and the pages it found."""
    if item.get("type") != ITEM:
        return None
    action = item.get("action")
    action = action if type(action) is dict else {}
    search = ir.WebSearch(str(item.get("id") or ""), "end", failed=item.get("status") == "failed")
    kind = action.get("type")
    search.action = kind if type(kind) is str else ""
    search.extra = {k: v for k, v in item.items() if k not in ("id", "type", "status", "action")}
    rest = {k: v for k, v in action.items() if k not in ("type", "query", "queries", "sources")}
    search.query = _query(action, rest)
    for source in action.get("sources") or ():
        if type(source) is dict and type(source.get("url")) is str:
            search.sources.append({"url": source["url"]})
    if rest:
        search.extra["action"] = rest
    return search


def _query(action: dict[str, Any], rest: dict[str, Any]) -> str | None:
    """A search action's query: its ``query``, else the first of its ``queries`` (a query
    of its own is said once, in queries); the other queries go to ``rest``."""
    query, queries = action.get("query"), action.get("queries")
    said: str | None = None
    if type(query) is str:
        said = query
    elif type(queries) is list and queries and type(queries[0]) is str:
        said = queries[0]
        queries = queries[1:]
    if type(queries) is list and [q for q in queries if q != said]:
        rest["queries"] = queries
    return said


def item_id(call_id: str) -> str:
    """``srvtoolu_X`` → ``ws_X``: the item id derives from the call's."""
    return "ws_" + (call_id[9:] if call_id.startswith("srvtoolu_") else call_id)


class SearchState:
    """A web search item the encoder has open: what its done item will say."""

    __slots__ = ("query", "searching", "sources", "failed", "ended")

    def __init__(self) -> None:
        self.query: str | None = None
        self.searching = False  # response.web_search_call.searching written
        self.sources: list[dict[str, Any]] = []
        self.failed = False
        self.ended = False  # its results came

    def done_item(self, iid: str) -> dict[str, Any]:
        """The item ``output_item.done`` says: ``incomplete`` when no results came."""
        status = "failed" if self.failed else "completed" if self.ended else "incomplete"
        action: dict[str, Any] = {"type": "search"}
        if self.query is not None:
            action["query"] = self.query
        if self.sources:
            action["sources"] = [{"type": "url", "url": s["url"]} for s in self.sources]
        return {"id": iid, "type": ITEM, "status": status, "action": action}


class ResponsesSearches:
    """Another format's web search steps in the Responses encoder, as one
    ``web_search_call`` item: ``open_item`` opens an item (closing the one open) with
    the next output index, ``close`` closes the open item."""

    __slots__ = ("notes", "emit", "open_item", "close")

    def __init__(
        self,
        notes: Notes,
        emit: Emit,
        open_item: Callable[[str, list[dict[str, Any]], str | None], OpenItem],
        close: Callable[[list[dict[str, Any]]], None],
    ) -> None:
        self.notes = notes
        self.emit = emit
        self.open_item = open_item
        self.close = close

    def foreign(
        self, event: ir.Passthrough, item: OpenItem | None, out: list[dict[str, Any]]
    ) -> None:
        """Another format's passthrough record: a web search's step, or said lost.
        ``item`` is the open item."""
        search = event.meaning
        if type(search) is ir.WebSearch and self._search(search, item, out):
            return
        if event.item:  # a record of an item is said once, where the item opens
            self.notes.lost(f"{event.format} {event.item} item with no Responses equivalent")
        elif event.item is None:
            self.notes.lost(f"{event.format} record with no Responses equivalent")

    def _search(
        self, search: ir.WebSearch, item: OpenItem | None, out: list[dict[str, Any]]
    ) -> bool:
        """Write one step of a web search; False when it has no place (its item is not
        open, or the call did something else than search), for the caller to report."""
        if search.step == "begin":
            self._open(search, out)
            return True
        state: SearchState | None = item.search if item is not None else None
        if item is None or state is None or item.call_id != search.id:
            return False
        if search.action != "search":
            return False
        if search.extra:
            report(search.extra, self.notes, "web_search.")
        if search.query is not None:
            state.query = search.query
            self._searching(item, out)
        if search.step == "end":
            state.sources, state.failed, state.ended = search.sources, search.failed, True
            if any(len(source) > 1 for source in search.sources):
                self.notes.lost_field("web_search.sources.title")
            self.close(out)
        return True

    def _open(self, search: ir.WebSearch, out: list[dict[str, Any]]) -> None:
        item = self.open_item(ITEM, out, item_id(search.id))
        item.call_id = search.id
        item.search = SearchState()
        # The action's type, as OpenAI says it at times: the SDK's item requires one.
        action = {"type": "search"}
        added = {"id": item.id, "type": ITEM, "status": "in_progress", "action": action}
        self.emit(
            out, {"type": "response.output_item.added", "item": added, "output_index": item.index}
        )
        self.emit(out, _event("in_progress", item))

    def _searching(self, item: OpenItem, out: list[dict[str, Any]]) -> None:
        if not item.search.searching:
            item.search.searching = True
            self.emit(out, _event("searching", item))

    def done(self, item: OpenItem, out: list[dict[str, Any]]) -> dict[str, Any]:
        """Close a web search item: its completed event, and the item its done says."""
        state: SearchState = item.search
        if state.ended and not state.failed:
            self._searching(item, out)
            self.emit(out, _event("completed", item))
        return state.done_item(item.id)


def _event(what: str, item: Any) -> dict[str, Any]:
    return {"type": f"response.{ITEM}.{what}", "item_id": item.id, "output_index": item.index}
