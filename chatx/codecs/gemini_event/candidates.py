"""A chunk's candidates in the Gemini decoder: each candidate a lane, each part one
*part event* (a text part a ``TextDelta``, a thought part a ``ReasoningDelta``, a
``functionCall`` a whole call, any other part a ``Passthrough`` other formats report
once), a ``thoughtSignature`` a reasoning item closed just before its part, and the
candidate's grounding and citations (:mod:`.grounding_read`) once the text they cite is
read. Each candidate ends with a ``Meta``: the difference between it and the canonical
candidate the encoder writes (:mod:`.records`)."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.errors import InputError
from chatx.residue import Carried, exact_diff

from . import records as r
from .calls import CallReader
from .grounding_read import GroundingReader
from .read import GeminiRead, ReadLane

# Fields of a candidate other events say: other formats report none of them.
_SAID = frozenset(("content", "finishReason", "index"))


def said(patch: dict[str, Any], known: frozenset[str]) -> Carried:
    """``patch`` as residue whose ``known`` fields other events say."""
    carried = Carried(patch)
    carried.rest = {key: None for key in patch if key in known}
    return carried


def _closes(part: Any) -> bool:
    """Whether a part ends the message item open: a signature, a call or a thought."""
    if type(part) is not dict:
        return False
    return bool(part.get("thoughtSignature") or "functionCall" in part or part.get("thought"))


class CandidateReader:
    """Reads one candidate of a chunk. ``read`` is the response being read, ``calls``
    reads its function calls, ``grounding`` its grounding and citations."""

    __slots__ = ("read", "calls", "grounding")

    def __init__(self, read: GeminiRead, calls: CallReader, grounding: GroundingReader) -> None:
        self.read = read
        self.calls = calls
        self.grounding = grounding

    def candidate(self, position: int, candidate: Any, out: list[ir.Event]) -> None:
        if not isinstance(candidate, dict):
            raise InputError(
                "a candidate is not an object", line=self.read.line, expected='{"content": {…}}'
            )
        index = candidate.get("index")
        lane = index if type(index) is int and index >= 0 else position
        lanes = self.read.lanes
        state = lanes.get(lane)
        if state is None:
            state = lanes[lane] = ReadLane()
            out.append(ir.LaneStart(lane))
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        parts = parts if isinstance(parts, list) else []
        residue = said(exact_diff(candidate, r.candidate(lane, parts, None)), _SAID)
        cited = candidate.get("citationMetadata")
        if type(cited) is dict and cited:
            self.read.cited.append((lane, cited))
        if self.grounding.has(candidate):
            # Its citations cite the text read up to the part that ends the message.
            cut = next((n for n, part in enumerate(parts) if _closes(part)), len(parts))
            for part in parts[:cut]:
                self.part(lane, state, part, out)
            self._grounded(lane, state, candidate, residue.rest, out)
            parts_left = parts[cut:]
        else:
            parts_left = parts
        for part in parts_left:
            self.part(lane, state, part, out)
        if parts:
            state.finish = None  # content after a finishReason: that one was not the last
        word = r.finish_word(candidate.get("finishReason"))
        if word is not None:
            state.finish = word
        out.append(ir.Meta(lane, residue))

    def _grounded(
        self, lane: int, state: ReadLane, candidate: dict[str, Any], rest: dict[str, Any],
        out: list[ir.Event],
    ) -> None:  # fmt: skip
        cites, search = self.grounding.read(lane, candidate, state.spans, self.read.id, rest)
        out += cites
        if search:
            state.close(lane, out)  # the search is an item of its own after the message
            out += search

    def part(self, lane: int, state: ReadLane, part: Any, out: list[ir.Event]) -> None:
        if not isinstance(part, dict):
            raise InputError("a part is not an object", line=self.read.line, expected='{"text": …}')
        thought = part.get("thought") is True
        signature = part.get("thoughtSignature")
        body = part
        # A thought part with text keeps its signature as residue (not seen from Google:
        # the IR could not tell it from a signature on the part after the thought).
        if isinstance(signature, str) and signature and not (thought and part.get("text")):
            body = {k: v for k, v in part.items() if k != "thoughtSignature"}
            self._signed(lane, state, signature, out)
        text = body.get("text")
        call = body.get("functionCall")
        if isinstance(call, dict):
            self.calls.call(lane, state, body, call, out)
        elif isinstance(text, str) and text and "functionCall" not in body:
            if thought:
                state.open(lane, "reasoning", out)
                extra = exact_diff(body, r.thought_part(text))
                out.append(ir.ReasoningDelta(lane, text, "summary", extra=extra))
            else:
                state.open(lane, "message", out)
                state.spans.texts.append(text)
                out.append(ir.TextDelta(lane, text, extra=exact_diff(body, r.text_part(text))))
        else:
            self._other(lane, body, out)

    def _signed(self, lane: int, state: ReadLane, signature: str, out: list[ir.Event]) -> None:
        """A signature closes a reasoning item (an empty one when none is open)."""
        if state.item == "reasoning":
            out.append(ir.ItemEnd(lane, "reasoning", signature=signature))
            state.item = None
        else:
            state.close(lane, out)
            out.append(ir.ItemStart(lane, "reasoning"))
            out.append(ir.ItemEnd(lane, "reasoning", signature=signature))

    def _other(self, lane: int, body: dict[str, Any], out: list[ir.Event]) -> None:
        """A part the IR has no words for (or an empty one): passed through, said once
        by other formats when it holds something."""
        kind = next((k for k in body if k not in ("thought", "thoughtSignature", "text")), "")
        if kind == "" and body.get("text"):
            kind = "text"
        item = f"{kind} part" if kind and kind != "text" else ""
        data = {"lane": lane, "part": body}
        out.append(ir.Passthrough(r.NAME, data, line=self.read.line, item=item))
