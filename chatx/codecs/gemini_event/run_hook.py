"""The Gemini run hook: a long stream is mostly chunks of one candidate with one text (or
thought) part, the same but for that text (:class:`~chatx.codecs.template.DeltaTemplate`).

Such a chunk decodes to the part's delta, then its candidate's ``Meta`` and the chunk's
(:mod:`.decode`): the run's ``after`` and ``tail``, shared by its records as the bytes
around the text are. Usage, cumulative on every chunk of most Developer API streams,
differs from chunk to chunk, so those chunks never match a template and are parsed: the
speed path is for streams that say usage once (Vertex's, chatx's own).

The decoder holds each candidate's answer text for the spans of its citations
(:mod:`.grounding_read`): the hook hands it the text of a run of answer text, as the decoder
would have held each record's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatx import ir
from chatx.codecs.byte_template import TEXT
from chatx.codecs.gemini_event.decode import GeminiDecoder
from chatx.codecs.gemini_event.read import GeminiRead
from chatx.codecs.template import Delta, DeltaHook, DeltaRun, DeltaTemplate, parsed
from chatx.record import Record

_DELTAS = (ir.TextDelta, ir.ReasoningDelta)


class GeminiRunHook:
    """A :class:`~chatx.codecs.template.DeltaHook` (``hook``) that hands the answer text
    of each run to the candidate's held text in ``read``, the response the decoder
    reads."""

    __slots__ = ("hook", "read")

    parse = staticmethod(parsed)

    def __init__(self, hook: DeltaHook, read: GeminiRead) -> None:
        self.hook = hook
        self.read = read

    def run(self, records: Sequence[Record], start: int) -> DeltaRun | None:
        run = self.hook.run(records, start)
        if run is not None and type(run.proto) is ir.TextDelta:
            state = self.read.lanes.get(run.proto.lane)
            if state is not None:
                state.spans.texts.extend(run.texts)
        return run

    def decode(self, record: Record, raw: bool) -> list[ir.Event]:
        return self.hook.decode(record, raw)

    @property
    def template(self) -> DeltaTemplate | None:
        """The inner hook's template of the moment."""
        return self.hook.template

    @property
    def used(self) -> int:
        """How many records the inner hook's templates knew."""
        return self.hook.used


def run_hook(decoder: GeminiDecoder) -> GeminiRunHook:
    """The Gemini :class:`~chatx.codecs.template.RunHook`, made with the decoder. The
    template stands for more text of the part open when it was made: any record decoded
    drops it, and a chunk of one plain text part makes the next. A run moves the
    decoder's ``line`` to its last record."""
    read = decoder.read
    # Its runs keep their records' bytes: the Gemini encoder writes a Gemini source's
    # run as it came where those bytes are what it would write (encode.py).
    hook = DeltaHook(decoder.feed, decoder.notes, read, _plain, _template, raws=True)
    return GeminiRunHook(hook, read)


def _plain(out: list[ir.Event], quiet: bool) -> bool:
    """Whether ``out`` is one delta with no residue of its own, then its candidate's
    residue and the chunk's, said without a note: the item was open already, the lane
    had started, no signature closed anything."""
    if len(out) != 3 or not quiet:
        return False
    delta, candidate, chunk = out
    return (
        type(delta) in _DELTAS
        and not delta.extra  # type: ignore[union-attr]
        and type(candidate) is ir.Meta
        and candidate.lane == delta.lane  # type: ignore[union-attr]
        and type(chunk) is ir.Meta
        and chunk.lane is None
    )


def _template(data: Any, out: list[ir.Event]) -> DeltaTemplate | None:
    """The template of ``data``, a chunk of one candidate with one text part, which the
    decoder read into ``out`` (see :func:`_plain`)."""
    candidates = data.get("candidates") if type(data) is dict else None
    if type(candidates) is not list or len(candidates) != 1:
        return None
    candidate = candidates[0]
    content = candidate.get("content") if type(candidate) is dict else None
    if type(content) is not dict:
        return None
    parts = content.get("parts")
    if type(parts) is not list or len(parts) != 1 or type(parts[0]) is not dict:
        return None
    part = parts[0]
    if type(part.get("text")) is not str:
        return None
    content = {**content, "parts": [{**part, "text": TEXT}]}
    payload = {**data, "candidates": [{**candidate, "content": content}]}
    delta: Delta = out[0]  # type: ignore[assignment]  # _plain said so
    return DeltaTemplate.make(payload, delta, None, out[1], tail=out[2])  # type: ignore[arg-type]
