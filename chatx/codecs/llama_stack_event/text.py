"""Text in the Llama Stack encoder: text deltas as progress records, and the Llama
special tokens in chat text read as Llama Stack's own OpenAI-compat layer reads them.

``<|eot_id|>`` and ``<|eom_id|>`` set the stop reason, ``<|python_tag|>`` opens a
built-in tool call that runs to the end of the message; none of them reaches the text,
even when a delta boundary splits one.

Another format's run whose texts the scanner would let through whole (:meth:`Text.plain`)
is written from a byte template (:class:`~chatx.codecs.byte_template.Kept`), byte for byte the records the scan
writes: a Llama Stack record says nothing of its stream but its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatx import ir
from chatx.codecs.base import refusal_as_text
from chatx.codecs.byte_template import Kept
from chatx.notes import Notes
from chatx.residue import report

from . import records as r
from .generation import LS, Generation, patch
from .special_tokens import PYTHON_TAG, TOKEN_STOP, parse_tool_call


@dataclass(slots=True, eq=False)
class Text:
    """Writes the generation's text: its deltas (a refusal's too), the special tokens
    another format's text holds, and the built-in call a ``<|python_tag|>`` opens."""

    generation: Generation
    notes: Notes
    # The byte template of a run's text deltas, made once enough of them went by.
    kept: Kept = field(default_factory=Kept)

    def text(self, event: ir.TextDelta, out: list[Any]) -> None:
        g = self.generation
        if not g.lane_ok(event.lane):
            return
        if event.obfuscation is not None:
            self.notes.lost_field("obfuscation")
        if not self.generation.own:
            if event.extra:
                report(event.extra, self.notes, "delta.")
            self.scan(event.text, event.logprobs, out)
            return
        ls = event.extra.get(LS, {})
        own = event.own
        if own is r.IN_PROGRESS:
            g.raw.append(event.text)
            out.append(r.event("progress", r.tool_delta("in_progress", event.text)))
        elif type(own) is r.LlamaStackOwn and own.held == "failed":
            g.record_stop(own)
            out.append(r.event("progress", r.tool_delta("failed", event.text), None, g.stop_word()))
        else:
            out.append(
                r.event("progress", r.text_delta(event.text), r.logprobs_from_ir(event.logprobs))
            )
        patch(out, ls)

    def refusal(self, event: ir.RefusalDelta, out: list[Any]) -> None:
        g = self.generation
        if not refusal_as_text(g, event.lane, "Llama Stack events have no refusal"):
            return
        self.flush(out)
        g.logprobs = event.logprobs
        self.write(event.text, out)

    def scan(self, text: str, logprobs: list[Any] | None, out: list[Any]) -> None:
        """Chat text through the special-token scanner."""
        g = self.generation
        if logprobs:
            g.logprobs = (g.logprobs or []) + logprobs
        for kind, piece in g.scanner.feed(text):
            if kind == "text":
                self.write(piece, out)
            elif piece == PYTHON_TAG:
                if g.python is None:  # a second tag inside a call says nothing new
                    g.python = []
                    out.append(r.event("progress", r.tool_delta("started", "")))
            else:
                g.token_stop = TOKEN_STOP[piece]
                self._close_python(out)

    def plain(self, texts: list[str]) -> bool:
        """Whether the scanner lets each of ``texts`` through whole as a text delta of
        its own (an empty one says nothing): it holds nothing, no python-tag call is
        open, no logprobs wait for the next text, and no text has a ``<``, where every
        token starts (so none starts or ends in them either)."""
        g = self.generation
        return (
            g.python is None
            and not g.scanner.tail
            and g.logprobs is None
            and "<" not in "".join(texts)
        )

    def deltas(self, texts: list[str]) -> list[Any]:
        """The text deltas the scan writes of a :meth:`plain` run's ``texts``."""
        if "" in texts:
            texts = [text for text in texts if text]
        return self.kept.records((), text_record, texts)

    def write(self, text: str, out: list[Any]) -> None:
        """Text the scanner let through: a text delta, or the python-tag call's."""
        g = self.generation
        logprobs, g.logprobs = r.logprobs_from_ir(g.logprobs), None
        if g.python is None:
            out.append(r.event("progress", r.text_delta(text), logprobs))
        else:
            g.python.append(text)
            out.append(r.event("progress", r.tool_delta("in_progress", text), logprobs))

    def _close_python(self, out: list[Any]) -> None:
        """The ``<|python_tag|>`` call is complete: parse it as Llama Stack would."""
        g = self.generation
        if g.python is None:
            return
        raw = "".join(g.python)
        g.python = None
        parsed = parse_tool_call(raw)
        if parsed is None:
            out.append(r.event("progress", r.tool_delta("failed", raw), None, g.stop_word()))
            return
        name, arguments = parsed
        call = r.tool_call(r.call_id(g.id, g.count), name, r.dumps(arguments))
        g.count += 1
        out.append(r.event("progress", r.tool_delta("succeeded", call), None, g.stop_word()))

    def flush(self, out: list[Any]) -> None:
        """Text held by the scanner, and a python-tag call, end with the message."""
        if self.generation.own:
            return
        tail = self.generation.scanner.flush()
        if tail:
            self.write(tail, out)
        self._close_python(out)


def text_record(text: str, obfuscation: Any = None, number: Any = None) -> dict[str, Any]:
    """A run's text delta (a :data:`~chatx.codecs.byte_template.Make`)."""
    return r.event("progress", r.text_delta(text))


def args_record(text: str, obfuscation: Any = None, number: Any = None) -> dict[str, Any]:
    """A run's tool-call arguments fragment (a :data:`~chatx.codecs.byte_template.Make`)."""
    return r.event("progress", r.tool_delta("in_progress", text))
