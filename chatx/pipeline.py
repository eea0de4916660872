"""The transcoding pipeline: reader → decoder → (transforms) → encoder → writer.

:class:`Transcoder` is itself sans-IO: ``feed(bytes) -> bytes`` and ``finish() -> bytes``
(``feed_frames``/``finish_frames`` give the same bytes in pieces).
The CLI feeds it whatever a read returned (a whole block from a file, one event from a
live pipe) and writes what comes back at once, so a pipe streams live and a file is
still written in large blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatx import codecs, containers, ir
from chatx.codecs.base import Codec, EncodeOptions
from chatx.codecs.template import DeltaRun
from chatx.containers.lines import MAX_LINE
from chatx.decoding import decode
from chatx.drive import Drive
from chatx.errors import ChatxError, InputError, NotRepresentable, UsageError
from chatx.notes import Note, Notes
from chatx.reading import open_records, read_records
from chatx.record import Record
from chatx.refusals import (
    INPUT,
    as_bytes,
    check_arguments,
    chunks_of,
    missing_choice,
    named_format,
    source_format,
)

# read_records and open_records live in chatx.reading, decode in chatx.decoding; the
# pipeline is where callers have always found them.
__all__ = ["Transcoder", "convert", "decode", "open_records", "read_records"]


class Transcoder:
    """Converts one stream. Feed it bytes as they arrive; it returns output bytes.

    ``src``/``container`` are detected from the input when not given. ``strict`` makes the
    first skipped record, repair or loss an error instead of a note.
    """

    def __init__(
        self,
        dst: str,
        *,
        src: str | None = None,
        container: str | None = None,
        out_container: str | None = None,
        options: EncodeOptions | None = None,
        choice: int | None = None,
        strict: bool = False,
        name: str = INPUT,
        notes: Notes | None = None,
    ) -> None:
        check_arguments(choice, options, notes, name)
        self.dst: Codec = codecs.get(dst)
        self.src: Codec | None = codecs.get(src) if src else None
        self.container = containers.get(container).name if container else None
        self.out_container = out_container
        self.options = options or EncodeOptions()
        self.choice = choice
        self.strict = strict
        self.name = name
        self.notes = notes if notes is not None else Notes()
        self.reader: Any = None
        self.writer: Any = None
        self.decoder: Any = None
        self.encoder: Any = None
        self.head = b""
        self.ignored: list[tuple[int, str]] | None = None
        self.pending: list[Record] = []
        self.checked = 0  # --strict: notes already looked at
        self.drive = Drive(
            self.notes, strict=strict, name=name, check=self._check_strict if strict else None
        )
        self.lanes: set[int] = set()
        self.finished = False
        # --from F: records are held until one of the first is F's (see named_format).
        self.named = src is not None
        self.only_done = True  # every record so far is [DONE] (a warning at the end)

    # -- public ----------------------------------------------------------------------

    def feed(self, chunk: bytes | bytearray | memoryview) -> bytes:
        """Take the next bytes of input; return the output they complete."""
        return b"".join(self.feed_frames(chunk))

    def finish(self) -> bytes:
        """End of input: drain every stage."""
        return b"".join(self.finish_frames())

    def feed_frames(self, chunk: bytes | bytearray | memoryview) -> list[bytes]:
        """:meth:`feed`, the output in pieces to write one after the other: a long
        stream's last events are not joined into one more copy of its text."""
        if self.finished:
            raise ValueError("Transcoder.feed() after finish(): a Transcoder converts one stream")
        if type(chunk) is not bytes:
            chunk = as_bytes(chunk, "Transcoder.feed()")
        if self.error is not None:
            raise self.error
        if self.reader is None:
            self.head += chunk
            if not containers.ready(self.head) and len(self.head) <= MAX_LINE:
                return []
            chunk, self.head = self.head, b""
            self._open_reader(chunk)
        records = self.reader.feed(chunk)
        if self.ignored:
            self._say_ignored()
        return self._records(records)

    def finish_frames(self) -> list[bytes]:
        """:meth:`finish`, the output in pieces (see :meth:`feed_frames`)."""
        if self.finished:
            raise ValueError("Transcoder.finish() called twice: a Transcoder converts one stream")
        self.finished = True
        if self.error is not None:
            raise self.error
        out: list[bytes] = []
        if self.reader is None:
            chunk, self.head = self.head, b""
            self._open_reader(chunk)
            out = self._records(self.reader.feed(chunk))
        records = self.reader.finish()
        if self.ignored:
            self._say_ignored()
        out += self._records(records)
        if self.decoder is None:
            if not self.pending:
                raise InputError(
                    "no records in the input", file=self.name, line=1, expected="at least one event"
                )
            if self.named:  # True, or an InputError
                named_format(self.src, self.pending, self.name, final=True)  # type: ignore[arg-type]
            self._open_codecs()
            records, self.pending = self.pending, []
            out += self._process(records)
        if self.error is not None:  # --strict stopped in the last records
            raise self.error
        out += self._encode(self._select(self.decoder.finish()))
        self._check_ending()
        payloads = self.encoder.finish()
        if self.strict:
            self._check_strict()
        if payloads:
            out += self.writer.frames(payloads)
        out.append(self.writer.finish())
        return out

    @property
    def source_format(self) -> str | None:
        return self.src.name if self.src else None

    @property
    def skipped(self) -> int:
        """Records skipped so far (never under ``strict``: the first one is an error)."""
        return self.drive.skipped

    @property
    def error(self) -> ChatxError | None:
        """--strict (or a choice the stream ended without): raised by the next feed() or
        finish(), once the output of what came before is returned."""
        return self.drive.error

    @error.setter
    def error(self, error: ChatxError | None) -> None:
        self.drive.error = error

    # -- stages ----------------------------------------------------------------------

    def _open_reader(self, head: bytes) -> None:
        name = self.container or containers.detect(head[: containers.sniffed(head)])
        self.container = name
        self.reader = containers.get(name).reader()
        # The SSE reader lists the lines the spec ignores; the list is shared, not copied.
        self.ignored = getattr(self.reader, "ignored", None)

    def _say_ignored(self) -> None:
        """A warning per input line the reader ignored: nothing is dropped unsaid."""
        for line, why in self.ignored:
            self.notes.add("warning", why, line)
        self.ignored.clear()

    def _open_codecs(self) -> None:
        if self.src is None:
            self.src = source_format(self.pending, self.name, final=True)
        out_container = self.out_container or self.dst.container
        if out_container == "sse":
            self.writer = containers.get("sse").writer(self.dst.sse_event_names)
        else:
            self.writer = containers.get(out_container).writer()
        self.out_container = out_container
        self.decoder = self.src.decoder(self.notes)
        if self.src.reads_raw and hasattr(self.reader, "raw"):
            self.reader.raw = True
        options = self.options
        if options.source_format != self.src.name:
            options = EncodeOptions(
                options.reasoning,
                options.reasoning_field,
                options.request,
                options.finish,
                self.src.name,
            )
        self.encoder = self.dst.encoder(self.notes, options)

    def _records(self, records: list[Record]) -> list[bytes]:
        if not records:
            return []
        if self.only_done:
            self.only_done = all(record.done for record in records)
        if self.decoder is None:
            self.pending.extend(records)
            # The format is decided on the records alone, never on how many one read
            # brought: a record that names it decides at once, else the first four.
            if self.src is None:
                self.src = source_format(self.pending, self.name, final=False)
                if self.src is None:
                    return []
            elif self.named:
                if not named_format(self.src, self.pending, self.name, final=False):
                    return []
                self.named = False
            self._open_codecs()
            records, self.pending = self.pending, []
        return self._process(records)

    def _check_ending(self) -> None:
        """At the end of the input: a choice asked for that never came is an error, input
        of nothing but ``[DONE]`` a warning."""
        if self.choice is not None:
            error = missing_choice(self.choice, self.lanes, self.name)
            if error is not None:
                raise error
        if self.only_done:
            self.notes.add("warning", "the input holds only data: [DONE]: no events", 1)

    def _process(self, records: list[Record]) -> list[bytes]:
        # Records the decoder knows by their bytes reach the encoder as one DeltaRun;
        # --choice renumbers lanes event by event, so it takes them one at a time.
        known = getattr(self.decoder, "known", None)
        runs = known.run if known is not None and self.choice is None else None
        payloads = self.drive.run(records, self._feed, [], runs, self._feed_run)
        return self.writer.frames(payloads) if payloads else []

    def _feed(self, record: Record, out: list[Any]) -> None:
        events = self.decoder.feed(record)
        if events:
            if type(events) is ir.Batches:  # a whole object: its stream's records
                out.extend(self._batches(events))
            # Without --choice, a one-lane target only needs to see each lane's LaneStart.
            elif self.choice is None and ir.LaneStart not in map(type, events):
                out.extend(self.encoder.feed(events))
            else:
                out.extend(self.encoder.feed(self._select(events)))

    def _feed_run(self, run: DeltaRun, out: list[Any]) -> None:
        out.extend(self.encoder.feed_run(run))
        self.notes.line = run.lines[-1]  # what comes next follows the run's last

    def _batches(self, batches: ir.Batches) -> list[Any]:
        """The payloads of the batches one record stands for (a non-streaming object)."""
        out: list[Any] = []
        for batch in batches:
            out.extend(self.encoder.feed(self._select(batch)))
        return out

    def _encode(self, events: list[ir.Event]) -> list[bytes]:
        if not events:
            return []
        payloads = self.encoder.feed(events)
        return self.writer.frames(payloads) if payloads else []

    def _check_strict(self) -> None:
        """--strict: the first repair or loss noted since the last check is an error."""
        items = self.notes.items
        for note in items[self.checked :]:
            if note.kind in ("lost", "repaired"):
                self._not_representable(note)
        self.checked = len(items)
        if self.notes.lost_fields:
            self._not_representable(self.notes.summary()[len(items)])

    def _not_representable(self, note: Note) -> None:
        where = f"{self.name}:{note.line}" if note.line else self.name
        raise NotRepresentable(f"{where}: {note.kind}: {note.message}")

    def _select(self, events: list[ir.Event]) -> list[ir.Event]:
        """Keep one choice (``--choice N``, renumbered 0) or refuse a second one."""
        if self.choice is None:
            if self.dst.single_lane:
                for event in events:
                    # Every lane opens with LaneStart (decoders say so before anything else
                    # of the lane), so only those need a look.
                    if type(event) is ir.LaneStart and event.lane not in self.lanes:
                        self.lanes.add(event.lane)
                        if len(self.lanes) > 1:
                            raise UsageError(
                                f"{self.name}: the stream has several choices and "
                                f"{self.dst.name} holds one: pass --choice N"
                            )
            return events
        kept = []
        for event in events:
            kind = type(event)
            if kind is ir.LaneStart:
                self.lanes.add(event.lane)  # type: ignore[union-attr]
            elif kind is ir.StreamEnd and self.choice not in self.lanes:
                # The stream ends without the choice: no clean ending is written for
                # it, and the next feed() or finish() raises (what came before is out).
                self.error = missing_choice(self.choice, self.lanes, self.name)
                if self.error is not None:
                    break
            lane = getattr(event, "lane", None)
            if lane is None:
                kept.append(event)
            elif lane == self.choice:
                event.lane = 0  # type: ignore[union-attr]
                kept.append(event)
        return kept


def convert(
    data: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    dst: str,
    src: str | None = None,
    container: str | None = None,
    out_container: str | None = None,
    options: EncodeOptions | None = None,
    choice: int | None = None,
    strict: bool = False,
    notes: Notes | None = None,
) -> bytes:
    """Convert a whole stream held in memory (or an iterable of byte chunks); return bytes.

    >>> chatx.convert(open("capture.sse", "rb").read(), dst="responses-event")
    """
    transcoder = Transcoder(
        dst,
        src=src,
        container=container,
        out_container=out_container,
        options=options,
        choice=choice,
        strict=strict,
        notes=notes,
    )
    out = [transcoder.feed(chunk) for chunk in chunks_of(data, "convert()")]
    out.append(transcoder.finish())
    return b"".join(out)
