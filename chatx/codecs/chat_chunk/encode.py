"""Encode IR events as ``chat.completion.chunk`` payloads.

One batch (the events of one source record) becomes at most one chunk, so delta
boundaries survive. Residue from a chat source is merged back; residue from another
format is reported as lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.chat_chunk.annotations import ChatCitations
from chatx.codecs.chat_chunk.calls import first_entry, join_fragment
from chatx.codecs.chat_chunk.chunks import Batch, ChatStream, Chunks, append, extend
from chatx.codecs.chat_chunk.fields import ChatOwn, usage_object
from chatx.codecs.chat_chunk.finishing import Finishes
from chatx.codecs.chat_chunk.mend import error_object, later_entry
from chatx.codecs.chat_chunk.runs import ChatRuns
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.record import DONE
from chatx.residue import MetaReport, merge, passthrough_lost

NAME = "chat-chunk"


def chat_id(source_id: str) -> str:
    """``resp_X`` → ``chatcmpl-X``; chat ids are kept as they are."""
    if source_id.startswith("resp_"):
        return "chatcmpl-" + source_id[5:]
    if source_id.startswith(("chatcmpl-", "chat-")) or not source_id:
        return source_id
    return "chatcmpl-" + source_id


class ChatChunkEncoder:
    """Incremental encoder: ``feed(batch)`` returns zero or one chunk (or an error frame).

    Its parts share the :class:`~chatx.codecs.chat_chunk.chunks.ChatStream`: ``chunks``
    builds a chunk and says residue lost, ``citations`` places another format's
    citations, ``finishes`` writes finish reasons, ``runs`` encodes a run of deltas.
    ``handlers`` is the table from an event's type to the method that writes it into
    the batch's :class:`~chatx.codecs.chat_chunk.chunks.Batch`."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = own = options.source_format == NAME
        self.reasoning_field = options.reasoning_field
        self.lost_meta = MetaReport(notes)
        self.stream = stream = ChatStream(own)
        self.chunks = chunks = Chunks(stream, notes)
        self.citations = citations = ChatCitations(stream, chunks, notes)
        self.finishes = Finishes(stream, chunks, citations, notes)
        self.runs = ChatRuns(stream, self.feed, self.lost_meta, options.reasoning_field)
        # Bound once: the per-event code calls them with no hop to ``chunks``.
        self._delta = chunks.delta
        self._residue = chunks.residue
        self.open = False  # a stream started and [DONE] not yet written
        self.ended = False  # the source's stream ended (StreamEnd seen)
        self.unfinished_end = False  # the stream ended with a lane still unfinished
        # Another format's error, held until the batch after it: a usage that follows it
        # (a Responses response.failed's) goes on the same chunk, as OpenRouter writes it.
        self.held: ir.Error | None = None
        # (lane, call) of each functions-API call read from chat: chat output writes its
        # delta.function_call back from residue, not as a tool_calls entry.
        self.legacy: set[tuple[int, int | None]] = set()
        # Per chunk being built, (lane, call): where the search for the entry a call's
        # next fragment joins starts. No entry before it can be that one: a long call in
        # one chunk (Llama Stack holds them whole) would be searched from the start for
        # each of its fragments, in time that grows with their square.
        self.scanned: dict[tuple[int, int], int] = {}
        # What writes each event into its batch: most batches have one or two events,
        # and a dict lookup of their type costs what a short if chain does.
        self.handlers: dict[type, Callable[[Any, Batch], None]] = {
            ir.TextDelta: self._text,
            ir.Meta: self._meta,
            ir.ReasoningDelta: self._reasoning,
            ir.ToolArgsDelta: self._args,
            ir.ItemStart: self._call_start,
            ir.Usage: self._usage,
            ir.Error: self._error,
            ir.RefusalDelta: self._refusal,
            ir.LaneStart: self._lane_start,
            ir.Finish: self._finish,
            ir.StreamStart: self._start,
            ir.Passthrough: self._passthrough,
            ir.ItemEnd: self._item_end,
            ir.StreamEnd: self._end,
        }

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun` (:class:`ChatRuns`)."""
        return self.runs.encode(run)

    def feed(self, events: list[ir.Event]) -> list[Any]:
        """Encode one batch; a batch that says nothing writes nothing."""
        if len(events) == 1:
            event = events[0]
            stream = self.stream
            if (
                type(event) is ir.TextDelta
                and event.lane in stream.roles
                and not event.extra
                and not event.logprobs
            ):
                # A batch of only more text (most of a Responses source): the chunk the
                # general path below would build, built at once.
                single: dict[str, Any] = {
                    "id": stream.id,
                    "object": "chat.completion.chunk",
                    "created": stream.created,
                    "model": stream.model,
                    "choices": [{"index": event.lane, "delta": {"content": event.text}}],
                }
                if event.obfuscation is not None:
                    single["obfuscation"] = event.obfuscation
                if not self.own:
                    said = stream.said
                    said[event.lane] = said.get(event.lane, 0) + len(event.text)
                return [single]
        return self._batch(events)

    def _batch(self, events: list[ir.Event]) -> list[Any]:
        """Each event through :attr:`handlers` into the batch's :class:`Batch`, then the
        batch's chunk."""
        batch = Batch()
        if self.scanned:
            self.scanned.clear()
        handlers = self.handlers
        for event in events:
            handlers[type(event)](event, batch)
        self._close_batch(batch)
        return batch.out

    def _text(self, event: ir.TextDelta, batch: Batch) -> None:
        choices = batch.choices
        append(self._delta(choices, event.lane), "content", event.text)
        if not self.own:
            said = self.stream.said
            said[event.lane] = said.get(event.lane, 0) + len(event.text)
        if event.logprobs:
            extend(self.chunks.logprobs(choices, event.lane), "content", event.logprobs)
        if event.extra:
            self._residue(event.extra, "delta.")
        if event.obfuscation is not None:
            batch.obfuscation = event.obfuscation

    def _meta(self, event: ir.Meta, batch: Batch) -> None:
        if self.own:
            batch.extras.append(event)
        elif event.meaning is None or not self.citations.cite(event.lane, event.meaning):
            self.lost_meta(event)

    def _reasoning(self, event: ir.ReasoningDelta, batch: Batch) -> None:
        field = self.reasoning_field or event.source_field or "reasoning_content"
        append(self._delta(batch.choices, event.lane), field, event.text)
        if event.extra:
            self._residue(event.extra, "reasoning.")
        if event.obfuscation is not None:
            batch.obfuscation = event.obfuscation

    def _refusal(self, event: ir.RefusalDelta, batch: Batch) -> None:
        append(self._delta(batch.choices, event.lane), "refusal", event.text)
        if event.logprobs:
            extend(self.chunks.logprobs(batch.choices, event.lane), "refusal", event.logprobs)

    def _lane_start(self, event: ir.LaneStart, batch: Batch) -> None:
        self.stream.roles.add(event.lane)
        self._delta(batch.choices, event.lane)["role"] = event.role

    def _finish(self, event: ir.Finish, batch: Batch) -> None:
        self.finishes.finish(batch.choices, event)

    def _usage(self, event: ir.Usage, batch: Batch) -> None:
        batch.usage = self._usage_object(event)

    def _error(self, event: ir.Error, batch: Batch) -> None:
        batch.error = event
        if event.extra:  # another format's error fields (Google's details): said lost
            self._residue(event.extra, "error.")

    def _item_end(self, event: ir.ItemEnd, batch: Batch) -> None:
        extra = event.extra
        if event.kind == "message" and not self.own:
            self.citations.text_end(event.lane)
            if extra:
                extra = self.citations.uncited_end(extra, event.lane)
        if extra:
            self._residue(extra, "")
        if event.signature is not None or event.encrypted is not None:
            sealed = {"signature": event.signature, "encrypted_content": event.encrypted}
            self._residue(sealed, "reasoning.")

    def _close_batch(self, batch: Batch) -> None:
        """The batch's chunk (or chunks, or error frame), once all its events are read."""
        stream, chunks = self.stream, self.chunks
        choices, usage, extras, error = batch.choices, batch.usage, batch.extras, batch.error
        obfuscation, out = batch.obfuscation, batch.out
        if stream.failed and not self.own:
            self.unfinished_end = False
            if self.held is not None:
                self._write_held(out, usage)
                usage = None
            self.finishes.after_failure(choices, usage)
            return
        if (
            usage is not None
            and not choices
            and not stream.failed
            and stream.roles - stream.finished
        ):
            # The usage chunk comes after every choice finished (chat rule 5).
            out.append(self.finishes.unfinished())
        top = {"usage": usage} if usage is not None else None
        if choices and top is not None and not self.own:
            # Usage from another format goes in a last chunk of its own, as OpenAI sends it.
            out.append(chunks.chunk(choices, {}, extras, error, obfuscation))
            out.append(chunks.chunk({}, top, [], None))
        elif choices or top is not None or extras:
            out.append(chunks.chunk(choices, top or {}, extras, error, obfuscation))
        elif error is not None:
            # A bare error frame ends the stream (an error before any chunk opens one).
            stream.failed = self.open = True
            if self.own:
                out.append({"error": error_object(error, self.own)})
            else:
                self.held = error
        if self.unfinished_end:
            self.unfinished_end = False
            if not stream.failed and stream.roles - stream.finished:
                out.append(self.finishes.unfinished())

    def finish(self) -> list[Any]:
        """End of input: ``data: [DONE]`` closes every stream that ended, an error frame
        included (the JSONL writer leaves it out: a JSON-lines file holds JSON values).

        vLLM and OpenRouter write ``[DONE]`` after their error frame; a source that
        ended there without one (Groq) gets it too: SSE chat output always ends with the
        sentinel, and the openai SDK stops at the error frame before reading it."""
        out: list[Any] = []
        self._write_held(out, None)
        stream = self.stream
        if self.open:
            self.open = False
            # A source that stopped short (no [DONE], no terminal event) gets no invented
            # ending unless --finish asks for one.
            if self.options.finish and not (stream.failed or self.ended):
                if stream.roles - stream.finished:
                    out.append(self.finishes.unfinished())
                out.append(DONE)
            elif stream.failed or self.ended:
                out.append(DONE)
        self.citations.left()
        return out

    def _write_held(self, out: list[Any], usage: dict[str, Any] | None) -> None:
        """The held error: a bare error frame, or with the usage that came after it a
        chunk with no choices carrying both (chat's decoder and the openai SDK read it)."""
        error, self.held = self.held, None
        if error is None:
            return
        if usage is None:
            out.append({"error": error_object(error, self.own)})
        else:
            out.append(self.chunks.chunk({}, {"usage": usage}, [], error))

    def _end(self, event: ir.StreamEnd, batch: Batch) -> None:
        self.ended = True
        self.unfinished_end = True  # checked once the batch's own chunk is written
        # Whether a chat source wrote [DONE] does not decide the output's: a JSON-lines
        # source has none to write, and SSE output ends with it all the same.
        if event.extra and not self.own:
            self._residue(event.extra, "response.")

    def _start(self, event: ir.StreamStart, batch: Batch) -> None:
        self._write_held(batch.out, None)
        if self.open and (self.ended or self.stream.failed):
            batch.out.append(DONE)
        self.open = True
        self.ended = False
        self.legacy.clear()
        self.citations.restart()
        sid = event.id if self.own else chat_id(event.id)
        self.stream.restart(sid, event.model, event.created)
        if event.extra and not self.own:
            self._residue(event.extra, "response.")

    def _call_start(self, event: ir.ItemStart, batch: Batch) -> None:
        if event.kind != "tool_call":
            # Chat says where a message or reasoning starts by its deltas alone; where
            # another format's message text begins places its citations.
            if event.kind == "message" and not self.own:
                self.citations.text_start(event.lane)
            return
        own = event.own
        if type(own) is ChatOwn and own.function_call:
            self.legacy.add((event.lane, event.call))
            return
        self.stream.called.add(event.lane)
        entry = first_entry(event, self.own)
        if self.own:
            merge(entry, event.extra)
        elif event.extra:
            self._residue(event.extra, "tool_call.")
        self._delta(batch.choices, event.lane).setdefault("tool_calls", []).append(entry)

    def _args(self, event: ir.ToolArgsDelta, batch: Batch) -> None:
        if self.legacy and (event.lane, event.call) in self.legacy:
            return
        calls = self._delta(batch.choices, event.lane).setdefault("tool_calls", [])
        entry = join_fragment(calls, event, self.scanned, self.own)
        if event.extra:
            if "index" in event.extra:
                self.scanned.clear()  # an entry may now stand for another call
            if self.own:
                merge(entry, later_entry(event.extra, self.notes, self.stream.mended))
            else:
                self._residue(event.extra, "tool_call.")
        if event.obfuscation is not None:
            batch.obfuscation = event.obfuscation

    def _usage_object(self, event: ir.Usage) -> dict[str, Any]:
        usage = usage_object(event)
        if event.cache_write:
            self._residue({"cache_write_tokens": event.cache_write}, "usage.")
        if event.extra:
            if self.own:
                merge(usage, event.extra)
            else:
                self._residue(event.extra, "usage.")
        return usage

    def _passthrough(self, event: ir.Passthrough, batch: Batch) -> None:
        if event.format == NAME:
            batch.out.append(event.data)
            return
        cite = event.meaning
        if type(cite) is ir.Citation and self.citations.cite(None, cite):
            return  # a Responses url_citation annotation
        passthrough_lost(event, self.notes, "chat chunks", records=False)
