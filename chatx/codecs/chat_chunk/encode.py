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
from chatx.codecs.chat_chunk.fields import usage_object
from chatx.codecs.chat_chunk.mend import OBJECT, error_object, later_entry, one_stream
from chatx.codecs.chat_chunk.runs import RunEncoding
from chatx.codecs.finish import exact
from chatx.notes import Notes
from chatx.record import DONE
from chatx.residue import MetaReport, merge, report

NAME = "chat-chunk"


def chat_id(source_id: str) -> str:
    """``resp_X`` → ``chatcmpl-X``; chat ids are kept as they are."""
    if source_id.startswith("resp_"):
        return "chatcmpl-" + source_id[5:]
    if source_id.startswith(("chatcmpl-", "chat-")) or not source_id:
        return source_id
    return "chatcmpl-" + source_id


class ChatChunkEncoder(RunEncoding):
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
                else:
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
            _append(self._delta(choices, event.lane), "refusal", event.text)
            if event.logprobs:
                _extend(self._logprobs(choices, event.lane), "refusal", event.logprobs)
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
            if event.extra:
                self._extra(event.extra, "")
            if event.signature is not None or event.encrypted is not None:
                sealed = {"signature": event.signature, "encrypted_content": event.encrypted}
                self._extra(sealed, "reasoning.")
        elif type(event) is ir.StreamEnd:
            self._end(event)

    def _text(self, choices: dict[int, dict[str, Any]], event: ir.TextDelta) -> None:
        _append(self._delta(choices, event.lane), "content", event.text)
        if event.logprobs:
            _extend(self._logprobs(choices, event.lane), "content", event.logprobs)
        if event.extra:
            self._extra(event.extra, "delta.")

    def _reasoning(self, choices: dict[int, dict[str, Any]], event: ir.ReasoningDelta) -> None:
        field = self.options.reasoning_field or event.source_field or "reasoning_content"
        _append(self._delta(choices, event.lane), field, event.text)
        if event.extra:
            self._extra(event.extra, "reasoning.")

    def _finish_choice(self, choices: dict[int, dict[str, Any]], event: ir.Finish) -> None:
        if event.reason == "error" and self.failed:
            return  # the error frame already ended the stream
        if event.lane in self.finished:
            self.notes.repaired(
                f"choice {event.lane}: a second finish_reason "
                f"{event.reason!r} left out (a choice finishes once)"
            )
            return
        self.finished.add(event.lane)
        self._choice(choices, event.lane)["finish_reason"] = self._finish(event.reason)
        if event.extra:
            self._extra(event.extra, "finish.")
        if event.stop_sequence is not None:  # Anthropic's: chat says only "stop"
            self._extra({"stop_sequence": event.stop_sequence}, "finish.")

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

    def _finish(self, reason: str) -> str:
        """The finish_reason to write: the source's own word from chat (vLLM's abort,
        OpenRouter's error), every IR word but "error" from another format."""
        if self.own:
            return reason
        if reason != "error":
            if exact(reason) is None:  # Anthropic's pause_turn: an incomplete response
                self.notes.lost(f"finish reason {reason!r} has no chat word: written as 'length'")
                return "length"
            return reason
        # OpenAI's chat has no finish reason for a failed generation (an error frame says
        # it, and it did not come: a Responses response.failed without an error event).
        self.notes.lost("finish reason 'error' (the generation failed): written as 'stop'")
        return "stop"

    def _finish_unfinished(self) -> dict[str, Any]:
        """A chunk that finishes each choice the source never finished: ``tool_calls``
        when it made a call, else ``stop`` (what Responses output says with
        ``completed``). Every choice ends with one finish_reason (chat rule 4)."""
        choices: dict[int, dict[str, Any]] = {}
        for lane in sorted(self.roles - self.finished):
            reason = "tool_calls" if lane in self.called else "stop"
            self.notes.repaired(f"choice {lane} never got a finish_reason: {reason!r} written")
            self._choice(choices, lane)["finish_reason"] = reason
            self.finished.add(lane)
        return self._chunk(choices, {}, [], None)

    def finish(self) -> list[Any]:
        """End of input: ``data: [DONE]`` closes every stream that ended, an error frame
        included (the JSONL writer leaves it out: a JSON-lines file holds JSON values).

        vLLM and OpenRouter write ``[DONE]`` after their error frame; a source that
        ended there without one (Groq) gets it too: SSE chat output always ends with the
        sentinel, and the openai SDK stops at the error frame before reading it."""
        if self.open:
            self.open = False
            # A source that stopped short (no [DONE], no terminal event) gets no invented
            # ending unless --finish asks for one.
            if self.failed or self.ended:
                return [DONE]
            if self.options.finish:
                out: list[Any] = []
                if self.roles - self.finished:
                    out.append(self._finish_unfinished())
                return [*out, DONE]
        return []

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
        self.id = event.id if self.own else chat_id(event.id)
        self.model = event.model if event.model is not None else ""
        self.created = event.created if event.created is not None else 0
        if event.extra and not self.own:
            self._extra(event.extra, "response.")
        return out

    def _chunk(
        self,
        choices: dict[int, dict[str, Any]],
        top: dict[str, Any],
        extras: list[ir.Meta],
        error: ir.Error | None,
        obfuscation: str | None = None,
    ) -> dict[str, Any]:
        record_extra: list[dict[str, Any]] = []
        for meta in extras:
            if meta.lane is None:
                record_extra.append(meta.extra)
            else:
                choice = self._choice(choices, meta.lane)
                merge(choice, meta.extra)
                if meta.delta:
                    merge(choice["delta"], meta.delta)
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": list(choices.values()),
        }
        if top:
            chunk.update(top)
        if error is not None:
            chunk["error"] = error_object(error, self.own)
        for extra in record_extra:
            merge(chunk, extra)
        if record_extra and (chunk.get("id") != self.id or chunk.get("object") != OBJECT):
            one_stream(chunk, self.id, self.notes, self.mended)
        if obfuscation is not None:
            chunk["obfuscation"] = obfuscation  # last, where OpenAI writes it
        return chunk

    def _choice(self, choices: dict[int, dict[str, Any]], lane: int) -> dict[str, Any]:
        choice = choices.get(lane)
        if choice is None:
            choice = choices[lane] = {"index": lane, "delta": {}}
            if lane not in self.roles:
                # Every choice's first delta names the speaker (chat rule 2).
                self.roles.add(lane)
                choice["delta"]["role"] = "assistant"
                if self.own:
                    self.notes.repaired(f"choice {lane}: role added to its first delta")
        return choice

    def _delta(self, choices: dict[int, dict[str, Any]], lane: int) -> dict[str, Any]:
        choice = choices.get(lane)
        if choice is None:
            choice = self._choice(choices, lane)
        return choice["delta"]

    def _logprobs(self, choices: dict[int, dict[str, Any]], lane: int) -> dict[str, Any]:
        choice = self._choice(choices, lane)
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            logprobs = choice["logprobs"] = {}
        return logprobs

    def _call_start(self, choices: dict[int, dict[str, Any]], event: ir.ItemStart) -> None:
        if event.kind != "tool_call":
            return  # chat says where a message or reasoning starts by its deltas alone
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

    def _extra(self, extra: dict[str, Any], prefix: str) -> None:
        if not self.own:
            report(extra, self.notes, prefix)


def _append(delta: dict[str, Any], key: str, text: str) -> None:
    # A batch can carry several pieces of one kind (held-back text released at once):
    # one chunk says them all, in order.
    old = delta.get(key)
    delta[key] = old + text if isinstance(old, str) else text


def _extend(logprobs: dict[str, Any], key: str, entries: list[Any]) -> None:
    old = logprobs.get(key)
    logprobs[key] = old + entries if isinstance(old, list) else entries
