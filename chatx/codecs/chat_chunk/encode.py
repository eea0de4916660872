"""Encode IR events as ``chat.completion.chunk`` payloads.

One batch (the events of one source record) becomes at most one chunk, so delta
boundaries survive. Residue from a chat source is merged back; residue from another
format is reported as lost.
"""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.base import EncodeOptions
from chatx.codecs.chat_chunk.annotations import Citations
from chatx.codecs.chat_chunk.calls import first_entry, join_fragment
from chatx.codecs.chat_chunk.chunks import Choices, Chunks, Stream, append, extend
from chatx.codecs.chat_chunk.fields import usage_object
from chatx.codecs.chat_chunk.finishing import Finishes
from chatx.codecs.chat_chunk.mend import error_object, later_entry
from chatx.codecs.chat_chunk.runs import Runs
from chatx.codecs.template import DeltaRun
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


class ChatChunkEncoder:
    """Incremental encoder: ``feed(batch)`` returns zero or one chunk (or an error frame).

    Its parts share the :class:`~chatx.codecs.chat_chunk.chunks.Stream`: ``chunks``
    builds a chunk and says residue lost, ``citations`` places another format's
    citations, ``finishes`` writes finish reasons, ``runs`` encodes a run of deltas."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = own = options.source_format == NAME
        self.reasoning_field = options.reasoning_field
        self.lost_meta = MetaReport(notes)
        self.stream = stream = Stream(own)
        self.chunks = chunks = Chunks(stream, notes)
        self.citations = citations = Citations(stream, chunks, notes)
        self.finishes = Finishes(stream, chunks, citations, notes)
        self.runs = Runs(stream, self.feed, self.lost_meta, options.reasoning_field)
        # Bound once: the per-event code calls them with no hop to ``chunks``.
        self._delta = chunks.delta
        self._residue = chunks.residue
        self.open = False  # a stream started and [DONE] not yet written
        self.ended = False  # the source's stream ended (StreamEnd seen)
        self.unfinished_end = False  # the stream ended with a lane still unfinished
        # Per chunk being built, (lane, call): where the search for the entry a call's
        # next fragment joins starts. No entry before it can be that one: a long call in
        # one chunk (Llama Stack holds them whole) would be searched from the start for
        # each of its fragments, in time that grows with their square.
        self.scanned: dict[tuple[int, int], int] = {}

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun` (:class:`Runs`)."""
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
        """One flat ``if type(event) is ...`` chain, most frequent first: the hot path pays
        no method lookup per event, and each branch narrows the event for the type
        checker (a ``kind = type(event)`` alias would not; ``match`` costs 3x as much).
        The events most batches do not have are in :meth:`_other_event`."""
        out: list[Any] = []
        choices: Choices = {}
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
                elif event.meaning is None or not self.citations.cite(event.lane, event.meaning):
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

    def _other_event(self, event: ir.Event, choices: Choices, out: list[Any]) -> None:
        if type(event) is ir.RefusalDelta:
            append(self._delta(choices, event.lane), "refusal", event.text)
            if event.logprobs:
                extend(self.chunks.logprobs(choices, event.lane), "refusal", event.logprobs)
        elif type(event) is ir.LaneStart:
            self.stream.roles.add(event.lane)
            self._delta(choices, event.lane)["role"] = event.role
        elif type(event) is ir.Finish:
            self.finishes.finish(choices, event)
        elif type(event) is ir.StreamStart:
            out.extend(self._start(event))
        elif type(event) is ir.Passthrough:
            self._passthrough(event, out)
        elif type(event) is ir.ItemEnd:
            self._item_end(choices, event)
        elif type(event) is ir.StreamEnd:
            self._end(event)

    def _item_end(self, choices: Choices, event: ir.ItemEnd) -> None:
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

    def _text(self, choices: Choices, event: ir.TextDelta) -> None:
        append(self._delta(choices, event.lane), "content", event.text)
        if not self.own:
            said = self.stream.said
            said[event.lane] = said.get(event.lane, 0) + len(event.text)
        if event.logprobs:
            extend(self.chunks.logprobs(choices, event.lane), "content", event.logprobs)
        if event.extra:
            self._residue(event.extra, "delta.")

    def _reasoning(self, choices: Choices, event: ir.ReasoningDelta) -> None:
        field = self.reasoning_field or event.source_field or "reasoning_content"
        append(self._delta(choices, event.lane), field, event.text)
        if event.extra:
            self._residue(event.extra, "reasoning.")

    def _close_batch(
        self,
        choices: Choices,
        usage: dict[str, Any] | None,
        extras: list[ir.Meta],
        error: ir.Error | None,
        obfuscation: str | None,
        out: list[Any],
    ) -> None:
        """The batch's chunk (or chunks, or error frame), once all its events are read."""
        stream, chunks = self.stream, self.chunks
        if stream.failed and not self.own:
            self.unfinished_end = False
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
            out.append({"error": error_object(error, self.own)})
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

    def _end(self, event: ir.StreamEnd) -> None:
        self.ended = True
        self.unfinished_end = True  # checked once the batch's own chunk is written
        # "~done" (whether a chat source wrote [DONE]) does not decide the output's: a
        # JSON-lines source has none to write, and SSE output ends with it all the same.
        if event.extra and not self.own:
            self._residue(event.extra, "response.")

    def _start(self, event: ir.StreamStart) -> list[Any]:
        out: list[Any] = [DONE] if self.open and (self.ended or self.stream.failed) else []
        self.open = True
        self.ended = False
        self.citations.restart()
        sid = event.id if self.own else chat_id(event.id)
        self.stream.restart(sid, event.model, event.created)
        if event.extra and not self.own:
            self._residue(event.extra, "response.")
        return out

    def _call_start(self, choices: Choices, event: ir.ItemStart) -> None:
        if event.kind != "tool_call":
            # Chat says where a message or reasoning starts by its deltas alone; where
            # another format's message text begins places its citations.
            if event.kind == "message" and not self.own:
                self.citations.text_start(event.lane)
            return
        self.stream.called.add(event.lane)
        entry = first_entry(event, self.own)
        if self.own:
            merge(entry, event.extra)
        elif event.extra:
            self._residue(event.extra, "tool_call.")
        self._delta(choices, event.lane).setdefault("tool_calls", []).append(entry)

    def _args(self, choices: Choices, event: ir.ToolArgsDelta) -> None:
        calls = self._delta(choices, event.lane).setdefault("tool_calls", [])
        entry = join_fragment(calls, event, self.scanned, self.own)
        if event.extra:
            if "index" in event.extra:
                self.scanned.clear()  # an entry may now stand for another call
            if self.own:
                merge(entry, later_entry(event.extra, self.notes, self.stream.mended))
            else:
                self._residue(event.extra, "tool_call.")

    def _usage(self, event: ir.Usage) -> dict[str, Any]:
        usage = usage_object(event)
        if event.cache_write:
            self._residue({"cache_write_tokens": event.cache_write}, "usage.")
        if event.extra:
            if self.own:
                merge(usage, event.extra)
            else:
                self._residue(event.extra, "usage.")
        return usage

    def _passthrough(self, event: ir.Passthrough, out: list[Any]) -> None:
        if event.format == NAME:
            out.append(event.data)
            return
        cite = event.meaning
        if type(cite) is ir.Citation and self.citations.cite(None, cite):
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
