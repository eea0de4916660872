"""Records to IR batches without an encoder: what ``diff``, ``show`` and ``collect``
read a stream's meaning with (``convert`` runs the same decoders in
:class:`chatx.pipeline.Transcoder`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from chatx import codecs, ir
from chatx.errors import ChatxError, InputError
from chatx.notes import Notes
from chatx.reading import read_records
from chatx.record import Record
from chatx.refusals import as_bytes

PROBE_RECORDS = codecs.PROBE_RECORDS  # where callers have found it


def debug() -> bool:
    """CHATX_DEBUG=1 (``--traceback`` sets it): an exception a codec did not mean (a bug)
    is raised, where otherwise the record it met is skipped with a note saying so."""
    return os.environ.get("CHATX_DEBUG") == "1"


def bug_text(exc: BaseException) -> str:
    """What to say about a record a codec failed on without meaning to."""
    return (
        f"internal error: {type(exc).__name__}: {exc} "
        "(a bug in chatx: run again with --traceback and report it)"
    )


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
    if src:
        codec, head = codecs.get(src), []
    else:
        codec, head = codecs.sniff_iter(records)
    decoder = codec.decoder(notes)
    for stream in (head, records):
        for record in stream:
            notes.line = record.line  # a record skipped is still the last one read
            if record.error is not None:
                notes.add("skipped", f"record skipped: {record.error}", record.line)
                continue
            try:
                batch = decoder.feed(record)
            except InputError as exc:
                # The note has the line already: the message only, as Transcoder says it.
                text = f"record skipped: {exc.message}"
                if exc.expected:
                    text += f" (expected {exc.expected})"
                notes.add("skipped", text, record.line)
                continue
            except ChatxError as exc:
                notes.add("skipped", f"record skipped: {exc}", record.line)
                continue
            except Exception as exc:  # a codec bug: one record lost, not the run
                if debug():
                    raise
                notes.add("skipped", f"record skipped: {bug_text(exc)}", record.line)
                continue
            if type(batch) is ir.Batches:  # a whole object: its stream's records
                yield from batch
            elif batch:
                yield batch
    tail = decoder.finish()
    if tail:
        yield tail
