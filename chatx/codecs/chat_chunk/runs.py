"""The chat encoder's runs (:class:`~chatx.codecs.template.DeltaRun`): one chunk built
the long way, the others its bytes with their own strings (:class:`~chatx.codecs.byte_template.PayloadTemplate`), or copies
of it where the bytes cannot be made so."""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from chatx import ir
from chatx.codecs.byte_template import Make, PayloadTemplate
from chatx.codecs.chat_chunk.chunks import ChatStream
from chatx.codecs.template import DeltaRun
from chatx.residue import MetaReport

Feed = Callable[[list[ir.Event]], list[Any]]


class ChatRuns:
    """The chat encoder's loop for runs: ``feed`` is the encoder's, which builds a run's
    first chunk the long way."""

    __slots__ = ("feed", "lost_meta", "own", "reasoning_field", "stream")

    def __init__(
        self, stream: ChatStream, feed: Feed, lost_meta: MetaReport, reasoning_field: str | None
    ) -> None:
        self.stream = stream
        self.feed = feed
        self.lost_meta = lost_meta
        self.reasoning_field = reasoning_field
        self.own = stream.own

    def encode(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches.

        Its records differ only in text and obfuscation, and so do their chunks once the
        lane has its role: the first is built the long way, the others are copies of it
        with their own strings."""
        out: list[Any] = []
        feed, roles = self.feed, self.stream.roles
        proto = run.proto
        count = len(run.texts)
        k = 0
        while k < count and run.lane not in roles:  # the lane's first chunk names it
            out += feed(run.batch(k))
            k += 1
        if k == count:
            return out
        first = feed(run.batch(k))
        out += first
        text, obfuscation = run.texts[k], run.obfuscations[k]
        k += 1
        field: str | None = "content"  # where feed() puts the text
        if type(proto) is ir.ReasoningDelta:
            field = self.reasoning_field or proto.source_field or "reasoning_content"
        elif type(proto) is ir.ToolArgsDelta:
            field = None
        copy = _copier(first, field, text, obfuscation)
        if copy is None:
            for j in range(k, count):
                out += feed(run.batch(j))
            return out
        if not self.own:
            for meta in run.shared:
                self.lost_meta(meta, count - k)
        texts, obfuscations = run.texts[k:], run.obfuscations[k:]
        template = PayloadTemplate.of(copy, obfuscation is not None)
        if template is None:
            out += map(copy, texts, obfuscations, repeat(None))
        else:
            out += template.write(texts, obfuscations, copy)
        if field == "content" and not self.own:  # counted as feed() counts it
            said = self.stream.said
            said[run.lane] = said.get(run.lane, 0) + sum(map(len, run.texts[k:]))
        return out


def _copier(
    chunks: list[Any], field: str | None, text: str, obfuscation: str | None
) -> Make | None:
    """How to copy ``chunks`` for a record with other strings, when it is one chunk whose
    one choice's delta has ``text`` as its ``field`` (``None``: as its one tool call's
    arguments) and ``obfuscation`` (when not None) as its own; else ``None``."""
    if len(chunks) != 1 or type(chunks[0]) is not dict:
        return None
    chunk = chunks[0]
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
        return None
    choice = choices[0]
    delta = choice.get("delta")
    if type(delta) is not dict or (
        obfuscation is not None and chunk.get("obfuscation") is not obfuscation
    ):
        return None
    if field is not None:
        if delta.get(field) is not text:
            return None

        def copy(text: str, obfuscation: str | None, number: Any = None) -> dict[str, Any]:
            out = dict(chunk)
            out["choices"] = [{**choice, "delta": {**delta, field: text}}]
            if obfuscation is not None:
                out["obfuscation"] = obfuscation
            return out

        return copy
    calls = delta.get("tool_calls")
    if type(calls) is not list or len(calls) != 1 or type(calls[0]) is not dict:
        return None
    entry = calls[0]
    function = entry.get("function")
    if type(function) is not dict or function.get("arguments") is not text:
        return None

    def copy_call(text: str, obfuscation: str | None, number: Any = None) -> dict[str, Any]:
        call = {**entry, "function": {**function, "arguments": text}}
        out = dict(chunk)
        out["choices"] = [{**choice, "delta": {**delta, "tool_calls": [call]}}]
        if obfuscation is not None:
            out["obfuscation"] = obfuscation
        return out

    return copy_call
