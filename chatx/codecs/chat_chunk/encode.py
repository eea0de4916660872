"""Encode IR events as ``chat.completion.chunk`` payloads.

One batch (the events of one source record) becomes at most one chunk, so delta
boundaries survive. Residue from a chat source is merged back; residue from another
format is reported as lost.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.chat_chunk.calls import first_entry, join_fragment
from chatx.codecs.chat_chunk.chunks import append, extend
from chatx.codecs.chat_chunk.fields import usage_object
from chatx.codecs.chat_chunk.finishing import FinishEncoding
from chatx.codecs.chat_chunk.mend import error_object, later_entry
from chatx.notes import Notes
from chatx.record import DONE
from chatx.residue import MetaReport, merge

NAME = "chat-chunk"


def chat_id(source_id: str) -> str:
    """``resp_X`` → ``chatcmpl-X``; chat ids are kept as they are."""
    if source_id.startswith("resp_"):
        return "chatcmpl-" + source_id[5:]
    if source_id.startswith(("chatcmpl-", "chat-")) or not source_id:
        return source_id
    return "chatcmpl-" + source_id


class ChatChunkEncoder(FinishEncoding):
    """Incremental encoder: ``feed(batch)`` returns zero or one chunk (or an error frame)."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = options.source_format == NAME
        self.lost_meta = MetaReport(notes)
        self.id = ""
        self.model: Any = ""
        self.created: Any = 0
        self.open = False  # a stream started and [DONE] not yet written
        self.failed = False  # an error frame was written: it ended the stream
        self.ended = False  # the source's stream ended (StreamEnd seen)
        self.roles: set[int] = set()
        self.finished: set[int] = set()  # lanes whose finish_reason is written
        self.called: set[int] = set()  # lanes that made a tool call
        self.mended: set[str] = set()  # chunk fields written as the stream's (mend.py)
        self.unfinished_end = False  # the stream ended with a lane still unfinished
        # Per chunk being built, (lane, call): where the search for the entry a call's
        # next fragment joins starts. No entry before it can be that one: a long call in
        # one chunk (Llama Stack holds them whole) would be searched from the start for
        # each of its fragments, in time that grows with their square.
        self.scanned: dict[tuple[int, int], int] = {}
        # Another format's content, counted to place its citations (annotations.py).
        self.said: dict[int, int] = {}
        self.texts: dict[int, tuple[int, list[ir.Citation]]] = {}
        self.annotated: dict[int, list[dict[str, Any]]] = {}
        self.cited: set[int] = set()
        self.text_lane = 0

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; a batch that says nothing writes nothing."""
        if len(events) == 1:
            event = events[0]
            if (
                type(event) is ir.TextDelta
                and event.lane in self.roles
                and not event.extra
                and not event.logprobs
            ):
                # A batch of only more text (most of a Responses source): the chunk the
                # general path below would build, built at once.
                single: dict[str, Any] = {
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [{"index": event.lane, "delta": {"content": event.text}}],
                }
                if event.obfuscation is not None:
                    single["obfuscation"] = event.obfuscation
                if not self.own:
                    self.said[event.lane] = self.said.get(event.lane, 0) + len(event.text)
                return [single]
        return self._batch(events)

    def _batch(self, events: list[ir.Event]) -> list[Any]:
        """One flat ``if type(event) is ...`` chain, most frequent first: the hot path pays
        no method lookup per event, and each branch narrows the event for the type
        checker (a ``kind = type(event)`` alias would not; ``match`` costs 3x as much).
        The events most batches do not have are in :meth:`_other_event`."""
        out: list[Any] = []
        choices: dict[int, dict[str, Any]] = {}
        if self.scanned:
            self.scanned.clear()
        usage: dict[str, Any] | None = None
        extras: list[ir.Meta] = []
        error: ir.Error | None = None
        obfuscation: str | None = None
        for event in events:
            if type(event) is ir.TextDelta:
                self._text(choices, event)
                obfuscation = event.obfuscation if event.obfuscation is not None else obfuscation
            elif type(event) is ir.Meta:
                if self.own:
                    extras.append(event)
                elif event.meaning is None or not self._cite(
                    self.text_lane if event.lane is None else event.lane, event.meaning
                ):
                    self.lost_meta(event)
            elif type(event) is ir.ReasoningDelta:
                self._reasoning(choices, event)
                obfuscation = event.obfuscation if event.obfuscation is not None else obfuscation
            elif type(event) is ir.ToolArgsDelta:
                self._args(choices, event)
                obfuscation = event.obfuscation if event.obfuscation is not None else obfuscation
            elif type(event) is ir.ItemStart:
                self._call_start(choices, event)
            elif type(event) is ir.Usage:
                usage = self._usage(event)
            elif type(event) is ir.Error:
                error = event
            else:
                self._other_event(event, choices, out)
        self._close_batch(choices, usage, extras, error, obfuscation, out)
        return out

    def _other_event(
        self, event: ir.Event, choices: dict[int, dict[str, Any]], out: list[Any]
    ) -> None:
        if type(event) is ir.RefusalDelta:
            append(self._delta(choices, event.lane), "refusal", event.text)
            if event.logprobs:
                extend(self._logprobs(choices, event.lane), "refusal", event.logprobs)
        elif type(event) is ir.LaneStart:
            self.roles.add(event.lane)
            self._delta(choices, event.lane)["role"] = event.role
        elif type(event) is ir.Finish:
            self._finish_choice(choices, event)
        elif type(event) is ir.StreamStart:
            out.extend(self._start(event))
        elif type(event) is ir.Passthrough:
            self._passthrough(event, out)
        elif type(event) is ir.ItemEnd:
            self._item_end(choices, event)
        elif type(event) is ir.StreamEnd:
            self._end(event)

    def _item_end(self, choices: dict[int, dict[str, Any]], event: ir.ItemEnd) -> None:
        extra = event.extra
        if event.kind == "message" and not self.own:
            self._text_end(event.lane)
            if extra:
                extra = self._uncited_end(extra, event.lane)
        if extra:
            self._extra(extra, "")
        if event.signature is not None or event.encrypted is not None:
            sealed = {"signature": event.signature, "encrypted_content": event.encrypted}
            self._extra(sealed, "reasoning.")

    def _text(self, choices: dict[int, dict[str, Any]], event: ir.TextDelta) -> None:
        append(self._delta(choices, event.lane), "content", event.text)
        if not self.own:
            self.said[event.lane] = self.said.get(event.lane, 0) + len(event.text)
        if event.logprobs:
            extend(self._logprobs(choices, event.lane), "content", event.logprobs)
        if event.extra:
            self._extra(event.extra, "delta.")

    def _reasoning(self, choices: dict[int, dict[str, Any]], event: ir.ReasoningDelta) -> None:
        field = self.options.reasoning_field or event.source_field or "reasoning_content"
        append(self._delta(choices, event.lane), field, event.text)
        if event.extra:
            self._extra(event.extra, "reasoning.")

    def _close_batch(
        self,
        choices: dict[int, dict[str, Any]],
        usage: dict[str, Any] | None,
        extras: list[ir.Meta],
        error: ir.Error | None,
        obfuscation: str | None,
        out: list[Any],
    ) -> None:
        """The batch's chunk (or chunks, or error frame), once all its events are read."""
        if self.failed and not self.own:
            self._after_failure(choices, usage)
            return
        if usage is not None and not choices and not self.failed and self.roles - self.finished:
            # The usage chunk comes after every choice finished (chat rule 5).
            out.append(self._finish_unfinished())
        top = {"usage": usage} if usage is not None else None
        if choices and top is not None and not self.own:
            # Usage from another format goes in a last chunk of its own, as OpenAI sends it.
            out.append(self._chunk(choices, {}, extras, error, obfuscation))
            out.append(self._chunk({}, top, [], None))
        elif choices or top is not None or extras:
            out.append(self._chunk(choices, top or {}, extras, error, obfuscation))
        elif error is not None:
            # A bare error frame ends the stream (an error before any chunk opens one).
            self.failed = self.open = True
            out.append({"error": error_object(error, self.own)})
        if self.unfinished_end:
            self.unfinished_end = False
            if not self.failed and self.roles - self.finished:
                out.append(self._finish_unfinished())

    def finish(self) -> list[Any]:
        """End of input: ``data: [DONE]`` closes every stream that ended, an error frame
        included (the JSONL writer leaves it out: a JSON-lines file holds JSON values).

        vLLM and OpenRouter write ``[DONE]`` after their error frame; a source that
        ended there without one (Groq) gets it too: SSE chat output always ends with the
        sentinel, and the openai SDK stops at the error frame before reading it."""
        out: list[Any] = []
        if self.open:
            self.open = False
            # A source that stopped short (no [DONE], no terminal event) gets no invented
            # ending unless --finish asks for one.
            if self.options.finish and not (self.failed or self.ended):
                if self.roles - self.finished:
                    out.append(self._finish_unfinished())
                out.append(DONE)
            elif self.failed or self.ended:
                out.append(DONE)
        if self.texts or self.annotated:
            self._citations_left()
        return out

    def _end(self, event: ir.StreamEnd) -> None:
        self.ended = True
        self.unfinished_end = True  # checked once the batch's own chunk is written
        # "~done" (whether a chat source wrote [DONE]) does not decide the output's: a
        # JSON-lines source has none to write, and SSE output ends with it all the same.
        if event.extra and not self.own:
            self._extra(event.extra, "response.")

    def _start(self, event: ir.StreamStart) -> list[Any]:
        out: list[Any] = [DONE] if self.open and (self.ended or self.failed) else []
        self.open = True
        self.failed = False
        self.ended = False
        self.roles.clear()
        self.finished.clear()
        self.called.clear()
        self.mended.clear()
        if self.texts or self.annotated:
            self._citations_left()
        self.said.clear()
        self.cited.clear()
        self.id = event.id if self.own else chat_id(event.id)
        self.model = event.model if event.model is not None else ""
        self.created = event.created if event.created is not None else 0
        if event.extra and not self.own:
            self._extra(event.extra, "response.")
        return out

    def _call_start(self, choices: dict[int, dict[str, Any]], event: ir.ItemStart) -> None:
        if event.kind != "tool_call":
            # Chat says where a message or reasoning starts by its deltas alone; where
            # another format's message text begins places its citations.
            if event.kind == "message" and not self.own:
                self._text_start(event.lane)
            return
        self.called.add(event.lane)
        entry = first_entry(event, self.own)
        if self.own:
            merge(entry, event.extra)
        elif event.extra:
            self._extra(event.extra, "tool_call.")
        self._delta(choices, event.lane).setdefault("tool_calls", []).append(entry)

    def _args(self, choices: dict[int, dict[str, Any]], event: ir.ToolArgsDelta) -> None:
        calls = self._delta(choices, event.lane).setdefault("tool_calls", [])
        entry = join_fragment(calls, event, self.scanned, self.own)
        if event.extra:
            if "index" in event.extra:
                self.scanned.clear()  # an entry may now stand for another call
            if self.own:
                merge(entry, later_entry(event.extra, self.notes, self.mended))
            else:
                self._extra(event.extra, "tool_call.")

    def _usage(self, event: ir.Usage) -> dict[str, Any]:
        usage = usage_object(event)
        if event.cache_write:
            self._extra({"cache_write_tokens": event.cache_write}, "usage.")
        if event.extra:
            if self.own:
                merge(usage, event.extra)
            else:
                self._extra(event.extra, "usage.")
        return usage

    def _passthrough(self, event: ir.Passthrough, out: list[Any]) -> None:
        if event.format == NAME:
            out.append(event.data)
            return
        cite = event.meaning
        if type(cite) is ir.Citation and self._cite(self.text_lane, cite):
            return  # a Responses url_citation annotation
        if event.item is not None:  # said once, where the item opens
            if event.item:
                self.notes.lost(f"{event.item} item has no place in chat chunks")
            return
        data = event.data
        what = data.get("type") if isinstance(data, dict) else None
        item = data.get("item") if isinstance(data, dict) else None
        if isinstance(item, dict) and what == "response.output_item.added":
            self.notes.lost(f"{item.get('type')} item has no place in chat chunks")
        elif isinstance(what, str) and "annotation" in what:
            self.notes.lost_field("annotations")
        # Other passthrough events belong to an item already reported, or are lifecycle.
