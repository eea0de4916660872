"""How the chat encoder finishes a choice: the finish_reason it writes, a second one
left out, and the choices a stream ended without finishing."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.base import exact_reason
from chatx.codecs.chat_chunk.annotations import ChatCitations
from chatx.codecs.chat_chunk.chunks import ChatStream, Choices, Chunks
from chatx.notes import Notes


class Finishes:
    """Writes each choice's finish_reason, once, with the annotations it waited for."""

    __slots__ = ("chunks", "citations", "notes", "own", "stream")

    def __init__(
        self, stream: ChatStream, chunks: Chunks, citations: ChatCitations, notes: Notes
    ) -> None:
        self.stream = stream
        self.chunks = chunks
        self.citations = citations
        self.notes = notes
        self.own = stream.own

    def finish(self, choices: Choices, event: ir.Finish) -> None:
        stream = self.stream
        if event.reason == "error" and stream.failed:
            return  # the error frame already ended the stream
        if event.lane in stream.finished:
            self.notes.repaired(
                f"choice {event.lane}: a second finish_reason "
                f"{event.reason!r} left out (a choice finishes once)"
            )
            return
        stream.finished.add(event.lane)
        if not self.own:
            self.citations.place(choices, event.lane)
        choice = self.chunks.choice(choices, event.lane)
        choice["finish_reason"] = self.reason(event.reason)
        if event.stop_sequence is not None and not self.own:
            # Another format's stop sequence (Anthropic's stop_reason "stop_sequence"):
            # where vLLM says the stop string beside finish_reason. A chat source's own
            # stop_reason comes back with its residue, as it came.
            choice["stop_reason"] = event.stop_sequence
        if event.extra:
            self.chunks.residue(event.extra, "finish.")

    def reason(self, reason: str) -> str:
        """The finish_reason to write: the source's own word from chat (vLLM's abort,
        OpenRouter's error), every IR word but "error" from another format."""
        if self.own:
            return reason
        if reason != "error":
            if exact_reason(reason) is None:  # Anthropic's pause_turn: an incomplete response
                self.notes.lost(f"finish reason {reason!r} has no chat word: written as 'length'")
                return "length"
            return reason
        # OpenAI's chat has no finish reason for a failed generation (an error frame says
        # it, and it did not come: a Responses response.failed without an error event).
        self.notes.lost("finish reason 'error' (the generation failed): written as 'stop'")
        return "stop"

    def unfinished(self) -> dict[str, Any]:
        """A chunk that finishes each choice the source never finished: ``tool_calls``
        when it made a call, else ``stop`` (what Responses output says with
        ``completed``). Every choice ends with one finish_reason (chat rule 4)."""
        stream = self.stream
        choices: Choices = {}
        for lane in sorted(stream.roles - stream.finished):
            reason = "tool_calls" if lane in stream.called else "stop"
            self.notes.repaired(f"choice {lane} never got a finish_reason: {reason!r} written")
            if not self.own:
                self.citations.place(choices, lane)
            self.chunks.choice(choices, lane)["finish_reason"] = reason
            stream.finished.add(lane)
        return self.chunks.chunk(choices, {}, [], None)

    def after_failure(self, choices: Choices, usage: dict[str, Any] | None) -> None:
        """Another format's error frame ended the stream: a chunk after it breaks chat's
        rule (CHK018) and the openai SDK stops reading there, so what the source says
        after its error has no place (a usage right after it rides on the held error
        frame: ChunkEncoder._write_held)."""
        if choices or usage is not None:
            self.notes.lost("the finish reason or usage that came after the error frame")
