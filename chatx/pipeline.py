"""The transcoding pipeline: reader → decoder → (transforms) → encoder → writer.

:class:`Transcoder` is itself sans-IO: ``feed(bytes) -> bytes`` and ``finish() -> bytes``.
The CLI feeds it whatever a read returned (a whole block from a file, one event from a
live pipe) and writes what comes back at once, so a pipe streams live and a file is
still written in large blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from chatx import codecs, containers, ir
from chatx.codecs.base import Codec, EncodeOptions
from chatx.errors import ChatxError, InputError, NotRepresentable, UsageError
from chatx.notes import Notes
from chatx.record import Record

# Enough records for every probe to be sure; the rest of the stream is not held back.
_PROBE_RECORDS = 4
_SNIFF_BYTES = 4096


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
        name: str = "<stdin>",
        notes: Notes | None = None,
    ) -> None:
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
        self.pending: list[Record] = []
        self.skipped = 0
        self.lanes: set[int] = set()

    # -- public ----------------------------------------------------------------------

    def feed(self, chunk: bytes) -> bytes:
        """Take the next bytes of input; return the output they complete."""
        if self.reader is None:
            self.head += chunk
            if len(self.head) < _SNIFF_BYTES and b"\n" not in self.head.lstrip():
                return b""
            chunk, self.head = self.head, b""
            self._open_reader(chunk)
        return self._records(self.reader.feed(chunk))

    def finish(self) -> bytes:
        """End of input: drain every stage."""
        out = b""
        if self.reader is None:
            chunk, self.head = self.head, b""
            self._open_reader(chunk)
            out = self._records(self.reader.feed(chunk))
        out += self._records(self.reader.finish())
        if self.decoder is None:
            if not self.pending:
                raise InputError(
                    "no records in the input", file=self.name, line=1, expected="at least one event"
                )
            self._open_codecs()
            records, self.pending = self.pending, []
            out += self._process(records)
        out += self._encode(self._select(self.decoder.finish()))
        payloads = self.encoder.finish()
        out += self.writer.write(payloads) if payloads else b""
        out += self.writer.finish()
        return out

    @property
    def source_format(self) -> str | None:
        return self.src.name if self.src else None

    # -- stages ----------------------------------------------------------------------

    def _open_reader(self, head: bytes) -> None:
        name = self.container or containers.detect(head[:_SNIFF_BYTES])
        self.container = name
        self.reader = containers.get(name).reader()

    def _open_codecs(self) -> None:
        if self.src is None:
            try:
                self.src = codecs.detect(self.pending)
            except InputError as exc:
                bad = next((r for r in self.pending if r.error), None)
                if bad is not None and all(r.error for r in self.pending):
                    raise InputError(
                        bad.error or "", file=self.name, line=bad.line, expected="a JSON payload"
                    ) from None
                raise exc.located(self.name) from None
        out_container = self.out_container or self.dst.container
        if out_container == "sse":
            self.writer = containers.get("sse").writer(self.dst.sse_event_names)
        else:
            self.writer = containers.get(out_container).writer()
        self.out_container = out_container
        self.decoder = self.src.decoder(self.notes)
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

    def _records(self, records: list[Record]) -> bytes:
        if not records:
            return b""
        if self.decoder is None:
            self.pending.extend(records)
            if len(self.pending) < _PROBE_RECORDS:
                return b""
            self._open_codecs()
            records, self.pending = self.pending, []
        return self._process(records)

    def _process(self, records: list[Record]) -> bytes:
        payloads: list[Any] = []
        decoder, encoder, notes = self.decoder, self.encoder, self.notes
        plain = self.choice is None and not self.dst.single_lane
        for record in records:
            if record.error is not None:
                self._skip(record.error, record.line)
                continue
            notes.line = record.line
            try:
                events = decoder.feed(record)
            except InputError as exc:
                self._skip(exc.message, record.line, exc.expected)
                continue
            if events:
                payloads.extend(encoder.feed(events if plain else self._select(events)))
        self._check_strict()
        return self.writer.write(payloads) if payloads else b""

    def _encode(self, events: list[ir.Event]) -> bytes:
        if not events:
            return b""
        payloads = self.encoder.feed(events)
        return self.writer.write(payloads) if payloads else b""

    def _skip(self, message: str, line: int, expected: str | None = None) -> None:
        if self.strict:
            raise InputError(message, file=self.name, line=line, expected=expected)
        self.skipped += 1
        text = f"record skipped: {message}"
        if expected:
            text += f" (expected {expected})"
        self.notes.add("skipped", text, line)

    def _check_strict(self) -> None:
        if self.strict and self.notes:
            note = self.notes.summary()[0]
            if note.kind in ("lost", "repaired"):
                raise NotRepresentable(f"{self.name}: {note}")

    def _select(self, events: list[ir.Event]) -> list[ir.Event]:
        """Keep one choice (``--choice N``, renumbered 0) or refuse a second one."""
        if self.choice is None:
            if self.dst.single_lane:
                for event in events:
                    lane = getattr(event, "lane", None)
                    if lane is not None and lane not in self.lanes:
                        self.lanes.add(lane)
                        if len(self.lanes) > 1:
                            raise UsageError(
                                f"{self.name}: the stream has several choices and "
                                f"{self.dst.name} holds one: pass --choice N"
                            )
            return events
        kept = []
        for event in events:
            lane = getattr(event, "lane", None)
            if lane is None:
                kept.append(event)
            elif lane == self.choice:
                event.lane = 0  # type: ignore[union-attr]
                kept.append(event)
        return kept


def convert(
    data: bytes | str | Iterable[bytes],
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
    if isinstance(data, str):
        data = data.encode()
    chunks = [data] if isinstance(data, bytes) else data
    out = [transcoder.feed(chunk) for chunk in chunks]
    out.append(transcoder.finish())
    return b"".join(out)


def read_records(data: bytes, container: str | None = None) -> tuple[str, list[Record]]:
    """Frame a whole stream held in memory into records; return the container used."""
    name = container or containers.detect(data[:_SNIFF_BYTES])
    reader = containers.get(name).reader()
    records = reader.feed(data)
    records.extend(reader.finish())
    return name, records


def decode(
    records: Iterable[Record], src: str | None = None, notes: Notes | None = None
) -> Iterator[list[ir.Event]]:
    """Decode records into IR batches (the source format detected when not given)."""
    notes = notes if notes is not None else Notes()
    records = iter(records)
    head: list[Record] = []
    for record in records:
        head.append(record)
        if len(head) >= _PROBE_RECORDS:
            break
    codec = codecs.get(src) if src else codecs.detect(head)
    decoder = codec.decoder(notes)
    for stream in (head, records):
        for record in stream:
            if record.error is not None:
                notes.add("skipped", f"record skipped: {record.error}", record.line)
                continue
            notes.line = record.line
            try:
                batch = decoder.feed(record)
            except ChatxError as exc:
                notes.add("skipped", f"record skipped: {exc}", record.line)
                continue
            if batch:
                yield batch
    tail = decoder.finish()
    if tail:
        yield tail
