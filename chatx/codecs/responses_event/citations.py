"""Citations: a Responses annotation ⇄ the IR's :class:`~chatx.ir.Citation`.

Responses says an ``output_text`` part's citations as annotations: each in a
``response.output_text.annotation.added`` event once its text has streamed, and all of
them in the part's ``annotations`` (its done events and its item's). A ``url_citation``
names a web page and the span of the text that cites it (``start_index``,
``end_index``); a ``file_citation`` a file, and where in the text (``index``).

The decoder passes annotation events through, as ever, and says on each the citation
another format may write. The encoder writes another format's citations as the
annotations of the part they fall in, said once the part's text is all there, before its
done events. A citation without a span covers the whole part: Anthropic's cites its text
block (before its text, as a rule), and each text block is a message item of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.notes import Notes
from chatx.residue import MetaReport, report

from .written import Emit, OpenItem, OpenPart

ADDED = "response.output_text.annotation.added"


def said(kind: str, data: dict[str, Any]) -> ir.Citation | None:
    """The citation an event says: an annotation event's, when another format has it."""
    return citation_of(data.get("annotation")) if kind == ADDED else None


def citation_of(annotation: Any) -> ir.Citation | None:
    """The citation a ``url_citation`` says; None for the kinds no other format has
    (files cited by id, container files, file paths)."""
    if type(annotation) is not dict or annotation.get("type") != "url_citation":
        return None
    url, title = annotation.get("url"), annotation.get("title")
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if type(url) is not str:
        return None
    said = {"type", "url", "title", "start_index", "end_index"}
    return ir.Citation(
        "url",
        url,
        title if type(title) is str else None,
        start=start if type(start) is int else None,
        end=end if type(end) is int else None,
        extra={k: v for k, v in annotation.items() if k not in said},
    )


def annotation(cite: ir.Citation, start: int, end: int) -> dict[str, Any]:
    """The annotation of a citation that covers ``start`` to ``end`` of its part."""
    if cite.kind == "file":
        return {
            "type": "file_citation",
            "file_id": cite.file_id or "",
            "filename": cite.filename or "",
            "index": end,
        }
    return {
        "type": "url_citation",
        "start_index": start,
        "end_index": end,
        "title": cite.title or "",
        "url": cite.url or "",
    }


class ResponsesCitations:
    """Another format's citations in the Responses encoder: kept on the open message's
    ``output_text`` part (``open_part`` opens one), said as its annotations when it
    closes. ``lost_meta`` reports a citation with no place."""

    __slots__ = ("notes", "lost_meta", "emit", "open_part")

    def __init__(
        self,
        notes: Notes,
        lost_meta: MetaReport,
        emit: Emit,
        open_part: Callable[[OpenItem, str, list[dict[str, Any]]], OpenPart],
    ) -> None:
        self.notes = notes
        self.lost_meta = lost_meta
        self.emit = emit
        self.open_part = open_part

    def cite(self, event: ir.Meta, item: OpenItem | None, out: list[dict[str, Any]]) -> None:
        """Another format's citation: an annotation of the open message's (``item``'s)
        text part (the part opens if need be: the citation may come before its text)."""
        cite = event.meaning
        if cite is None or item is None or item.kind != "message":
            self.lost_meta(event)
            return
        part = item.part
        if part is None or part.kind != "output_text":
            part = self.open_part(item, "output_text", out)
        part.cites.append((cite, 0 if cite.start is None else cite.start))
        if cite.extra:
            report(cite.extra, self.notes, "citation.")

    def annotate(self, item: OpenItem, part: OpenPart, out: list[dict[str, Any]]) -> None:
        """A closing part's citations: an annotation event each, and its annotations."""
        size = part.texts.size()
        for cite, start in part.cites:
            said = annotation(cite, start, size if cite.end is None else cite.end)
            self.emit(
                out,
                {
                    "type": ADDED,
                    "item_id": item.id,
                    "output_index": item.index,
                    "content_index": part.number,
                    "annotation_index": len(part.annotations),
                    "annotation": said,
                },
            )
            part.annotations.append(said)
        part.cites.clear()
