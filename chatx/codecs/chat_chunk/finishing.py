"""How the chat encoder finishes a choice: the finish_reason it writes, a second one
left out, and the choices a stream ended without finishing."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.annotations import AnnotationEncoding
from chatx.codecs.finish import exact


class FinishEncoding(AnnotationEncoding):
    """The finish half of :class:`~chatx.codecs.chat_chunk.encode.ChatChunkEncoder`."""

    failed: bool
    finished: set[int]
    called: set[int]
    unfinished_end: bool

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
        if not self.own:
            self._annotations(choices, event.lane)
        choice = self._choice(choices, event.lane)
        choice["finish_reason"] = self._finish(event.reason)
        if event.stop_sequence is not None and not self.own:
            # Another format's stop sequence (Anthropic's stop_reason "stop_sequence"):
            # where vLLM says the stop string beside finish_reason. A chat source's own
            # stop_reason comes back with its residue, as it came.
            choice["stop_reason"] = event.stop_sequence
        if event.extra:
            self._extra(event.extra, "finish.")

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
            if not self.own:
                self._annotations(choices, lane)
            self._choice(choices, lane)["finish_reason"] = reason
            self.finished.add(lane)
        return self._chunk(choices, {}, [], None)

    def _after_failure(self, choices: dict[int, dict[str, Any]], usage: Any) -> None:
        """Another format's error frame ended the stream: a chunk after it breaks chat's
        rule (CHK018) and the openai SDK stops reading there, so what the source says
        after its error (a Responses response.failed's usage) has no place."""
        self.unfinished_end = False
        if choices or usage is not None:
            self.notes.lost("the finish reason or usage that came after the error frame")
