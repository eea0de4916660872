"""The transcoding pipeline: reader → decoder → (choice) → encoder → writer.

:class:`Transcoder` is itself sans-IO: ``feed(bytes) -> bytes`` and ``finish() -> bytes``
(``feed_frames``/``finish_frames`` give the same bytes in pieces).
The CLI feeds it whatever a read returned (a whole block from a file, one event from a
live pipe) and writes what comes back at once, so a pipe streams live and a file is
still written in large blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, cast

from chatx import codecs, containers, ir
from chatx.arguments import (
    INPUT,
    as_bytes,
    check_arguments,
    chunks_of,
    missing_choice,
    named_format,
    source_format,
)
from chatx.choice import Lanes
from chatx.codecs.base import Codec, Decoder, EncodeOptions, Encoder, open_decoder
from chatx.codecs.template import DeltaRun, RunDecoder
from chatx.drive import Drive
from chatx.errors import ChatxError, InputError
from chatx.notes import Notes
from chatx.record import Record

if TYPE_CHECKING:  # the contract, for the type checker: nothing here asks it at run time
    from chatx.containers.base import RawReader, Reader, Writer

__all__ = ["Transcoder", "convert"]


class Conversion:
    """Records to payloads once both formats are known: the decoder, the lanes that go
    on (:class:`~chatx.choice.Lanes`) and the encoder, fed by the one loop
    (:class:`~chatx.drive.Drive`), lenient or strict. A codec that finds runs has its
    decoder wrapped (:class:`~chatx.codecs.template.RunDecoder`): its runs reach the
    encoder whole, ``--choice`` or not."""

    __slots__ = ("decoder", "drive", "encoder", "find_run", "lanes", "notes", "whole")

    def __init__(self, decoder: Decoder, encoder: Encoder, lanes: Lanes, drive: Drive) -> None:
        self.decoder = decoder
        self.encoder = encoder
        self.lanes = lanes
        self.drive = drive
        self.notes = drive.notes
        self.find_run = decoder.run if isinstance(decoder, RunDecoder) else None
        # Without --choice and for a target of many lanes, every event goes on as it is.
        self.whole = lanes.choice is None and not lanes.target.single_lane

    def payloads(self, records: Sequence[Record]) -> list[Any]:
        return self.drive.run(records, self._feed, [], self.find_run, self._feed_run)

    def finish(self) -> list[Any]:
        """The payloads of what the decoder still held at the end of input."""
        events = self.decoder.finish()
        return self.encoder.feed(self.lanes.select(events)) if events else []

    def _feed(self, record: Record, out: list[Any]) -> None:
        events = self.decoder.feed(record)
        if events:
            if type(events) is ir.Batches:  # a whole object: its stream's records
                for batch in events:
                    out.extend(self.encoder.feed(self.lanes.select(batch)))
            # Without --choice, a one-lane target only needs to see each lane's LaneStart.
            elif self.whole or (
                self.lanes.choice is None and ir.LaneStart not in map(type, events)
            ):
                out.extend(self.encoder.feed(events))
            else:
                out.extend(self.encoder.feed(self.lanes.select(events)))

    def _feed_run(self, run: DeltaRun, out: list[Any]) -> None:
        chosen = self.lanes.select_run(run)
        if chosen is not None:
            out.extend(self.encoder.feed_run(chosen))
        elif batch := run.laneless:
            # Another lane's run: each record's own residue (no lane's) still goes on.
            for line in run.lines:
                self.notes.line = line
                out.extend(self.encoder.feed(batch))
        self.notes.line = run.lines[-1]  # what comes next follows the run's last


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
        self.reader: Reader | None = None
        self.writer: Writer | None = None
        self.conversion: Conversion | None = None  # once the source format is known
        self.head = containers.Head()
        self.ignored: list[tuple[int, str]] | None = None
        self.pending: list[Record] = []
        self.drive = Drive(self.notes, strict=strict, name=name)
        self.lanes = Lanes(choice, self.dst, name, self.drive)
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
        data = chunk if type(chunk) is bytes else as_bytes(chunk, "Transcoder.feed()")
        if self.error is not None:
            raise self.error
        reader = self.reader
        if reader is None:
            if not self.head.add(data):
                return []
            data = self.head.take()
            reader = self._open_reader(data)
            records: Sequence[Record] = [
                record for piece in containers.pieces(data) for record in reader.feed(piece)
            ]
        else:
            records = reader.feed(data)
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
        reader = self.reader
        if reader is None:
            data = self.head.take()
            reader = self._open_reader(data)
            out = self._records(
                [record for piece in containers.pieces(data) for record in reader.feed(piece)]
            )
        records = reader.finish()
        if self.ignored:
            self._say_ignored()
        out += self._records(records)
        conversion = self.conversion
        if conversion is None:
            conversion = self._open_late()
            records, self.pending = self.pending, []
            out += self._frames(conversion.payloads(records))
        if self.error is not None:  # --strict stopped in the last records
            raise self.error
        out += self._frames(conversion.finish())
        self._check_ending()
        payloads = conversion.encoder.finish()
        self.drive.check()
        return out + self._frames(payloads) + [self._writer().finish()]

    @property
    def source_format(self) -> str | None:
        return self.src.name if self.src else None

    @property
    def decoder(self) -> Decoder | None:
        return self.conversion.decoder if self.conversion is not None else None

    @property
    def encoder(self) -> Encoder | None:
        return self.conversion.encoder if self.conversion is not None else None

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

    def _open_reader(self, head: bytes) -> Reader:
        name = self.container or containers.detect(head[: containers.sniffed(head)])
        self.container = name
        reader: Reader = containers.get(name).reader()
        self.reader = reader
        # The SSE reader lists the lines the spec ignores; the list is shared, not copied.
        self.ignored = getattr(reader, "ignored", None)
        return reader

    def _say_ignored(self) -> None:
        """A warning per input line the reader ignored: nothing is dropped unsaid."""
        ignored = self.ignored or []
        for line, why in ignored:
            self.notes.add("warning", why, line)
        ignored.clear()

    def _open_codecs(self, src: Codec) -> Conversion:
        out_container = self.out_container or self.dst.container
        if out_container == "sse":
            self.writer = containers.get("sse").writer(self.dst.sse_event_names)
        else:
            self.writer = containers.get(out_container).writer()
        self.out_container = out_container
        # A RawReader (the Protocol's isinstance is slow, and would load it at start-up)
        if src.run_hook is not None and hasattr(self.reader, "raw"):
            cast("RawReader", self.reader).raw = True
        options = self.options
        if options.source_format != src.name:
            options = EncodeOptions(
                options.reasoning,
                options.reasoning_field,
                options.request,
                options.finish,
                src.name,
            )
        decoder = open_decoder(src, self.notes)
        encoder = self.dst.encoder(self.notes, options)
        self.conversion = Conversion(decoder, encoder, self.lanes, self.drive)
        return self.conversion

    def _open_late(self) -> Conversion:
        """At the end of input, records held while the format was not yet known."""
        if not self.pending:
            raise InputError(
                "no records in the input", file=self.name, line=1, expected="at least one event"
            )
        src = self.src
        if src is not None:
            if self.named:  # --from F: one of the first records must be F's
                named_format(src, self.pending, self.name, final=True)
        else:
            src = self.src = source_format(self.pending, self.name, final=True)
            assert src is not None  # it raises when it cannot tell at the end
        return self._open_codecs(src)

    def _records(self, records: Sequence[Record]) -> list[bytes]:
        if not records:
            return []
        if self.only_done:
            self.only_done = all(record.done for record in records)
        conversion = self.conversion
        if conversion is None:
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
            conversion = self._open_codecs(self.src)
            records, self.pending = self.pending, []
        return self._frames(conversion.payloads(records))

    def _frames(self, payloads: list[Any]) -> list[bytes]:
        return self._writer().frames(payloads) if payloads else []

    def _writer(self) -> Writer:
        assert self.writer is not None  # open once the codecs are
        return self.writer

    def _check_ending(self) -> None:
        """At the end of the input: a choice asked for that never came is an error, input
        of nothing but ``[DONE]`` a warning."""
        if self.choice is not None:
            error = missing_choice(self.choice, self.lanes.seen, self.name)
            if error is not None:
                raise error
        if self.only_done:
            self.notes.add("warning", "the input holds only data: [DONE]: no events", 1)


class Setup(TypedDict, total=False):
    """What a :class:`Transcoder` is told beside its target (its keywords), and so what
    :func:`convert` is: one list, read by the type checker for both."""

    src: str | None
    container: str | None
    out_container: str | None
    options: EncodeOptions | None
    choice: int | None
    strict: bool
    name: str
    notes: Notes | None


def convert(
    data: bytes | bytearray | memoryview | Iterable[bytes], *, dst: str, **setup: Unpack[Setup]
) -> bytes:
    """Convert a whole stream held in memory (or an iterable of byte chunks); return bytes.
    The keywords are the :class:`Transcoder`'s.

    >>> chatx.convert(open("capture.sse", "rb").read(), dst="responses-event")
    """
    transcoder = Transcoder(dst, **setup)
    out = [transcoder.feed(chunk) for chunk in chunks_of(data, "convert()")]
    out.append(transcoder.finish())
    return b"".join(out)
