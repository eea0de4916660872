"""Web searches: Anthropic's ``web_search`` server tool ⇄ the IR's
:class:`~chatx.ir.WebSearch`.

The API streams a search as two blocks: a ``server_tool_use`` block named
``web_search`` (id ``srvtoolu_…``) whose ``input_json_delta`` records say its query,
then a ``web_search_tool_result`` block (``tool_use_id`` the call's), whole in its
``content_block_start``: the pages found (``url``, ``title``, ``encrypted_content``,
``page_age``), or an error object (``error_code``). Both pass through the decoder as the
records of an item the IR has no words for; it says on the call's start that a search
begins, on its stop the query, and on the result's start the pages (their encrypted
content and age are the step's ``extra``). Other server tools are said nowhere else.

The encoder writes another format's finished web search (Responses' ``web_search_call``
item with a search action) as those two blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from chatx import ir
from chatx.notes import Notes
from chatx.residue import report

from . import records as r
from .written import Written

CALL, RESULT = "server_tool_use", "web_search_tool_result"


def begin(block: dict[str, Any]) -> ir.WebSearch | None:
    """A ``server_tool_use`` block of the ``web_search`` tool: a search begins."""
    call_id = block.get("id")
    if block.get("type") != CALL or block.get("name") != "web_search" or type(call_id) is not str:
        return None
    return ir.WebSearch(call_id, "begin")


def query_of(text: str) -> str | None:
    """The query of a web search call's input, as its deltas joined say it."""
    try:
        value = orjson.loads(text) if text.strip() else {}
    except orjson.JSONDecodeError:
        return None
    query = value.get("query") if type(value) is dict else None
    return query if type(query) is str else None


def result(block: dict[str, Any], query: str | None) -> ir.WebSearch | None:
    """A ``web_search_tool_result`` block: the search's end, its pages or its error."""
    call_id = block.get("tool_use_id")
    if block.get("type") != RESULT or type(call_id) is not str:
        return None
    search = ir.WebSearch(call_id, "end", query)
    content = block.get("content")
    kept: list[Any] = []
    if type(content) is list:
        for page in content:
            url = page.get("url") if type(page) is dict else None
            if type(url) is not str:
                kept.append(page)
                continue
            title = page.get("title")
            search.sources.append(
                {"url": url, "title": title} if type(title) is str else {"url": url}
            )
            rest = {k: v for k, v in page.items() if k not in ("type", "url", "title")}
            if rest:
                kept.append(rest)
    else:
        search.failed = True
        kept.append(content)
    if kept:
        search.extra["results"] = kept
    rest = {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content")}
    search.extra.update(rest)
    return search


def tool_id(item_id: str) -> str:
    """``ws_X`` → ``srvtoolu_X``: the call id derives from the item's."""
    return "srvtoolu_" + (item_id[3:] if item_id.startswith("ws_") else item_id)


@dataclass(slots=True, eq=False)
class AnthropicSearches:
    """Another format's web searches in the anthropic encoder: each written whole, as
    its two blocks, once it ends. ``written`` is the message (its block count, the
    losses said once), ``close_block`` closes the block open."""

    written: Written
    notes: Notes
    close_block: Callable[[list[Any]], None]

    def write(self, search: ir.WebSearch, out: list[Any]) -> None:
        """Another format's web search, written whole once it ends; said lost when its
        call did something else than search (Responses also opens pages)."""
        if search.step != "end":
            return  # the blocks are written when the search ends
        if search.action != "search":
            what = search.action or "no action"
            self.notes.lost(f"web_search_call item ({what}) has no place in Anthropic messages")
            return
        self.close_block(out)
        tool = tool_id(search.id)
        index = self.written.index
        out.append(
            r.block_start(index, {"type": CALL, "id": tool, "name": "web_search", "input": {}})
        )
        if search.query is not None:
            out.append(
                r.block_delta(index, r.json_delta(orjson.dumps({"query": search.query}).decode()))
            )
        out.append(r.block_stop(index))
        content: Any
        if search.failed:
            content = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
            self.notes.lost("a failed web search says no error code: unavailable written")
        else:
            content = [_page(source) for source in search.sources]
            noted = self.written.noted
            if content and "pages" not in noted:
                noted.add("pages")
                self.notes.warning(
                    "web search results have no encrypted_content (nor titles) outside "
                    "Anthropic: written empty"
                )
        out.append(
            r.block_start(index + 1, {"type": RESULT, "tool_use_id": tool, "content": content})
        )
        out.append(r.block_stop(index + 1))
        self.written.index = index + 2
        if search.extra:
            report(search.extra, self.notes, "web_search.")


def _page(source: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "web_search_result",
        "title": source.get("title") or "",
        "url": source["url"],
        "encrypted_content": "",
        "page_age": None,
    }
