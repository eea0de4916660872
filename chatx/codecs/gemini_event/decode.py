"""Decode Gemini ``streamGenerateContent`` chunks into IR events.

Each chunk is a whole ``GenerateContentResponse``; each candidate is a lane (its
``index``, else its place), read by :class:`~.candidates.CandidateReader`: a text part
a ``TextDelta``, a thought part a ``ReasoningDelta``, a ``functionCall`` a whole tool
call (:mod:`.calls`), any other part (code execution, inline data, a built-in tool's
``toolCall``…) a ``Passthrough`` other formats report once. A ``thoughtSignature`` on a
part (not a thought) closes a reasoning item just before the part's events
(``ItemEnd.signature``), opening an empty one when none is open: that is where Anthropic
and Responses keep a signature, and where a Gemini encoder finds it to put it on the
next part. Grounding and citations are :mod:`.grounding_read`'s.

**What Gemini repeats.** Usage is cumulative and on every chunk, and ``finishReason``
may come on every chunk or mid-stream (before code execution goes on). So the
``Finish`` of a lane and the ``Usage`` wait for the end of input: a lane's finish is the
last ``finishReason`` it got with no content after it, the usage the last chunk's. A
tool turn ends with ``STOP``: the IR says ``tool_calls`` (raw ``STOP``) when the lane
called a tool.

**Residue.** Every chunk gives a ``Meta`` per candidate and one for the chunk (lane
``None``), last: each holds the difference between the source and the canonical
candidate or chunk the encoder writes (:mod:`.records`), as a
:class:`~chatx.residue.Carried` whose ``rest`` is what other formats report (the finish
reason, the usage and the ids are said by events). A part's own difference rides on its
part event. The Gemini encoder writes one chunk per chunk ``Meta``, so gemini → gemini
gives back the same JSON values; the events of the end of input write nothing there.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import orjson

from chatx import ir
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import ABSENT, exact_diff

from . import records as r
from .calls import CallReader
from .candidates import CandidateReader, said
from .grounding_read import GroundingReader
from .read import GeminiRead, ReadLane

# Fields of a chunk other events say: other formats report none of them.
_SAID_TOP = frozenset(("modelVersion", "responseId", "createTime", "usageMetadata"))


def created_of(value: Any) -> int | None:
    """Vertex's ``createTime`` as Unix seconds."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


class GeminiDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one chunk. Its
    parts share the :class:`~.read.GeminiRead`: ``calls`` reads function calls,
    ``candidates`` a chunk's candidates (with ``calls`` and the grounding reader)."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.read = read = GeminiRead(notes)
        self.calls = calls = CallReader(read)
        self.candidates = CandidateReader(read, calls, GroundingReader(notes))

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one chunk (or an ``{"error": …}`` body)."""
        data = self._chunk(record)
        if data is None:
            return []
        error = data.get("error")
        if isinstance(error, dict) and "candidates" not in data:
            return self._error(data, error)
        out: list[ir.Event] = []
        self._response(data, out)
        top = self._candidates(data, out)
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            self.read.usage = usage
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not self.read.lanes:
            self._blocked(feedback["blockReason"], out)
        patch = exact_diff(top, self._canonical_top())
        cited = self.read.cited
        own = r.GeminiOwn(cited) if cited else None
        out.append(ir.Meta(None, said(patch, _SAID_TOP), own=own))
        return out

    def _chunk(self, record: Record) -> dict[str, Any] | None:
        """The chunk a record holds; None for the end of a stream's records."""
        self.read.line = record.line
        if record.error:
            raise InputError(record.error, line=record.line, expected="a JSON object")
        if record.done:
            return None
        data = record.data
        if not isinstance(data, dict):
            raise InputError(
                "a Gemini chunk is a JSON object",
                line=record.line,
                expected='{"candidates": [{"content": {"parts": […]}}], …}',
            )
        return data

    def _response(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        """The response a chunk belongs to: the one open, or the next of a file that
        holds several (its responseId changes), or the first."""
        read = self.read
        rid = data.get("responseId")
        if read.open and isinstance(rid, str) and rid and rid != read.id:
            out += self.finish()
            read.open, read.lanes, read.usage = False, {}, None
        if not read.open:
            self._start(data, out)

    def _candidates(self, data: dict[str, Any], out: list[ir.Event]) -> dict[str, Any]:
        """Read the chunk's candidates; the chunk less them (for its residue)."""
        candidates = data.get("candidates")
        self.read.cited = []
        if isinstance(candidates, list) and candidates:
            for position, candidate in enumerate(candidates):
                self.candidates.candidate(position, candidate, out)
            return {k: v for k, v in data.items() if k != "candidates"}
        if candidates is not None and not isinstance(candidates, list):
            raise InputError(
                "candidates is not a list", line=self.read.line, expected='"candidates": [{…}]'
            )
        return data

    def _blocked(self, reason: Any, out: list[ir.Event]) -> None:
        """A blocked prompt: no candidate, ``promptFeedback.blockReason``. Other formats
        say it as a choice that ends filtered, with nothing in it."""
        state = self.read.lanes[0] = ReadLane()
        state.finish = reason if isinstance(reason, str) else "OTHER"
        out.insert(1, ir.LaneStart(0))

    def _canonical_top(self) -> dict[str, Any]:
        read = self.read
        return r.response_fields({}, read.model, read.id, read.create)

    def _start(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        read = self.read
        read.open = True
        rid = data.get("responseId", ABSENT)
        own = None
        if isinstance(rid, str) and rid:
            read.id = rid
        else:
            # No responseId (2024 and early-2025 streams): one from the chunk's bytes,
            # the same for the same input.
            digest = hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
            read.id = "gemini-" + digest.hexdigest()[:24]
            own = r.GeminiOwn([], rid)
        model = data.get("modelVersion")
        read.model = model if isinstance(model, str) else None
        create = data.get("createTime")
        read.create = create if isinstance(create, str) else None
        extra = said({"createTime": read.create}, frozenset(("createTime",))) if read.create else {}
        out.append(ir.StreamStart(read.id, read.model, created_of(read.create), extra, own=own))

    # -- errors and the end ---------------------------------------------------------

    def _error(self, data: dict[str, Any], error: dict[str, Any]) -> list[ir.Event]:
        """A failed request's body (HTTP 4xx, even with ``alt=sse``): it ends the stream."""
        self.read.failed = True
        code, message, status = error.get("code"), error.get("message"), error.get("status")
        canonical = {"error": r.error_object(code, message, status)}
        return [
            ir.Error(
                message if isinstance(message, str) else None,
                code,
                status if isinstance(status, str) else None,
                extra=exact_diff(data, canonical),
            )
        ]

    def finish(self) -> list[ir.Event]:
        """End of input: each lane's finish, the last usage, the end of the stream (when
        every lane finished or the request failed; a stream cut short stays unended)."""
        read = self.read
        out: list[ir.Event] = []
        ended = bool(read.lanes) or read.failed
        for lane in sorted(read.lanes):
            state = read.lanes[lane]
            self.calls.unclosed(lane, state, out)
            state.close(lane, out)
            if state.finish is None:
                ended = False
                self.notes.warning(f"input ended without a finishReason for candidate {lane}")
                continue
            out.append(ir.Finish(lane, r.chat_reason(state.finish, state.called), raw=state.finish))
        usage = usage_event(read.usage) if read.usage is not None else None
        if usage is not None:
            usage.own = r.GeminiOwn([], usage=read.usage)
            out.append(usage)
        if ended and read.open or read.failed:
            out.append(ir.StreamEnd())
        return out


def usage_event(usage: dict[str, Any]) -> ir.Usage | None:
    """The last chunk's ``usageMetadata`` as the stream's usage: output counts the
    answer and the thoughts (as chat's completion tokens count reasoning), reasoning the
    thoughts, cached the cached content; the other fields are residue."""
    prompt = r.counted(usage.get("promptTokenCount"))
    tools = r.counted(usage.get("toolUsePromptTokenCount"))
    if prompt is not None and tools:
        prompt += tools  # a built-in tool's results are read as input, and billed so
    answer = r.counted(usage.get("candidatesTokenCount"))
    thoughts = r.counted(usage.get("thoughtsTokenCount"))
    total = r.counted(usage.get("totalTokenCount"))
    if prompt is None and answer is None and thoughts is None and total is None:
        return None
    output = (answer or 0) + (thoughts or 0)
    extra = {k: v for k, v in usage.items() if k not in r.USAGE_COUNTS}
    return ir.Usage(
        prompt,
        output,
        total,
        cached=r.counted(usage.get("cachedContentTokenCount")),
        reasoning=thoughts,
        extra=extra,
    )
