"""Decode ``chat.completion.chunk`` streams into IR events.

Chat chunks have no explicit items: a choice's delta switches between reasoning,
content/refusal and tool calls, and this decoder opens and closes IR items where the
kind of content changes. Everything the IR has no name for, including empty values
such as ``"content": ""`` or ``"logprobs": null``, goes to ``Meta`` residue so the chat
encoder can put it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatx import ir
from chatx.codecs.chat_chunk.calls import CallEntry
from chatx.codecs.chat_chunk.fields import (
    FUNCTION_CALL,
    MISSING,
    beside_choices,
    decode_error,
    delta_residue,
    is_empty,
    kind_of,
    split_logprobs,
    stop_string,
)
from chatx.codecs.chat_chunk.plain import ChoiceState, PlainChunks
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record
from chatx.residue import Carried

if TYPE_CHECKING:
    from chatx.codecs.chat_chunk import signatures

_CHUNK_KEYS = frozenset(("id", "object", "created", "model", "choices", "usage", "error"))
_CHOICE_KEYS = frozenset(("index", "delta", "finish_reason", "logprobs"))
_DELTA_KEYS = frozenset(
    ("role", "content", "refusal", "reasoning_content", "reasoning", "tool_calls")
)
_REASONING_FIELDS = ("reasoning_content", "reasoning")


class ChatChunkDecoder:
    """Incremental decoder: ``feed(record)`` returns the IR events of one chunk."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.lanes: dict[int, ChoiceState] = {}
        self.plain = PlainChunks(self.lanes)
        self._reset()

    def _reset(self) -> None:
        """A new stream."""
        self.started = False
        self.ended = False
        self.id = ""
        self.model: Any = None
        self.created: Any = None
        self.lanes.clear()
        self.errored = False
        self.plain.reset()

    def feed(self, record: Record) -> list[ir.Event]:
        """Decode one record (a chunk, an error frame or ``[DONE]``)."""
        data = record.data
        if self.ended is False and type(data) is dict:
            events = self.plain.chunk(data)
            if events is not None:
                return events
        return self.general(record)

    def general(self, record: Record) -> list[ir.Event]:
        """Decode a record that is no plain chunk (:mod:`.plain`)."""
        data = record.data
        if record.done:
            return self._end()
        if not isinstance(data, dict):
            raise InputError(
                f"a chat chunk must be a JSON object, not {kind_of(data)}",
                line=record.line,
                expected='{"object": "chat.completion.chunk", …}',
            )
        if not self.started or self.ended:
            expanded = self._completion(data, record.line)
            if expanded is not None:
                return expanded
        if self.ended and data:
            # Two streams back to back (what chatx writes for concatenated captures):
            # a chunk after [DONE] starts the next one.
            self.notes.warning("record after [DONE]: read as the start of another stream")
            self._reset()
        return self._chunk(data, record.line)

    def _completion(self, data: dict[str, Any], line: int) -> list[ir.Event] | None:
        """A chat.completion, before a stream or after one: read as the chunks it stands
        for, a stream of its own (the reader of whole objects loaded only for one)."""
        if data.get("object") != "chat.completion":  # a chunk's is chat.completion.chunk
            return None
        from chatx.codecs.chat_chunk import whole
        from chatx.codecs.whole import expand

        if not whole.is_completion(data):
            return None
        if self.ended:
            self._reset()
        return expand(self.general, whole.chunks(data), line)

    def _chunk(self, data: dict[str, Any], line: int) -> list[ir.Event]:
        """A chunk, an error frame, or Azure's first chunk that is neither."""
        choices = data.get("choices")
        error = data.get("error")
        if choices is None and isinstance(error, dict):
            self.errored = True  # an error frame ends the stream (Groq sends no [DONE])
            return [decode_error(error)]
        out: list[ir.Event] = []
        if not self.started:
            # Azure sends a first chunk with an empty id, no choices and only
            # prompt_filter_results: it is not the stream's start, keep it as residue.
            if not data.get("id") and not choices:
                return [ir.Meta(None, dict(data))]
            self._start(data, out)
        extra = self.plain.residue(data)
        if extra:
            out.append(ir.Meta(None, extra))
        if choices:
            if type(choices) is not list:
                raise InputError(
                    f"choices must be a list, not {kind_of(choices)}",
                    line=line,
                    expected='"choices": [{"index": 0, "delta": …}]',
                )
            for position, choice in enumerate(choices):
                self._choice(choice, position, out)
        beside_choices(data, extra, error, out)
        return out

    def finish(self) -> list[ir.Event]:
        """End of input: close what is open. A stream without ``[DONE]`` is still ended."""
        if not self.started or self.ended:
            return []
        if not self.errored and (
            not self.lanes or not all(lane.finished for lane in self.lanes.values())
        ):
            # Cut off: close the open items, but invent no ending (DESIGN §4).
            self.notes.warning("input ended without finish_reason or [DONE]: no ending written")
            out: list[ir.Event] = []
            for number, lane in self.lanes.items():
                self._close(number, lane, out)
            self.ended = True
            return out
        return self._end()

    def _end(self) -> list[ir.Event]:
        out: list[ir.Event] = []
        for number, lane in self.lanes.items():
            self._close(number, lane, out)
        if self.started and not self.ended:
            out.append(ir.StreamEnd())
        self.ended = True
        return out

    def _start(self, data: dict[str, Any], out: list[ir.Event]) -> None:
        self.started = True
        # Values of the wrong type are not the stream's: they stay residue of the chunk.
        cid, model, created = data.get("id"), data.get("model"), data.get("created")
        self.id = cid if isinstance(cid, str) else ""
        self.model = model if isinstance(model, str) else None
        self.created = created if isinstance(created, int | float) else None
        self.plain.expect = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }
        out.append(ir.StreamStart(self.id, self.model, self.created))

    def _choice(self, choice: Any, position: int, out: list[ir.Event]) -> None:
        if not isinstance(choice, dict):
            self.notes.warning(f"choice {position} is not an object: left out")
            return
        number, lane = self._lane(choice, position)
        delta = choice.get("delta")
        extra: dict[str, Any] = Carried() if "stop_reason" in choice else {}  # stop_string
        extra.update((k, v) for k, v in choice.items() if k not in _CHOICE_KEYS)
        delta_extra = delta_residue(delta)
        logprobs = choice.get("logprobs", MISSING)
        lps = split_logprobs(logprobs, extra)
        if isinstance(delta, dict):
            if lane.finished and any(not is_empty(v) for v in delta.values()):
                self.notes.warning(f"choice {number} has content after its finish_reason")
            lps = self._delta(number, lane, delta, lps, out, delta_extra)
        elif "delta" in choice:
            extra["delta"] = delta
        else:
            self.notes.repaired(f"choice {number} without a delta: empty delta added")
        if lps[0] or lps[1]:
            # Logprobs without the text they belong to: keep them as they came.
            extra["logprobs"] = logprobs
        if not lane.started:
            lane.started = True
            self.notes.repaired(f"choice {number}: first delta had no role; role assistant added")
            out.append(ir.LaneStart(number))
        self._finish_reason(number, lane, choice, extra, out)
        if extra or delta_extra:
            out.append(ir.Meta(number, extra, delta_extra or None))

    def _lane(self, choice: dict[str, Any], position: int) -> tuple[int, ChoiceState]:
        """The choice's number (its position when it has no integer index) and lane."""
        number = choice.get("index")
        if not isinstance(number, int):
            self.notes.repaired(f"choice without an integer index: numbered {position}")
            number = position
        lane = self.lanes.get(number)
        if lane is None:
            lane = self.lanes[number] = ChoiceState()
        return number, lane

    def _finish_reason(
        self,
        number: int,
        lane: ChoiceState,
        choice: dict[str, Any],
        extra: dict[str, Any],
        out: list[ir.Event],
    ) -> None:
        reason = choice.get("finish_reason")
        if reason and not isinstance(reason, str):
            self.notes.warning(
                f"choice {number}: finish_reason {reason!r} is not a string: left as it came"
            )
            extra["finish_reason"] = reason
            reason = None
        if reason:
            if lane.finished:
                self.notes.warning(f"choice {number} has a second finish_reason {reason!r}")
            self._close(number, lane, out)
            lane.finished = True
            out.append(stop_string(ir.Finish(number, reason), choice, extra))
        elif "finish_reason" in choice:
            extra["finish_reason"] = reason

    def _delta(
        self,
        number: int,
        lane: ChoiceState,
        delta: dict[str, Any],
        lps: tuple[Any, Any],
        out: list[ir.Event],
        delta_extra: dict[str, Any],
    ) -> tuple[Any, Any]:
        """Decode one delta; return the logprobs no text or refusal took."""
        for key, value in delta.items():
            if key not in _DELTA_KEYS:
                delta_extra[key] = value
        role = delta.get("role")
        if role and not lane.started:
            lane.started = True
            out.append(ir.LaneStart(number, role))
        elif "role" in delta:
            delta_extra["role"] = role
        text_lp, refusal_lp = lps
        self._reasoning(number, lane, delta, out, delta_extra)
        if type(delta_extra) is Carried:  # after the reasoning text it may vouch for
            from chatx.codecs.chat_chunk import signatures  # a delta with more than chat's fields

            self._seal(number, lane, signatures.read(delta, delta_extra.rest), out)
        if "content" in delta and self._message_piece(
            number, lane, "content", delta["content"], text_lp, out, delta_extra
        ):
            text_lp = None
        if "refusal" in delta and self._message_piece(
            number, lane, "refusal", delta["refusal"], refusal_lp, out, delta_extra
        ):
            refusal_lp = None
        if "annotations" in delta and type(delta_extra) is Carried and not lane.finished:
            # Citations of the open message item (one opens for them when none is).
            from chatx.codecs.chat_chunk import annotations_in

            base = lane.base if lane.open == "message" else lane.said
            cites, delta_extra.rest["annotations"] = annotations_in.events(
                number, delta["annotations"], base
            )
            if cites:
                self._switch(number, lane, "message", None, out)
                out += cites
        if "tool_calls" in delta:
            self._tool_calls(number, lane, delta["tool_calls"], out, delta_extra)
        elif type(delta.get("function_call")) is dict and type(delta_extra) is Carried:
            self._function_call(number, lane, delta["function_call"], out, delta_extra)
        return text_lp, refusal_lp

    def _function_call(
        self, number: int, lane: ChoiceState, function: dict[str, Any], out: list[ir.Event],
        delta_extra: Carried,
    ) -> None:  # fmt: skip
        """The functions API's call (``finish_reason: function_call``, openai-python
        0.27): one call per choice, no index nor id, read as tool call 0 with an id made
        of the stream's and the choice's (a Responses function_call item needs one). The
        field stays residue that chat output writes back as it came (its start's own note
        says ``function_call``, and chat output writes no tool call of it); another format
        has the call."""
        entry: dict[str, Any] = {"index": 0, "function": function}
        if 0 not in lane.calls and not (function.get("name") or function.get("arguments")):
            return  # an empty stub some servers send beside their tool_calls: no call
        delta_extra.rest["function_call"] = None
        if 0 in lane.calls:
            out += CallEntry.read(entry, lane, self.notes).more(number)
            return
        entry["id"] = f"call_{self.id.removeprefix('chatcmpl-')}_{number}"
        read = CallEntry.read(entry, lane, self.notes)
        lane.calls.add(read.call)
        self._switch(number, lane, "tool_call", read.call, out)
        start = read.start(number)
        start[0].own = FUNCTION_CALL  # type: ignore[union-attr]
        out += start

    def _reasoning(
        self,
        number: int,
        lane: ChoiceState,
        delta: dict[str, Any],
        out: list[ir.Event],
        delta_extra: dict[str, Any],
    ) -> None:
        for name in _REASONING_FIELDS:
            if name in delta:
                value = delta[name]
                if isinstance(value, str) and value:
                    self._switch(number, lane, "reasoning", None, out)
                    out.append(ir.ReasoningDelta(number, value, "text", 0, {}, name))
                else:
                    delta_extra[name] = value

    def _seal(
        self, number: int, lane: ChoiceState, tokens: list[signatures.Token], out: list[ir.Event]
    ) -> None:
        """The open reasoning item ends with each token; a redacted block, or a token
        for an item already sealed or none open, is a reasoning item of its own."""
        for kind, value in tokens:
            if kind == "redacted" or lane.open != "reasoning" or lane.seal is not None:
                self._close(number, lane, out)
                self._switch(number, lane, "reasoning", None, out)
                lane.seal = (value, None) if kind == "signature" else (None, value)
            else:  # the item has shown its text: any token vouches for it
                lane.seal = (value, None)

    def _message_piece(
        self,
        number: int,
        lane: ChoiceState,
        key: str,
        value: Any,
        logprobs: Any,
        out: list[ir.Event],
        delta_extra: dict[str, Any],
    ) -> bool:
        """Decode ``delta.content`` or ``delta.refusal`` (``key``), message text either;
        true when the piece took the logprobs."""
        if isinstance(value, str) and value:
            self._switch(number, lane, "message", None, out)
            if key == "refusal":
                out.append(ir.RefusalDelta(number, value, logprobs))
            else:
                out.append(ir.TextDelta(number, value, logprobs))
                lane.said += len(value)
            return True
        if key == "content" and isinstance(value, list) and value:
            # Mistral magistral sends content as typed parts: thinking and text.
            self.notes.repaired("content sent as a list of parts: written as strings")
            for part in value:
                self._content_part(number, lane, part, out)
        else:
            delta_extra[key] = value
        return False

    def _content_part(self, number: int, lane: ChoiceState, part: Any, out: list[ir.Event]) -> None:
        if not isinstance(part, dict):
            return
        text = part.get("text")
        if part.get("type") == "text" and type(text) is str and text:
            self._switch(number, lane, "message", None, out)
            out.append(ir.TextDelta(number, text))
            lane.said += len(text)
        elif part.get("type") == "thinking":
            for piece in part.get("thinking") or ():
                if isinstance(piece, dict) and piece.get("text"):
                    self._switch(number, lane, "reasoning", None, out)
                    out.append(ir.ReasoningDelta(number, piece["text"]))

    def _tool_calls(
        self,
        number: int,
        lane: ChoiceState,
        calls: Any,
        out: list[ir.Event],
        delta_extra: dict[str, Any],
    ) -> None:
        if not isinstance(calls, list) or not calls:
            delta_extra["tool_calls"] = calls
        for entry in calls if isinstance(calls, list) else ():
            if not isinstance(entry, dict):
                self.notes.warning("tool_calls entry is not an object: left out")
                continue
            read = CallEntry.read(entry, lane, self.notes)
            if read.call in lane.calls:
                out += read.more(number)
                continue
            lane.calls.add(read.call)
            self._switch(number, lane, "tool_call", read.call, out)
            out += read.start(number)

    def _switch(
        self, number: int, lane: ChoiceState, kind: str, call: int | None, out: list[ir.Event]
    ) -> None:
        if lane.open == kind and lane.open_call == call and lane.seal is None:
            return
        self._close(number, lane, out)
        lane.open = kind
        lane.open_call = call
        lane.base = lane.said
        if kind != "tool_call":
            out.append(ir.ItemStart(number, kind))  # type: ignore[arg-type]

    def _close(self, number: int, lane: ChoiceState, out: list[ir.Event]) -> None:
        if lane.open is not None:
            end = ir.ItemEnd(number, lane.open, lane.open_call)  # type: ignore[arg-type]
            if lane.seal is not None:
                end.signature, end.encrypted = lane.seal
                lane.seal = None
            out.append(end)
            lane.open = None
            lane.open_call = None
