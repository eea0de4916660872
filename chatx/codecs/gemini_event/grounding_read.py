"""Reading grounding and citations in the Gemini decoder: Gemini's
``groundingMetadata`` and ``citationMetadata`` → the IR's :class:`~chatx.ir.Citation`
and :class:`~chatx.ir.WebSearch` (writing them back is :mod:`.grounding_write`'s).

A candidate's ``groundingMetadata`` comes on its last chunk (earlier chunks may carry an
empty one): the searches run (``webSearchQueries``), the pages read (``groundingChunks``,
each ``{"web": {"uri", "title"}}``, or a file search's ``retrievedContext``) and which
span of the answer each supports (``groundingSupports``: a ``segment`` and the
``groundingChunkIndices`` of its pages). ``citationMetadata`` rides on the text chunks
it cites: ``citations`` (Vertex) or ``citationSources`` (Developer API), each a span and
a ``uri``, ``title``, ``license``.

**Offsets are bytes.** google-genai says a ``Segment``'s indices are "measured in
bytes", and the captures agree: in the one grounded stream whose text is not ASCII
(``°F``), every segment's text is its span of the candidate's answer text in UTF-8
bytes, and not its span in characters. The span counts the candidate's answer text
(not its thoughts) from the stream's first chunk. The Developer API documents citation
indices in bytes too. The IR's spans are characters of the cited message item's text:
the decoder converts (a segment whose text matches its span in characters, and not in
bytes, is read in characters), the encoder converts back.

**Decoding.** A page a segment cites gives a ``Citation`` of the message item open
(a ``Meta`` whose ``meaning`` it is); a citation of text before that item (a call or a
thought came between) or past the text said has no place in the IR and stays residue.
The queries give one ``WebSearch`` (``begin``, then ``end`` with its first query and the
web pages as its sources), after the citations: the message item ends first, as a
search item of another format would end it. What no event says (the search entry
point's HTML, confidence scores, a file search's chunks, a page's ``domain``, further
queries) stays the candidate's residue, which other formats report field by field.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.pieces import Pieces
from chatx.residue import Carried

from . import records as r
from .records import CITATIONS, GROUNDING

SEARCH_ITEM = "web search (groundingMetadata)"
_PAGE_SAID = frozenset(("uri", "title"))
_CITATION_SAID = frozenset(("startIndex", "endIndex", "uri", "title"))
_CITATION_LISTS = ("citations", "citationSources")  # Vertex's, the Developer API's


def search_id(stream_id: str, lane: int) -> str:
    """The id of a candidate's web search: Gemini gives none; the same for the same input."""
    return f"search_{stream_id}_{lane}"


class Spans:
    """A candidate's answer text as the decoder has read it (the parts' texts, folded as
    :class:`~chatx.pieces.Pieces`, not joined until a citation needs them: a list of one
    str a part held a 1M-chunk stream's text at 60 bytes a part) and where its open
    message item began."""

    __slots__ = ("texts", "item_from")

    def __init__(self) -> None:
        self.texts = Pieces()
        self.item_from = -1  # characters of texts before the open message item; -1: none

    def chars(self, start: int, end: int, quoted: Any) -> tuple[int, int] | None:
        """A span of the candidate's text (bytes, or characters where only those match
        the quoted text) as characters of the open item's text; None where it is not
        in that item's text."""
        if self.item_from < 0:
            return None
        whole = self.texts.text()
        data = whole.encode("utf-8", "surrogatepass")
        if end > len(data) or not 0 <= start <= end:
            return None
        piece = data[start:end].decode("utf-8", "ignore")
        if type(quoted) is str and piece != quoted and whole[start:end] == quoted:
            first, last = start, end  # a span in characters
        else:
            first = len(data[:start].decode("utf-8", "ignore"))
            last = first + len(piece)
        base = self.item_from
        if first < base:
            return None  # the text of an item closed since
        return first - base, last - base


def _page(chunk: Any) -> dict[str, Any] | None:
    web = chunk.get("web") if type(chunk) is dict else None
    if type(web) is dict and type(web.get("uri")) is str and web["uri"]:
        return web
    return None


def _citation(
    page: dict[str, Any], span: tuple[int, int] | None, said: frozenset[str]
) -> ir.Citation:
    """A page's citation; ``extra`` holds the page's fields outside ``said``."""
    title = page.get("title")
    extra = {k: v for k, v in page.items() if k not in said}
    start, end = span if span is not None else (None, None)
    return ir.Citation(
        "url", page["uri"], title if type(title) is str else None, start=start, end=end, extra=extra
    )


class GroundingReader:
    """What the decoder says of a candidate's grounding and citations, in events, and
    what of them stays residue for other formats to report (``rest``)."""

    __slots__ = ("notes",)

    def __init__(self, notes: Notes) -> None:
        self.notes = notes

    def has(self, candidate: dict[str, Any]) -> bool:
        return bool(candidate.get(GROUNDING) or candidate.get(CITATIONS))

    def read(
        self, lane: int, candidate: dict[str, Any], spans: Spans, sid: str, rest: dict[str, Any]
    ) -> tuple[list[ir.Event], list[ir.Event]]:
        """The citations of ``candidate`` (Metas), and its web search (passthroughs);
        ``rest`` gets, for each field, what no event says."""
        cites: list[ir.Event] = []
        search: list[ir.Event] = []
        citations = candidate.get(CITATIONS)
        if type(citations) is dict and citations:
            self._citations(lane, citations, spans, cites, rest)
        grounding = candidate.get(GROUNDING)
        if type(grounding) is dict and grounding:
            left = self._supports(lane, grounding, spans, cites)
            self._search(lane, grounding, sid, search, left)
            rest[GROUNDING] = left or None
        return cites, search

    def _citations(
        self,
        lane: int,
        metadata: dict[str, Any],
        spans: Spans,
        out: list[ir.Event],
        rest: dict[str, Any],
    ) -> None:
        left: dict[str, Any] = {k: v for k, v in metadata.items() if k not in _CITATION_LISTS}
        said: dict[str, list[Any]] = {}
        made: list[ir.Meta] = []
        for key in _CITATION_LISTS:
            entries = metadata.get(key)
            if type(entries) is not list:
                continue
            kept = []
            for entry in entries:
                cite = self._cited(entry, spans)
                if cite is None:
                    kept.append(entry)
                    continue
                said.setdefault(key, []).append(entry)
                made.append(ir.Meta(lane, {}, None, cite))
            if kept:
                left[key] = kept
        if made:
            # A format with no place for a citation reports the entries, once.
            made[0].extra = carried = Carried()
            carried.rest[CITATIONS] = said
            out += made
        rest[CITATIONS] = left or None

    def _cited(self, entry: Any, spans: Spans) -> ir.Citation | None:
        if type(entry) is not dict or type(entry.get("uri")) is not str or not entry["uri"]:
            return None
        start, end = entry.get("startIndex", 0), entry.get("endIndex")
        if type(start) is not int or type(end) is not int:
            return None
        span = spans.chars(start, end, None)
        if span is None:
            return None
        return _citation(entry, span, _CITATION_SAID)

    def _supports(
        self, lane: int, grounding: dict[str, Any], spans: Spans, out: list[ir.Event]
    ) -> dict[str, Any]:
        """A citation per page of each support whose span is in the open item; the
        grounding less what they say."""
        left = {
            k: v for k, v in grounding.items() if k not in ("groundingChunks", "groundingSupports")
        }
        chunks = grounding.get("groundingChunks")
        chunks = chunks if type(chunks) is list else []
        cited: set[int] = set()
        scores: list[Any] = []
        unsaid: list[Any] = []
        said: list[Any] = []
        made: list[ir.Meta] = []
        supports = grounding.get("groundingSupports")
        for support in supports if type(supports) is list else ():
            cites = self._support(support, chunks, spans)
            if cites is None:
                unsaid.append(support)
                continue
            said.append(support)
            for number, cite in cites:
                cited.add(number)
                made.append(ir.Meta(lane, {}, None, cite))
            if "confidenceScores" in support:
                scores.append(support["confidenceScores"])
        if made:
            # A format with no place for a citation reports the supports, once.
            made[0].extra = carried = Carried()
            carried.rest[GROUNDING] = {"groundingSupports": said}
            out += made
        supports_left: dict[str, Any] = {}
        if scores:
            supports_left["confidenceScores"] = scores
        if unsaid:
            supports_left["segment"] = unsaid
        if supports_left:
            left["groundingSupports"] = supports_left
        if type(supports) is not list and supports is not None:
            left["groundingSupports"] = supports
        chunks_left = self._chunks_left(chunks, cited, "webSearchQueries" in grounding)
        if chunks_left:
            left["groundingChunks"] = chunks_left
        elif type(grounding.get("groundingChunks")) not in (list, type(None)):
            left["groundingChunks"] = grounding["groundingChunks"]
        return left

    def _support(
        self, support: Any, chunks: list[Any], spans: Spans
    ) -> list[tuple[int, ir.Citation]] | None:
        """The citations of one support, or None when its span or a page is not one the
        IR holds (the whole support then stays residue)."""
        if type(support) is not dict:
            return None
        segment, numbers = support.get("segment"), support.get("groundingChunkIndices")
        if type(segment) is not dict or type(numbers) is not list or not numbers:
            return None
        if "partIndex" in segment:
            return None  # a span of one part of a chunk: not seen, not guessed at
        start, end = segment.get("startIndex", 0), segment.get("endIndex", 0)
        if type(start) is not int or type(end) is not int:
            return None
        span = spans.chars(start, end, segment.get("text"))
        pages = [
            _page(chunks[n]) if type(n) is int and 0 <= n < len(chunks) else None for n in numbers
        ]
        if span is None or any(page is None for page in pages):
            return None
        return [
            (n, _citation(page, span, frozenset(page)))
            for n, page in zip(numbers, pages, strict=True)
            if page is not None
        ]

    def _chunks_left(self, chunks: list[Any], cited: set[int], searched: bool) -> dict[str, Any]:
        """What of the chunks no event says: a file search's, a page's other fields, and
        a page neither cited nor a search's result."""
        left: dict[str, Any] = {}
        for number, chunk in enumerate(chunks):
            page = _page(chunk)
            if page is None or not (searched or number in cited):
                kind = next(iter(chunk), "chunk") if type(chunk) is dict and chunk else "chunk"
                left.setdefault(str(kind), []).append(chunk)
                continue
            for key, value in page.items():
                if key not in _PAGE_SAID:
                    left.setdefault(f"web.{key}", []).append(value)
            others = {k: v for k, v in chunk.items() if k != "web"}
            if others:
                left.setdefault("other", []).append(others)
        return left

    def _search(
        self,
        lane: int,
        grounding: dict[str, Any],
        sid: str,
        out: list[ir.Event],
        left: dict[str, Any],
    ) -> None:
        """The candidate's web search: its queries and the pages it found."""
        queries = grounding.get("webSearchQueries")
        if type(queries) is not list or not any(type(q) is str and q for q in queries):
            if queries is not None:
                left["webSearchQueries"] = queries
            return
        left.pop("webSearchQueries", None)  # the search says them
        said = [q for q in queries if type(q) is str and q]
        chunks = grounding.get("groundingChunks")
        pages = [p for p in map(_page, chunks if type(chunks) is list else ()) if p is not None]
        call = search_id(sid, lane)
        end = ir.WebSearch(call, "end", said[0])
        end.sources = [
            {"url": p["uri"], "title": p["title"]}
            if type(p.get("title")) is str
            else {"url": p["uri"]}
            for p in pages
        ]
        if queries != said[:1]:
            end.extra["webSearchQueries"] = queries[1:] if queries[0] == said[0] else queries
        data = {"lane": lane, GROUNDING: {"webSearchQueries": queries}}
        out.append(
            ir.Passthrough(r.NAME, data, item=SEARCH_ITEM, meaning=ir.WebSearch(call, "begin"))
        )
        out.append(ir.Passthrough(r.NAME, data, item="", meaning=end))
