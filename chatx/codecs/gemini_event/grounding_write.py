"""Writing grounding in the Gemini encoder: another format's citations and web
searches (the IR's :class:`~chatx.ir.Citation` and :class:`~chatx.ir.WebSearch`) →
each candidate's ``groundingMetadata`` (reading it is :mod:`.grounding_read`'s, which
says what its fields hold and why a span counts bytes).

**Encoding.** Another format's citations of a message item become the segments of its
text (an Anthropic citation, which covers its text block, the item's whole text), each
page a ``groundingChunks`` entry; a finished web search gives its query and its pages.
All of it goes in the ``groundingMetadata`` of the chunk that finishes the candidate, as
Gemini sends it. Spans are written in UTF-8 bytes of the candidate's answer text.
Citations come back as ``groundingMetadata``, whatever they were: other formats have one
kind of url citation, so a ``citationMetadata`` citation comes back as a grounding
support of the same page and span.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.residue import report


class GroundingWriter:
    """Another format's citations and web searches in the Gemini encoder: each
    candidate's ``groundingMetadata``, written on the chunk that finishes it."""

    __slots__ = ("notes", "lanes", "lane")

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.lanes: dict[int, _Written] = {}
        self.lane = 0  # the lane of the last message item: a citation without one cites it

    def restart(self) -> None:
        self.left()
        self.lane = 0

    def _of(self, lane: int) -> _Written:
        written = self.lanes.get(lane)
        if written is None:
            written = self.lanes[lane] = _Written()
        return written

    def text(self, lane: int, text: str) -> None:
        """Answer text written in ``lane`` (what spans count)."""
        written = self.lanes.get(lane)
        if written is not None:
            if written.item_from < 0:
                written.item_from = written.texts.size()
            written.texts.append(text)

    def texts(self, lane: int, texts: list[str]) -> None:
        """A run of answer text written in ``lane``."""
        written = self.lanes.get(lane)
        if written is not None and texts:
            if written.item_from < 0:
                written.item_from = written.texts.size()
            written.texts.extend(texts)

    def item_start(self, lane: int) -> None:
        self.lane = lane
        written = self._of(lane)
        self._place(written)
        written.item_from = written.texts.size()

    def item_end(self, lane: int) -> bool:
        """The message item ended: its citations are placed. True when it had some."""
        written = self.lanes.get(lane)
        if written is None:
            return False
        cited = bool(written.waiting) or written.cited
        self._place(written)
        written.item_from, written.cited = -1, False
        return cited

    def cite(self, lane: int | None, cite: ir.Citation) -> bool:
        """Hold a citation of the message item open in ``lane`` (None: the last one)
        until the item's text is all written; False when Gemini has no place for it (a
        file cited by id)."""
        if cite.kind != "url" or not cite.url:
            return False
        written = self._of(self.lane if lane is None else lane)
        if written.item_from < 0:
            written.item_from = written.texts.size()  # it cites what comes next
        written.waiting.append(cite)
        written.cited = True
        if cite.extra:
            report(cite.extra, self.notes, "citation.")
        return True

    def search(self, search: ir.WebSearch) -> bool:
        """A step of another format's web search; False when the call did something
        else than search (Responses also opens pages), for the caller to report."""
        if search.action != "search":
            return False
        written = self._of(self.lane)
        if search.step != "end":
            written.searching.add(search.id)
            return True
        written.searching.discard(search.id)
        if search.failed:
            self.notes.lost("a failed web search has no place in Gemini's groundingMetadata")
        if search.query:
            written.queries.append(search.query)
        for source in search.sources:
            written.chunk(source["url"], source.get("title"))
        if search.extra:
            report(search.extra, self.notes, "web_search.")
        return True

    def metadata(self, lane: int) -> dict[str, Any] | None:
        """The ``groundingMetadata`` of a candidate that finishes, or None."""
        written = self.lanes.pop(lane, None)
        if written is None:
            return None
        self._place(written)
        self._unended(written)
        out: dict[str, Any] = {}
        if written.chunks:
            out["groundingChunks"] = [
                {"web": {"uri": uri, "title": title} if title is not None else {"uri": uri}}
                for uri, title in written.chunks.items()
            ]
        if written.supports:
            out["groundingSupports"] = list(written.supports.values())
        if written.queries:
            out["webSearchQueries"] = written.queries
        return out or None

    def left(self) -> None:
        """The stream ended with candidates unfinished: their grounding was never written."""
        lost = sum(len(w.supports) + len(w.waiting) + len(w.queries) for w in self.lanes.values())
        if lost:
            self.notes.lost(f"{lost} citation(s) or search(es) of a candidate that never finished")
        for written in self.lanes.values():
            self._unended(written)
        self.lanes.clear()

    def _unended(self, written: _Written) -> None:
        """Searches that began and never ended (Anthropic's pause_turn): Gemini says a
        search by its results."""
        if written.searching:
            count = len(written.searching)
            written.searching.clear()
            self.notes.lost(
                f"{count} web search(es) that never ended: no place in groundingMetadata"
            )

    def _place(self, written: _Written) -> None:
        """The waiting citations as segments of the item's text, in bytes of the
        candidate's answer text."""
        if not written.waiting:
            return
        start_at = max(written.item_from, 0)
        whole = written.texts.text()
        item = whole[start_at:]
        base = len(whole[:start_at].encode("utf-8", "surrogatepass"))
        for cite in written.waiting:
            first = 0 if cite.start is None else cite.start
            last = len(item) if cite.end is None else cite.end
            if not 0 <= first <= last <= len(item):
                self.notes.lost(f"a citation of {cite.url!r} spans past its text: left out")
                continue
            number = written.chunk(cite.url or "", cite.title)
            start = base + len(item[:first].encode("utf-8", "surrogatepass"))
            end = start + len(item[first:last].encode("utf-8", "surrogatepass"))
            support = written.supports.get((start, end))
            if support is None:
                segment: dict[str, Any] = {"startIndex": start} if start else {}
                segment["endIndex"] = end
                segment["text"] = item[first:last]
                support = written.supports[(start, end)] = {
                    "segment": segment,
                    "groundingChunkIndices": [],
                }
            if number not in support["groundingChunkIndices"]:
                support["groundingChunkIndices"].append(number)
        written.waiting.clear()


class _Written:
    """One candidate's grounding being written: its answer text, the citations waiting
    for their item's text, the pages (by address, with their number), the supports (by
    span), the queries."""

    __slots__ = (
        "texts", "item_from", "waiting", "cited", "chunks", "supports", "queries", "searching",
    )  # fmt: skip

    def __init__(self) -> None:
        self.texts = Pieces()  # folded, as Spans' (a list held 60 bytes a delta)
        self.item_from = -1  # characters of texts before the item cited; -1: none
        self.waiting: list[ir.Citation] = []
        self.cited = False
        self.chunks: dict[str, str | None] = {}
        self.supports: dict[tuple[int, int], dict[str, Any]] = {}
        self.queries: list[str] = []
        self.searching: set[str] = set()  # searches begun, not ended

    def chunk(self, uri: str, title: str | None) -> int:
        if uri not in self.chunks or self.chunks[uri] is None and title is not None:
            self.chunks[uri] = title
        return list(self.chunks).index(uri)
