"""Citations: Anthropic's ``citations_delta`` ⇄ the IR's :class:`~chatx.ir.Citation`.

A text block that will cite starts with ``"citations": []``, and each
``citations_delta`` comes before the text it cites: a citation covers its block's text.
The decoder says what another format may write of one: a web page
(``web_search_result_location``, and a ``search_result_location`` whose source is a
URL) or a document with its file id (``char_location``, ``page_location``,
``content_block_location``); the rest (``cited_text``, ``encrypted_index``, the
document's place in the request) is the citation's ``extra``. A document given in the
request without a file id has no citation another format holds.

The encoder writes another format's web page citations (Responses' ``url_citation``
annotations, which come once the text they cite has streamed) into the text block open
then, and ends that block: the text after it is a block of its own, as the API splits a
message around its citations. An annotation's span is kept when it is that block's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.residue import report

from . import records as r
from .written import OpenBlock, Written

_DOCUMENTS = ("char_location", "page_location", "content_block_location")


def citation_of(citation: Any) -> ir.Citation | None:
    """The IR Citation of an Anthropic citation, or None where no other format has one."""
    if type(citation) is not dict:
        return None
    kind = citation.get("type")
    if kind == "web_search_result_location":
        return _page(citation, citation.get("url"), "url")
    if kind == "search_result_location":
        source = citation.get("source")
        if type(source) is str and source.startswith(("https://", "http://")):
            return _page(citation, source, "source")
        return None
    file_id = citation.get("file_id")
    if kind in _DOCUMENTS and type(file_id) is str and file_id:
        title = citation.get("document_title")
        said = {"type", "file_id"} | ({"document_title"} if type(title) is str else set())
        extra = {k: v for k, v in citation.items() if k not in said}
        return ir.Citation(
            "file", file_id=file_id, filename=title if type(title) is str else None, extra=extra
        )
    return None


def _page(citation: dict[str, Any], url: Any, field: str) -> ir.Citation | None:
    if type(url) is not str:
        return None
    title = citation.get("title")
    said = {"type", field} | ({"title"} if type(title) is str or title is None else set())
    extra = {k: v for k, v in citation.items() if k not in said}
    return ir.Citation("url", url, title if type(title) is str else None, extra=extra)


def web_citation(cite: ir.Citation) -> dict[str, Any]:
    """A web page citation as Anthropic says one: the quoted text and the index a client
    hands back are not said by another format, so they are empty."""
    return {
        "type": "web_search_result_location",
        "cited_text": "",
        "url": cite.url or "",
        "title": cite.title,
        "encrypted_index": "",
    }


@dataclass(slots=True, eq=False)
class AnthropicCitations:
    """Another format's citations in the anthropic encoder's text blocks. ``written`` is
    the message it shares with the content blocks, ``open_text`` opens a text block
    (closing the one open)."""

    written: Written
    notes: Notes
    open_text: Callable[[list[Any]], OpenBlock]

    def cite(self, cite: ir.Citation, block: OpenBlock | None, out: list[Any]) -> bool:
        """Write another format's citation in ``block``, the open block, when it is a
        text block (one opens for it when not: the citation comes before its text);
        False when Anthropic has no place for it (a file cited by id)."""
        if cite.kind != "url":
            return False
        written = self.written
        if block is None or block.kind != "text":
            block = self.open_text(out)
            block.start = written.said
        elif written.said > block.start:
            block.cited = True  # the text it cites is written: what follows is a new block
        out.append(
            r.block_delta(block.index, {"type": "citations_delta", "citation": web_citation(cite)})
        )
        written.cited = True
        if cite.start is not None and (cite.start != block.start or cite.end != written.said):
            written.note_once(
                "span",
                "citation spans (start_index, end_index) are lost: an Anthropic citation "
                "covers its text block, which ends where the citation came",
            )
        if cite.extra:
            report(cite.extra, self.notes, "annotation.")
        return True
