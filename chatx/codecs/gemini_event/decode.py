"""Decode Gemini ``streamGenerateContent`` chunks into IR events.

Each chunk is a whole ``GenerateContentResponse``; each candidate is a lane (its
``index``, else its place). Each part gives one *part event*: a text part a
``TextDelta``, a thought part a ``ReasoningDelta``, a ``functionCall`` a whole tool call
(``ItemStart``, one ``ToolArgsDelta``, ``ItemEnd``), any other part (code execution,
inline data, a built-in tool's ``toolCall``…) a ``Passthrough`` other formats report
once. A ``thoughtSignature`` on a part (not a thought) closes a reasoning item just
before the part's events (``ItemEnd.signature``), opening an empty one when none is
open: that is where Anthropic and Responses keep a signature, and where a Gemini
encoder finds it to put it on the next part.

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
from chatx.residue import ABSENT, Carried, exact_diff

from . import partial
from . import records as r

# Fields other events say: other formats report none of them.
_SAID_TOP = frozenset(("modelVersion", "responseId", "createTime", "usageMetadata"))
_SAID_CANDIDATE = frozenset(("content", "finishReason", "index"))


def dumps(value: Any) -> str:
    """JSON text of arguments; integers beyond 64 bits kept exact."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def said(patch: dict[str, Any], known: frozenset[str]) -> Carried:
    """``patch`` as residue whose ``known`` fields other events say."""
    carried = Carried(patch)
    carried.rest = {key: None for key in patch if key in known}
    return carried


class _Lane:
    __slots__ = ("item", "calls", "finish", "streamed", "called")

    def __init__(self) -> None:
        self.item: str | None = None  # the IR item open: message or reasoning
        self.calls = 0
        self.finish: str | None = None  # the last finishReason, content after it none
        self.streamed: _Streamed | None = None  # a call whose arguments stream (Vertex)
        self.called = False


class _Streamed:
    __slots__ = ("name", "id", "args", "bad")

    def __init__(self, name: Any, call_id: Any) -> None:
        self.name = name
        self.id = call_id
        self.args: dict[str, Any] = {}
        self.bad = False


def created_of(value: Any) -> int | None:
    """Vertex's ``createTime`` as Unix seconds."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


class GeminiDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one chunk."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.open = False
        self.id = ""
        self.model: str | None = None
        self.create: Any = None
        self.lanes: dict[int, _Lane] = {}
        self.usage: dict[str, Any] | None = None
        self.failed = False
        self.line = 0

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one chunk (or an ``{"error": …}`` body)."""
        self.line = record.line
        if record.error:
            raise InputError(record.error, line=record.line, expected="a JSON object")
        if record.done:
            return []
        data = record.data
        if not isinstance(data, dict):
            raise InputError(
                "a Gemini chunk is a JSON object",
                line=record.line,
                expected='{"candidates": [{"content": {"parts": […]}}], …}',
            )
        error = data.get("error")
        if isinstance(error, dict) and "candidates" not in data:
            return self._error(data, error)
        out: list[ir.Event] = []
        rid = data.get("responseId")
        if self.open and isinstance(rid, str) and rid and rid != self.id:
            out += self.finish()  # the next response of a file that holds several
            self.open, self.lanes, self.usage = False, {}, None
        if not self.open:
            self._start(data, out)
        candidates = data.get("candidates")
        top = data
        if isinstance(candidates, list) and candidates:
            for position, candidate in enumerate(candidates):
                self._candidate(position, candidate, out)
            top = {k: v for k, v in data.items() if k != "candidates"}
        elif candidates is not None and not isinstance(candidates, list):
            raise InputError(
                "candidates is not a list", line=record.line, expected='"candidates": [{…}]'
            )
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = usage
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not self.lanes:
            self._blocked(feedback["blockReason"], out)
        patch = exact_diff(top, self._canonical_top())
        out.append(ir.Meta(None, said(patch, _SAID_TOP)))
        return out

    def _blocked(self, reason: Any, out: list[ir.Event]) -> None:
        """A blocked prompt: no candidate, ``promptFeedback.blockReason``. Other formats
        say it as a choice that ends filtered, with nothing in it."""
        state = self.lanes[0] = _Lane()
        state.finish = reason if isinstance(reason, str) else "OTHER"
        out.insert(1, ir.LaneStart(0))

    def _canonical_top(self) -> dict[str, Any]:
        top: dict[str, Any] = {}
        if self.model:
            top["modelVersion"] = self.model
        top["responseId"] = self.id
        if self.create is not None:
            top["createTime"] = self.create
        return top

    def _start(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        self.open = True
        rid = data.get("responseId")
        if isinstance(rid, str) and rid:
            self.id = rid
        else:
            # No responseId (2024 and early-2025 streams): one from the chunk's bytes,
            # the same for the same input.
            digest = hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
            self.id = "gemini-" + digest.hexdigest()[:24]
        model = data.get("modelVersion")
        self.model = model if isinstance(model, str) else None
        self.create = data.get("createTime") if isinstance(data.get("createTime"), str) else None
        extra = said({"createTime": self.create}, frozenset(("createTime",))) if self.create else {}
        out.append(ir.StreamStart(self.id, self.model, created_of(self.create), extra))

    # -- candidates -----------------------------------------------------------------

    def _candidate(self, position: int, candidate: Any, out: list[ir.Event]) -> None:
        if not isinstance(candidate, dict):
            raise InputError(
                "a candidate is not an object", line=self.line, expected='{"content": {…}}'
            )
        index = candidate.get("index")
        lane = index if type(index) is int and index >= 0 else position
        state = self.lanes.get(lane)
        if state is None:
            state = self.lanes[lane] = _Lane()
            out.append(ir.LaneStart(lane))
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list):
            for part in parts:
                self._part(lane, state, part, out)
            if parts:
                state.finish = None  # content after a finishReason: that one was not the last
        word = r.finish_word(candidate.get("finishReason"))
        if word is not None:
            state.finish = word
        canonical = r.candidate(lane, parts if isinstance(parts, list) else [], None)
        out.append(ir.Meta(lane, said(exact_diff(candidate, canonical), _SAID_CANDIDATE)))

    def _close(self, lane: int, state: _Lane, out: list[ir.Event]) -> None:
        if state.item is not None:
            out.append(ir.ItemEnd(lane, state.item))  # type: ignore[arg-type]
            state.item = None

    def _open(self, lane: int, state: _Lane, kind: str, out: list[ir.Event]) -> None:
        if state.item != kind:
            self._close(lane, state, out)
            out.append(ir.ItemStart(lane, kind))  # type: ignore[arg-type]
            state.item = kind

    def _part(self, lane: int, state: _Lane, part: Any, out: list[ir.Event]) -> None:
        if not isinstance(part, dict):
            raise InputError("a part is not an object", line=self.line, expected='{"text": …}')
        thought = part.get("thought") is True
        signature = part.get("thoughtSignature")
        body = part
        # A thought part with text keeps its signature as residue (not seen from Google:
        # the IR could not tell it from a signature on the part after the thought).
        if isinstance(signature, str) and signature and not (thought and part.get("text")):
            body = {k: v for k, v in part.items() if k != "thoughtSignature"}
            if state.item == "reasoning":
                out.append(ir.ItemEnd(lane, "reasoning", signature=signature))
                state.item = None
            else:
                self._close(lane, state, out)
                out.append(ir.ItemStart(lane, "reasoning"))
                out.append(ir.ItemEnd(lane, "reasoning", signature=signature))
        text = body.get("text")
        call = body.get("functionCall")
        if isinstance(call, dict):
            self._call(lane, state, body, call, out)
        elif isinstance(text, str) and text and "functionCall" not in body:
            if thought:
                self._open(lane, state, "reasoning", out)
                extra = exact_diff(body, r.thought_part(text))
                out.append(ir.ReasoningDelta(lane, text, "summary", extra=extra))
            else:
                self._open(lane, state, "message", out)
                out.append(ir.TextDelta(lane, text, extra=exact_diff(body, r.text_part(text))))
        else:
            self._other(lane, body, out)

    def _other(self, lane: int, body: dict[str, Any], out: list[ir.Event]) -> None:
        """A part the IR has no words for (or an empty one): passed through, said once
        by other formats when it holds something."""
        kind = next((k for k in body if k not in ("thought", "thoughtSignature", "text")), "")
        if kind == "" and body.get("text"):
            kind = "text"
        item = f"{kind} part" if kind and kind != "text" else ""
        out.append(ir.Passthrough(r.NAME, {"lane": lane, "part": body}, line=self.line, item=item))

    # -- function calls -------------------------------------------------------------

    def _call(
        self,
        lane: int,
        state: _Lane,
        body: dict[str, Any],
        call: dict[str, Any],
        out: list[ir.Event],
    ) -> None:
        streamed = state.streamed
        going_on = call.get("willContinue") is True
        if streamed is None and going_on and "name" in call:
            # Vertex streams this call's arguments in the chunks that follow.
            state.streamed = _Streamed(call.get("name"), call.get("id"))
            self._close(lane, state, out)
            out.append(
                ir.Passthrough(r.NAME, {"lane": lane, "part": body}, line=self.line, item="")
            )
            return
        if streamed is not None:
            for piece in call.get("partialArgs") or ():
                if not partial.apply(streamed.args, piece):
                    streamed.bad = True
            if going_on:
                out.append(
                    ir.Passthrough(r.NAME, {"lane": lane, "part": body}, line=self.line, item="")
                )
                return
            state.streamed = None
            self._whole_call(lane, state, body, streamed.name, streamed.args, streamed.id, out)
            if streamed.bad:
                self.notes.warning("a partialArgs entry without a readable jsonPath: left out")
            return
        args = call.get("args", ABSENT)
        self._whole_call(lane, state, body, call.get("name"), args, call.get("id"), out)

    def _whole_call(
        self,
        lane: int,
        state: _Lane,
        body: dict[str, Any] | None,
        name: Any,
        args: Any,
        call_id: Any,
        out: list[ir.Event],
    ) -> None:
        self._close(lane, state, out)
        number = state.calls
        state.calls += 1
        state.called = True
        given = call_id if isinstance(call_id, str) and call_id else None
        cid = given or r.derived_call_id(self.id, lane, number)
        arguments = args if args is not ABSENT else {}
        canonical = r.call_part(name if isinstance(name, str) else None, arguments, cid)
        if body is None:  # ended by the end of input: the source wrote no part for it
            extra: dict[str, Any] = {"functionCall": ABSENT}
        else:
            extra = exact_diff(body, canonical)
        out.append(
            ir.ItemStart(
                lane,
                "tool_call",
                call=number,
                call_id=cid,
                name=name if isinstance(name, str) else None,
                extra=extra,
            )
        )
        out.append(ir.ToolArgsDelta(lane, number, dumps(arguments)))
        out.append(ir.ItemEnd(lane, "tool_call", call=number))

    # -- errors and the end ---------------------------------------------------------

    def _error(self, data: dict[str, Any], error: dict[str, Any]) -> list[ir.Event]:
        """A failed request's body (HTTP 4xx, even with ``alt=sse``): it ends the stream."""
        self.failed = True
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
        out: list[ir.Event] = []
        ended = bool(self.lanes) or self.failed
        for lane in sorted(self.lanes):
            state = self.lanes[lane]
            streamed = state.streamed
            if streamed is not None:
                # A streamed call the stream never closed: its arguments as they stand.
                state.streamed = None
                self.notes.warning(f"candidate {lane}: a streamed function call never closed")
                self._whole_call(lane, state, None, streamed.name, streamed.args, streamed.id, out)
            self._close(lane, state, out)
            if state.finish is None:
                ended = False
                self.notes.warning(f"input ended without a finishReason for candidate {lane}")
                continue
            out.append(ir.Finish(lane, r.chat_reason(state.finish, state.called), raw=state.finish))
        usage = usage_event(self.usage) if self.usage is not None else None
        if usage is not None:
            out.append(usage)
        if ended and self.open or self.failed:
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
