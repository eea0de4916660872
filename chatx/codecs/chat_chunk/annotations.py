"""Citations in chat output: another format's web page citations as the message's
``url_citation`` annotations.

OpenAI's search models say a message's citations in ``annotations``, streamed in a
chunk's ``choices[].delta.annotations``: ``{"type": "url_citation", "url_citation":
{"url", "title", "start_index", "end_index"}}``, the span in characters of the message's
``content``. A file cited by id (Anthropic's documents, Responses' ``file_citation``) has
no chat annotation: it stays reported lost.

Chat's ``content`` is every message item's text one after another, so a span is counted
from where its item's text began in it: the encoder counts the characters of another
format's text it writes. A citation whose span the source says (a Responses
``url_citation``: of its part's text, which streamed before it) is placed as it comes;
one that covers its whole item (Anthropic's, said before its text) once the item's text
is all there, when the item ends.

A choice's annotations are written once, in the chunk that finishes it: the openai SDK's
accumulator joins a list delta to the one before by its entries' ``index``, which
annotations have not, and raises on a second ``annotations`` delta.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.chunks import ChatStream, Choices, Chunks
from chatx.codecs.cited import without_cited_parts
from chatx.notes import Notes


def annotation(cite: ir.Citation, start: int, end: int) -> dict[str, Any]:
    """A web page citation as chat's ``url_citation`` annotation (``title`` is required:
    written empty when the source has none)."""
    return {
        "type": "url_citation",
        "url_citation": {
            "url": cite.url or "",
            "title": cite.title or "",
            "start_index": start,
            "end_index": end,
        },
    }


class ChatCitations:
    """Places another format's citations as a choice's annotations.

    ``texts`` holds, per lane with a message item open, where the item's text began in
    the content (``ChatStream.said``) and the citations that wait for its end;
    ``annotated`` the annotations placed, per lane, that wait for its finish; ``cited``
    the lanes whose open message item had a citation written; ``lane`` the lane of the
    last message item opened."""

    __slots__ = ("annotated", "chunks", "cited", "lane", "notes", "stream", "texts")

    def __init__(self, stream: ChatStream, chunks: Chunks, notes: Notes) -> None:
        self.stream = stream
        self.chunks = chunks
        self.notes = notes
        self.texts: dict[int, tuple[int, list[ir.Citation]]] = {}
        self.annotated: dict[int, list[dict[str, Any]]] = {}
        self.cited: set[int] = set()
        self.lane = 0

    def restart(self) -> None:
        """A new stream begins: what the last one left is said lost."""
        self.left()
        self.cited.clear()

    def text_start(self, lane: int) -> None:
        self.lane = lane
        self.texts[lane] = (self.stream.said.get(lane, 0), [])
        self.cited.discard(lane)

    def cite(self, lane: int | None, cite: ir.Citation) -> bool:
        """Place a citation (``lane`` None: of the last message item opened), or hold it
        until its item ends; False for one chat has no annotation for (a file), for the
        caller to report."""
        if cite.kind != "url":
            return False
        if lane is None:
            lane = self.lane
        if cite.extra:
            self.chunks.residue(cite.extra, "citation.")
        self.cited.add(lane)
        opened = self.texts.get(lane)
        if opened is None:  # no message item open: its text is what comes next
            opened = self.texts[lane] = (self.stream.said.get(lane, 0), [])
        base, waiting = opened
        if cite.start is None or cite.end is None:
            waiting.append(cite)
        else:
            self._annotate(lane, annotation(cite, base + cite.start, base + cite.end))
        return True

    def text_end(self, lane: int) -> None:
        """The item's text is all written: the citations that cover it are placed."""
        opened = self.texts.pop(lane, None)
        if opened is None:
            return
        base, waiting = opened
        # An item's text runs from where it began in the content to what is written now
        # (Anthropic cites its text block, one IR message item, before the text comes).
        end = self.stream.said.get(lane, 0)
        for cite in waiting:
            start = base if cite.start is None else base + cite.start
            self._annotate(lane, annotation(cite, start, end))

    def _annotate(self, lane: int, said: dict[str, Any]) -> None:
        placed = self.annotated.get(lane)
        if placed is None:
            placed = self.annotated[lane] = []
        placed.append(said)

    def place(self, choices: Choices, lane: int) -> None:
        """The choice finishes in this chunk: its annotations, all at once."""
        self.text_end(lane)  # a message the source never ended
        placed = self.annotated.pop(lane, None)
        if placed:
            self.chunks.delta(choices, lane)["annotations"] = placed

    def uncited_end(self, extra: dict[str, Any], lane: int) -> dict[str, Any]:
        """A message item's closing residue less the annotations its citations said (a
        Responses item's parts, with the annotations the decoder said one by one)."""
        return without_cited_parts(extra) if lane in self.cited else extra

    def left(self) -> None:
        """The stream ended with a choice unfinished (cut short, or ended by an error
        frame): its citations were never written."""
        waiting = sum(len(cites) for _, cites in self.texts.values())
        waiting += sum(len(placed) for placed in self.annotated.values())
        if waiting:
            self.notes.lost(f"{waiting} citation(s) of a choice that never finished")
        self.texts.clear()
        self.annotated.clear()
