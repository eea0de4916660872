"""The chunks the chat encoder writes: a batch's choices and deltas gathered, then the
chunk around them (the stream's id, its residue merged back). :class:`ChatStream` is what
the encoder's parts share of the stream being written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.chat_chunk.mend import OBJECT, error_object, one_stream
from chatx.notes import Notes
from chatx.residue import merge, report

# A batch's choices being built, by lane: each a chunk's ``choices[]`` entry.
Choices = dict[int, dict[str, Any]]


@dataclass(slots=True, eq=False)
class ChatStream:
    """The stream being written, as the encoder and its parts share it: what its chunks
    say of it and what each choice has said so far. Sets and dicts are cleared, never
    replaced, so a part may hold one."""

    own: bool  # the source is chat: its residue is merged back, another's said lost
    id: str = ""
    model: str = ""
    created: int = 0
    failed: bool = False  # an error frame was written: it ended the stream
    roles: set[int] = field(default_factory=set)  # lanes whose role is written
    finished: set[int] = field(default_factory=set)  # lanes whose finish_reason is written
    called: set[int] = field(default_factory=set)  # lanes that made a tool call
    mended: set[str] = field(default_factory=set)  # chunk fields written as the stream's
    # Another format's content written, in characters, per lane (places its citations).
    said: dict[int, int] = field(default_factory=dict)

    def restart(self, sid: str, model: str | None, created: int | None) -> None:
        """A new stream begins: its own id, model and time, no choice said anything."""
        self.id = sid
        self.model = model if model is not None else ""
        self.created = created if created is not None else 0
        self.failed = False
        self.roles.clear()
        self.finished.clear()
        self.called.clear()
        self.mended.clear()
        self.said.clear()


class Batch:
    """What the events of one batch gather before its chunk is written: the choices
    and their deltas, the usage, the chat source's own residue (``extras``), an error,
    the last obfuscation said, and the payloads written already (``out``)."""

    __slots__ = ("choices", "usage", "extras", "error", "obfuscation", "out")

    def __init__(self) -> None:
        self.choices: Choices = {}
        self.usage: dict[str, Any] | None = None
        self.extras: list[ir.Meta] = []
        self.error: ir.Error | None = None
        self.obfuscation: str | None = None
        self.out: list[Any] = []


class Chunks:
    """Builds a batch's choices and the chunk around them, and says another format's
    residue lost."""

    __slots__ = ("notes", "own", "stream")

    def __init__(self, stream: ChatStream, notes: Notes) -> None:
        self.stream = stream
        self.notes = notes
        self.own = stream.own

    def chunk(
        self,
        choices: Choices,
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
                choice = self.choice(choices, meta.lane)
                merge(choice, meta.extra)
                if meta.delta:
                    merge(choice["delta"], meta.delta)
        stream = self.stream
        chunk: dict[str, Any] = {
            "id": stream.id,
            "object": "chat.completion.chunk",
            "created": stream.created,
            "model": stream.model,
            "choices": list(choices.values()),
        }
        if top:
            chunk.update(top)
        if error is not None:
            chunk["error"] = error_object(error, self.own)
        for extra in record_extra:
            merge(chunk, extra)
        if record_extra and (chunk.get("id") != stream.id or chunk.get("object") != OBJECT):
            one_stream(chunk, stream.id, self.notes, stream.mended)
        if obfuscation is not None:
            chunk["obfuscation"] = obfuscation  # last, where OpenAI writes it
        return chunk

    def choice(self, choices: Choices, lane: int) -> dict[str, Any]:
        choice = choices.get(lane)
        if choice is None:
            choice = choices[lane] = {"index": lane, "delta": {}}
            roles = self.stream.roles
            if lane not in roles:
                # Every choice's first delta names the speaker (chat rule 2).
                roles.add(lane)
                choice["delta"]["role"] = "assistant"
                if self.own:
                    self.notes.repaired(f"choice {lane}: role added to its first delta")
        return choice

    def delta(self, choices: Choices, lane: int) -> dict[str, Any]:
        choice = choices.get(lane)
        if choice is None:
            choice = self.choice(choices, lane)
        return choice["delta"]

    def logprobs(self, choices: Choices, lane: int) -> dict[str, Any]:
        choice = self.choice(choices, lane)
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            logprobs = choice["logprobs"] = {}
        return logprobs

    def residue(self, extra: dict[str, Any], prefix: str) -> None:
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
