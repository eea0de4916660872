"""The chunks the chat encoder writes: a batch's choices and deltas gathered, then the
chunk around them (the stream's id, its residue merged back)."""

from __future__ import annotations

from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.mend import OBJECT, error_object, one_stream
from chatx.codecs.chat_chunk.runs import RunEncoding
from chatx.notes import Notes
from chatx.residue import merge, report


class ChunkBuilding(RunEncoding):
    """The chunk half of :class:`~chatx.codecs.chat_chunk.encode.ChatChunkEncoder`."""

    notes: Notes
    id: str
    model: Any
    created: Any
    mended: set[str]

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

    def _extra(self, extra: dict[str, Any], prefix: str) -> None:
        """Another format's residue: said lost (a chat source's is merged back)."""
        if not self.own:
            report(extra, self.notes, prefix)


def append(delta: dict[str, Any], key: str, text: str) -> None:
    # A batch can carry several pieces of one kind (held-back text released at once):
    # one chunk says them all, in order.
    old = delta.get(key)
    delta[key] = old + text if isinstance(old, str) else text


def extend(logprobs: dict[str, Any], key: str, entries: list[Any]) -> None:
    old = logprobs.get(key)
    logprobs[key] = old + entries if isinstance(old, list) else entries
