"""Records to IR batches without an encoder: what ``diff``, ``show`` and ``collect``
read a stream's meaning with (``convert`` runs the same decoders in
:class:`chatx.pipeline.Transcoder`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from chatx import codecs, ir
from chatx.errors import ChatxError, InputError
from chatx.notes import Notes
from chatx.record import Record

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
    records: Iterable[Record], src: str | None = None, notes: Notes | None = None
) -> Iterator[list[ir.Event]]:
    """Decode records into IR batches (the source format detected when not given)."""
    notes = notes if notes is not None else Notes()
    records = iter(records)
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
            if batch:
                yield batch
    tail = decoder.finish()
    if tail:
        yield tail
