"""Streaming checker for Gemini ``streamGenerateContent`` streams (rules ``GEM…``).

Each record is a whole ``GenerateContentResponse``. The checker keeps, per candidate,
where its last ``finishReason`` came and whether content followed it, and whether a
streamed call (Vertex's ``willContinue``) is open; it never reads the decoder.
"""

from __future__ import annotations

from typing import Any

from chatx.codecs.byte_template import TEXT
from chatx.codecs.gemini_event.rules import GEMINI_RULES
from chatx.record import Record
from chatx.validation.base import Checker, Known, catalogue, is_int

_PARTS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
)


def _nothing(text: str) -> None:
    """What checking a chunk of a run keeps: nothing (see GeminiChecker.knows)."""


class _Candidate:
    __slots__ = ("finish_line", "finish_index", "after_finish", "streaming")

    def __init__(self) -> None:
        self.finish_line: int | None = None
        self.finish_index = -1
        self.after_finish = False
        self.streaming = False


class GeminiChecker(Checker):
    """Checks a ``gemini-event`` stream one record at a time."""

    format = "gemini-event"
    rules = catalogue(*GEMINI_RULES)

    def __init__(self, file: str = "<input>", container: str | None = None) -> None:
        super().__init__(file, container)
        self.candidates: dict[int, _Candidate] = {}
        self.error_line: int | None = None
        self.blocked = False
        self.warned_early = False
        self.response_id: str | None = None

    def check(self, record: Record) -> None:
        if record.done:
            return
        data = record.data
        if self.error_line is not None:
            self.report("GEM005", f"a record after the error object of line {self.error_line}")
            return
        if not isinstance(data, dict):
            self.report("GEM001", "a chunk is a JSON object")
            return
        error = data.get("error")
        if error is not None and "candidates" not in data:
            self._error(error)
            return
        rid = data.get("responseId")
        if isinstance(rid, str):
            if self.response_id is not None and rid != self.response_id:
                self._end()  # the next response of a file that holds several
                self.candidates = {}
                self.blocked = False
            self.response_id = rid
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self.blocked = True
        candidates = data.get("candidates", [])
        if not isinstance(candidates, list):
            self.report("GEM001", "candidates is not a list")
        else:
            for position, candidate in enumerate(candidates):
                self._candidate(position, candidate)
        usage = data.get("usageMetadata")
        if usage is not None:
            self._usage(usage)

    def knows(self, record: Record) -> Known | None:
        """A chunk of one candidate with one text (or thought) part and no finishReason:
        the next ones repeat it but for that text. A rule reads of the text only whether
        a thought's is empty (GEM004; an empty one is parsed and checked); and a chunk
        like this changes nothing a later record's rules read (its responseId, its
        usage and feedback are the same bytes every time)."""
        data = record.data
        candidates = data.get("candidates")
        if type(candidates) is not list or len(candidates) != 1:
            return None
        candidate = candidates[0]
        content: Any = candidate.get("content") if type(candidate) is dict else None
        parts = content.get("parts") if type(content) is dict else None
        if type(parts) is not list or len(parts) != 1 or type(parts[0]) is not dict:
            return None
        part = parts[0]
        if type(part.get("text")) is not str or "finishReason" in candidate:
            return None
        content = {**content, "parts": [{**part, "text": TEXT}]}
        payload = {**data, "candidates": [{**candidate, "content": content}]}
        return Known.of(payload, [TEXT], record.event, _nothing)

    def _error(self, error: Any) -> None:
        self.error_line = self.line
        if not isinstance(error, dict) or not isinstance(error.get("message"), str):
            self.report("GEM001", 'the error object has no message: {"error": {"message": …}}')
            return
        self.report("GEM008", f"the request failed: {error.get('status') or error.get('code')}")

    def _candidate(self, position: int, candidate: Any) -> None:
        if not isinstance(candidate, dict):
            self.report("GEM001", f"candidate {position} is not an object")
            return
        index = candidate.get("index")
        lane = index if is_int(index) else position
        state = self.candidates.setdefault(lane, _Candidate())
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if parts is not None and not isinstance(parts, list):
            self.report("GEM001", f"candidate {lane}: content.parts is not a list")
            parts = None
        if parts and state.finish_line is not None and not state.after_finish:
            state.after_finish = True
            if not self.warned_early:
                self.warned_early = True
                self.report(
                    "GEM002",
                    f"candidate {lane}: content after the finishReason of line {state.finish_line}",
                    line=state.finish_line,
                    index=state.finish_index,
                )
        for part in parts or ():
            self._part(lane, state, part)
        if candidate.get("finishReason") is not None:
            state.finish_line, state.finish_index = self.line, self.index
            state.after_finish = False

    def _part(self, lane: int, state: _Candidate, part: Any) -> None:
        if not isinstance(part, dict):
            self.report("GEM001", f"candidate {lane}: a part is not an object")
            return
        if (
            part.get("thought") is True
            and set(part) <= {"thought", "text"}
            and not part.get("text")
        ):
            self.report("GEM004", f"candidate {lane}: a thought part with no text")
        call = part.get("functionCall")
        if call is None:
            return
        if not isinstance(call, dict):
            self.report("GEM001", f"candidate {lane}: functionCall is not an object")
            return
        if state.streaming:
            state.streaming = call.get("willContinue") is True
            return
        name = call.get("name")
        if not isinstance(name, str) or not name:
            self.report("GEM007", f"candidate {lane}: a functionCall without a name")
        elif call.get("willContinue") is True:
            state.streaming = True
        args = call.get("args")
        if args is not None and not isinstance(args, dict):
            self.report("GEM001", f"candidate {lane}: functionCall.args is not an object")

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            self.report("GEM001", "usageMetadata is not an object")
            return
        counts: list[Any] = [usage.get(name) for name in _PARTS if name in usage]
        total = usage.get("totalTokenCount")
        if any(not is_int(c) or c < 0 for c in counts) or (
            total is not None and (not is_int(total) or total < 0)
        ):
            self.report("GEM003", "a token count that is not a non-negative integer")
            return
        if is_int(total) and total < sum(counts):
            self.report(
                "GEM003", f"totalTokenCount {total} is less than its parts' sum {sum(counts)}"
            )

    def _end(self) -> None:
        if self.error_line is None and not self.blocked:
            for lane, state in sorted(self.candidates.items()):
                if state.finish_line is None:
                    self.report("GEM006", f"candidate {lane} has no finishReason", index=self.index)

    def finish(self) -> list[Any]:
        self._end()
        return self.findings
