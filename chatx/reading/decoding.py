"""Records to IR batches without an encoder: what ``diff``, ``show`` and ``collect``
read a stream's meaning with (``convert`` runs the same decoders in
:class:`chatx.pipeline.Transcoder`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from chatx import codecs, ir
from chatx.arguments import as_bytes
from chatx.codecs.base import open_decoder
from chatx.codecs.template import DeltaRun, RunDecoder
from chatx.drive import Drive
from chatx.notes import Notes
from chatx.reading.framing import read_records
from chatx.record import Record

__all__ = ["decode", "decode_groups"]


def decode(
    records: Iterable[Record] | bytes | bytearray | memoryview,
    src: str | None = None,
    notes: Notes | None = None,
) -> Iterator[list[ir.Event]]:
    """Decode records (or the bytes of a stream, framed here) into IR batches, the source
    format detected when not given. Misuse is said here, before the first batch."""
    notes = notes if notes is not None else Notes()
    if isinstance(records, bytes | bytearray | memoryview | str):
        records = read_records(as_bytes(records, "decode()"), notes=notes)[1]
    elif not isinstance(records, Iterable):
        raise TypeError(f"decode() takes records or bytes, not {type(records).__name__}")
    if src is not None:
        codecs.get(src)  # an unknown name is said now, not at the first batch
    return _decode(iter(records), src, notes)


def _decode(records: Iterator[Record], src: str | None, notes: Notes) -> Iterator[list[ir.Event]]:
    head: list[Record]
    if src:
        codec, head = codecs.get(src), []
    else:
        codec, head = codecs.sniff_iter(records)
    decoder = open_decoder(codec, notes)
    drive = Drive(notes)

    def feed(record: Record, out: list[list[ir.Event]]) -> None:
        batch = decoder.feed(record)
        if type(batch) is ir.Batches:  # a whole object: its stream's records
            out.extend(batch)
        elif batch:
            out.append(batch)

    out: list[list[ir.Event]] = []
    for stream in (head, records):
        for record in stream:
            # One record at a time: a live input's batches are given as they come.
            yield from drive.run((record,), feed, out)
            out.clear()
    tail = decoder.finish()
    if tail:
        yield tail


def decode_groups(
    groups: Iterable[list[Record]], src: str, notes: Notes
) -> Iterator[list[ir.Event] | DeltaRun]:
    """:func:`decode` of records in lists (:meth:`chatx.reading.framing.Side.groups`), a
    run of records the codec's run hook knows by their bytes given whole as one
    :class:`~chatx.codecs.template.DeltaRun` (the batches of its records, in one object):
    what ``convert`` finds, for a consumer that takes runs (the Assembler)."""
    decoder = open_decoder(codecs.get(src), notes)
    find_run = decoder.run if isinstance(decoder, RunDecoder) else None
    drive = Drive(notes)

    def feed(record: Record, out: list[list[ir.Event] | DeltaRun]) -> None:
        batch = decoder.feed(record)
        if type(batch) is ir.Batches:  # a whole object: its stream's records
            out.extend(batch)
        elif batch:
            out.append(batch)

    def feed_run(run: DeltaRun, out: list[list[ir.Event] | DeltaRun]) -> None:
        out.append(run)
        notes.line = run.lines[-1]  # what comes next follows the run's last record

    out: list[list[ir.Event] | DeltaRun] = []
    for group in groups:
        yield from drive.run(group, feed, out, find_run, feed_run)
        out.clear()
    tail = decoder.finish()
    if tail:
        yield tail
