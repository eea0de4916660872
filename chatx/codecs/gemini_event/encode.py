"""Encode IR events as Gemini ``streamGenerateContent`` chunks.

One batch becomes at most one chunk. From a Gemini source, each chunk is rebuilt from
its events and the residue its ``Meta`` events carry (:mod:`.decode`), and the finish,
usage and end the decoder adds at the end of input write nothing: the chunks said them.
From another format, each batch's text, thoughts and calls become the parts of its
candidates (one per lane), a finish the candidate's ``finishReason``, and the usage
goes on the chunk that finishes the last candidate; what Gemini has no place for is
reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatx import ir
from chatx.codecs.as_input import AsInput
from chatx.codecs.base import EncodeOptions
from chatx.codecs.byte_template import Kept
from chatx.codecs.cited import without_cited_parts
from chatx.codecs.template import DeltaRun
from chatx.notes import Notes
from chatx.residue import MetaReport, merge, passthrough_lost, report

from . import records as r
from .ending import Ending
from .grounding_write import GroundingWriter
from .parts import Parts
from .written import GeminiBatch, GeminiWritten


class _Chunk:
    """Another format's chunk of one text (or thought) part in ``lane``, as ``feed``
    writes it: a :data:`~chatx.codecs.byte_template.Make`."""

    __slots__ = ("lane", "part", "written")

    def __init__(self, written: GeminiWritten, lane: int, thought: bool) -> None:
        self.written = written
        self.lane = lane
        self.part = r.thought_part if thought else r.text_part

    def __call__(self, text: str, obfuscation: Any = None, number: Any = None) -> dict[str, Any]:
        return self.written.chunk([r.candidate(self.lane, [self.part(text)], None)])


class GeminiEncoder:
    """Incremental encoder: ``feed(batch)`` returns zero or one chunk (or an error
    object). Its parts share the :class:`~.written.GeminiWritten`: ``parts`` writes each
    candidate's parts, ``ending`` finishes, usage and errors, ``grounding`` another
    format's citations and web searches. ``handlers`` is the table
    from an event's type to the method that writes it into the :class:`~.written.GeminiBatch`."""

    def __init__(self, notes: Notes, options: EncodeOptions) -> None:
        self.notes = notes
        self.options = options
        self.own = own = options.source_format == r.NAME
        self.written = written = GeminiWritten(own)
        self.parts = Parts(written, notes)
        self.ending = Ending(written, notes)
        self.grounding = GroundingWriter(notes)
        self.lost_meta = MetaReport(notes)
        self.ended = False
        # A Gemini source's runs, written as their input bytes where feed would write them.
        self.inputs = AsInput(notes, self.feed, self._as_input)
        # Another format's plain runs: the byte template of their chunks, kept while the
        # lane, the part's kind and the response's fields stay the same.
        self.kept = Kept()
        self.handlers: dict[type, Callable[[Any, GeminiBatch], None]] = {
            ir.TextDelta: self._text,
            ir.ReasoningDelta: self._reasoning,
            ir.ToolArgsDelta: self._args,
            ir.Meta: self._meta,
            ir.ItemStart: self._item_start,
            ir.ItemEnd: self._item_end,
            ir.LaneStart: self._lane_start,
            ir.Usage: self._usage,
            ir.Finish: self._finish,
            ir.Error: self._error,
            ir.RefusalDelta: self._refusal,
            ir.Passthrough: self._passthrough,
            ir.StreamStart: self._start,
            ir.StreamEnd: self._end,
        }

    def feed_run(self, run: DeltaRun) -> list[Any]:
        """Encode a :class:`~chatx.codecs.template.DeltaRun`: what ``feed`` makes of its
        batches. Another format's plain run is written in one loop: a chunk of one
        candidate with one part per text, from a byte template of it (a call's
        fragments, which write nothing until the call is whole, are kept); a Gemini source's run is written as its input
        bytes where they are what ``feed`` writes (:class:`.as_input.AsInput`); anything else
        replays the batches."""
        if self.own:
            return self.inputs.write(run)
        if not self._plain_run(run):
            return run.replay(self.feed, self.notes)
        for meta in run.shared:
            self.lost_meta(meta, len(run.texts))
        lane, proto, written = run.lane, run.proto, self.written
        if type(proto) is ir.ToolArgsDelta:
            written.calls[(lane, proto.call)].fragments.extend(run.texts)
            return []
        written.lanes.add(lane)
        written.shown.add(lane)
        if type(proto) is ir.TextDelta:
            self.grounding.texts(lane, run.texts)  # what citations' spans count
        thought = type(proto) is ir.ReasoningDelta
        key = (lane, thought, written.id, written.model, written.create)
        return self.kept.records(key, _Chunk(written, lane, thought), run.texts)

    def _as_input(self, run: DeltaRun) -> tuple[Any, ...] | None:
        """What a chunk written of a Gemini source's run depends on (see :class:`AsInput`):
        the response's fields. A signature waiting in the lane would change the first
        record's chunk alone: then the run is replayed."""
        written = self.written
        if run.lane in written.signatures:
            return None
        return (written.id, written.model, written.create)

    def _plain_run(self, run: DeltaRun) -> bool:
        """Whether each record of ``run`` is what :meth:`feed` writes as one chunk of its
        text alone (or keeps as a held call's fragment): another format's, no residue of
        its own, nothing held in the lane (a call to write first, a signature for the
        next part, a finishing chunk waiting for usage), no error said."""
        written, proto, lane = self.written, run.proto, run.lane
        if self.own or written.failed or written.held is not None or proto.extra:
            return False
        if type(proto) is ir.ToolArgsDelta:
            return (lane, proto.call) in written.calls
        if getattr(proto, "logprobs", None) or lane in written.signatures:
            return False
        return all(held != lane for held, _ in written.calls)

    def feed(self, events: list[ir.Event]) -> list[Any]:
        batch = GeminiBatch()
        handlers = self.handlers
        for event in events:
            handlers[type(event)](event, batch)
        if self.own:
            if batch.record:
                chunk = self.written.chunk(batch.closed)
                if batch.top:
                    merge(chunk, batch.top)
                batch.out.append(chunk)
        else:
            self.ending.close(batch, self._chunk(batch))
        return batch.out

    def _chunk(self, batch: GeminiBatch) -> dict[str, Any] | None:
        """The chunk of another format's batch, or None when it says nothing."""
        lanes = sorted(batch.parts.keys() | batch.finish.keys())
        candidates = [
            r.candidate(lane, batch.parts.get(lane, []), batch.finish.get(lane)) for lane in lanes
        ]
        for candidate in candidates:
            if "finishReason" in candidate:
                grounding = self.grounding.metadata(candidate["index"])
                if grounding is not None:
                    candidate["groundingMetadata"] = grounding
        if not candidates and batch.usage is None:
            return None
        chunk = self.written.chunk(candidates)
        if batch.usage is not None:
            chunk["usageMetadata"] = batch.usage
        return chunk

    def finish(self) -> list[Any]:
        """End of input: the calls and the finishing chunk still held; an ending where
        the input had none only when asked (``--finish``)."""
        batch = GeminiBatch()
        written = self.written
        if self.own:
            if self.options.finish and not self.ended and not written.failed:
                unfinished = sorted(written.lanes - written.finished)
                candidates = [r.candidate(lane, [], "STOP") for lane in unfinished]
                if candidates:
                    batch.out.append(written.chunk(candidates))
        else:
            self.parts.flush_all(batch)
            self._unshown(batch)
            if self.options.finish and not self.ended and not written.failed:
                for lane in sorted(written.lanes - written.finished):
                    self.parts.lone_signature(batch, lane)
                    batch.finish[lane] = "STOP"
                    written.finished.add(lane)
            self.ending.close(batch, self._chunk(batch))
            self.ending.release(batch.out)
            self.grounding.left()
        return batch.out

    # -- the stream -----------------------------------------------------------------

    def _start(self, event: ir.StreamStart, batch: GeminiBatch) -> None:
        if not self.own:
            self.parts.flush_all(batch)
            self.ending.release(batch.out)
            if event.extra:
                report(event.extra, self.notes, "response.")
            self.grounding.restart()
        create = event.extra.get("createTime") if self.own else None
        self.written.restart(event.id, event.model, create)
        self.ended = False

    def _end(self, event: ir.StreamEnd, batch: GeminiBatch) -> None:
        self.ended = True
        if self.own:
            return
        self.parts.flush_all(batch)
        self._unshown(batch)
        written = self.written
        if not written.failed:
            for lane in sorted(written.lanes - written.finished):
                # The source ended its stream with this choice unfinished (Snowflake):
                # Gemini's candidate ends with a finishReason all the same.
                self.notes.repaired(f"candidate {lane} ended without a finish: STOP written")
                self.parts.lone_signature(batch, lane)
                batch.finish[lane] = "STOP"
                written.finished.add(lane)
        if event.extra:
            report(event.extra, self.notes, "response.")
        if self.written.usage is not None and self.written.held is None:
            batch.usage, self.written.usage = self.written.usage, None
        self.ending.release(batch.out)

    def _unshown(self, batch: GeminiBatch) -> None:
        """A candidate that said nothing is written all the same, empty, at the end."""
        if self.written.failed:
            return
        for lane in self.written.lanes - self.written.shown:
            batch.lane_parts(lane)

    def _lane_start(self, event: ir.LaneStart, batch: GeminiBatch) -> None:
        self.written.lanes.add(event.lane)

    # -- content --------------------------------------------------------------------

    def _text(self, event: ir.TextDelta, batch: GeminiBatch) -> None:
        if self._part_text(event, batch, thought=False):
            self.grounding.text(event.lane, event.text)
            self._said(event.extra, event.logprobs, "delta.")

    def _reasoning(self, event: ir.ReasoningDelta, batch: GeminiBatch) -> None:
        if self._part_text(event, batch, thought=True):
            self._said(event.extra, None, "reasoning.")

    def _part_text(
        self, event: ir.TextDelta | ir.ReasoningDelta, batch: GeminiBatch, thought: bool
    ) -> bool:
        """A text or thought into its candidate's parts; False for a Gemini source's own
        part, written as it came with its fields, True for another format's, whose other
        fields the caller says."""
        lane = event.lane
        if self.own:
            part = r.thought_part(event.text) if thought else r.text_part(event.text)
            merge(self.parts.add(batch, lane, part), event.extra)
            return False
        self.written.lanes.add(lane)
        self.parts.flush(batch, lane)
        self.parts.text(batch, lane, event.text, thought=thought)
        return True

    def _refusal(self, event: ir.RefusalDelta, batch: GeminiBatch) -> None:
        # Gemini has no refusal: its text is the answer's, and that it was one is lost.
        if "refusal" not in self.written.said:
            self.written.said.add("refusal")
            self.notes.lost("a refusal has no place in Gemini: written as text")
        self.written.lanes.add(event.lane)
        self.parts.flush(batch, event.lane)
        self.parts.text(batch, event.lane, event.text, thought=False)
        self.grounding.text(event.lane, event.text)
        self._said(event.extra, event.logprobs, "delta.")

    def _said(self, extra: dict[str, Any], logprobs: list[Any] | None, prefix: str) -> None:
        if extra:
            report(extra, self.notes, prefix)
        if logprobs:
            self.notes.lost_field("logprobs")

    def _item_start(self, event: ir.ItemStart, batch: GeminiBatch) -> None:
        if event.kind == "tool_call":
            self.written.lanes.add(event.lane)
            if not self.own:
                self.parts.flush(batch, event.lane)
            self.parts.call_start(batch, event)
            return
        if self.own:
            return
        if event.kind == "message":
            self.grounding.item_start(event.lane)
        if event.extra:
            report(event.extra, self.notes, "item.")

    def _args(self, event: ir.ToolArgsDelta, batch: GeminiBatch) -> None:
        self.parts.args(event)

    def _item_end(self, event: ir.ItemEnd, batch: GeminiBatch) -> None:
        extra = event.extra
        if event.kind == "tool_call":
            self.parts.call_end(batch, event)
        elif event.kind == "reasoning":
            self.parts.signature(batch, event)
        elif not self.own and self.grounding.item_end(event.lane):
            extra = without_cited_parts(extra)  # its parts repeat what its citations said
        if extra and not self.own:
            report(extra, self.notes, "item.")

    def _passthrough(self, event: ir.Passthrough, batch: GeminiBatch) -> None:
        data = event.data
        if event.format == r.NAME and isinstance(data, dict):
            if "part" in data and (self.own or isinstance(data.get("lane"), int)):
                self.parts.add(batch, data["lane"], dict(data["part"]))
            return  # a search its grounding says: the chunk's residue writes it back
        if self._meant(event.meaning):
            return
        passthrough_lost(event, self.notes, "Gemini")

    # -- residue, the end of a candidate --------------------------------------------

    def _meant(self, meaning: ir.Citation | ir.WebSearch | None) -> bool:
        """Another format's citation or web search step, written where Gemini has a
        place for it; False for the caller to report."""
        if type(meaning) is ir.Citation:
            return self.grounding.cite(None, meaning)
        if type(meaning) is ir.WebSearch:
            return self.grounding.search(meaning)
        return False

    def _meta(self, event: ir.Meta, batch: GeminiBatch) -> None:
        if not self.own:
            cite = event.meaning
            if cite is None or not self.grounding.cite(event.lane, cite):
                self.lost_meta(event)
            return
        if event.meaning is not None:
            return  # a citation its candidate's residue writes back
        lane = event.lane
        if lane is None:
            batch.record = True
            batch.top = event.extra
            return
        self.parts.lone_signature(batch, lane)
        candidate = r.candidate(lane, batch.parts.pop(lane, []), None)
        if event.extra:
            merge(candidate, event.extra)
        batch.closed.append(candidate)

    def _finish(self, event: ir.Finish, batch: GeminiBatch) -> None:
        if self.own:
            self.written.finished.add(event.lane)  # its chunks said it
            return
        if self.written.failed:
            return  # after an error: the error object ended the stream
        self.written.lanes.add(event.lane)
        self.parts.flush(batch, event.lane)
        self.parts.lone_signature(batch, event.lane)
        self.ending.finish(batch, event)

    def _usage(self, event: ir.Usage, batch: GeminiBatch) -> None:
        if self.written.failed and not self.own:
            self.notes.lost("usage after an error has no place in Gemini")
        elif not self.own:
            self.ending.usage(batch, event)

    def _error(self, event: ir.Error, batch: GeminiBatch) -> None:
        if self.own:
            error = {"error": r.error_object(event.code, event.message, event.type)}
            if event.extra:
                merge(error, event.extra)
            batch.out.append(error)
            return
        self.parts.flush_all(batch)
        self.ending.error(batch, event)
