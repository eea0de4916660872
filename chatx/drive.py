"""Driving records through a codec: the skip-and-report policy, written once.

:class:`Drive` is the one loop every consumer of decoded records runs (the
:class:`chatx.pipeline.Transcoder` of ``convert``, and :func:`chatx.reading.decoding.decode` of
``diff``, ``show`` and ``collect``). A record that cannot be decoded is said as skipped
and the run goes on; ``strict`` stops at the first one, or at the first repair or loss.
:func:`pump` and :class:`NoteReporter` drive a Transcoder from a file to a file, saying
its notes on stderr as they come.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from chatx.codecs.template import DeltaRun
from chatx.errors import ChatxError, InputError, NotRepresentable
from chatx.notes import Note, Notes
from chatx.record import Record

# One read: what a pipe has (a live stream sees each event at once), or 64 KiB of a file:
# large enough for few writes, small enough that a block's records stay a few MB.
BLOCK = 1 << 16


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


Feed = Callable[[Record, list[Any]], None]
FindRun = Callable[[Sequence[Record], int], DeltaRun | None]
FeedRun = Callable[[DeltaRun, list[Any]], None]


class Drive:
    """Feeds records to a step, one policy for the records it cannot take.

    Lenient (the default): such a record is noted as skipped (``skipped`` counts them)
    and the next one goes on. ``strict``: the first one, or the first repair or loss
    noted (:meth:`check`), ends the run; ``error`` holds what to raise once the output
    of the records before it is written (an error a step sets there itself ends a
    strict run as well).
    """

    def __init__(self, notes: Notes, *, strict: bool = False, name: str = "<input>") -> None:
        self.notes = notes
        self.strict = strict
        self.name = name
        self.skipped = 0
        self.checked = 0  # strict: the notes already looked at
        self.error: ChatxError | None = None

    def run(
        self,
        records: Sequence[Record],
        feed: Feed,
        out: list[Any],
        find_run: FindRun | None = None,
        feed_run: FeedRun | None = None,
    ) -> list[Any]:
        """Feed ``records`` in order, ``feed(record, out)`` appending what each gives.

        ``find_run(records, position)``, when given (never under ``strict``, which
        judges each record alone), returns the run that starts at a raw record (records
        a codec's run hook knows by their bytes: :mod:`chatx.codecs.template`), or None;
        ``feed_run(run, out)`` takes the whole run at once."""
        notes, strict = self.notes, self.strict
        if strict or feed_run is None:
            find_run = None
        position, count = 0, len(records)
        while position < count:
            record = records[position]
            position += 1
            notes.line = record.line  # a record skipped is still the last one read
            kept = len(out)
            try:
                if record.error is not None:
                    raise InputError(record.error)
                if find_run is not None and record.raw is not None:
                    run = find_run(records, position - 1)
                    if run is not None:
                        position += len(run.texts) - 1
                        assert feed_run is not None  # runs are only asked for with it
                        feed_run(run, out)
                        continue
                feed(record, out)
                if strict:
                    self.check()
            except Exception as exc:
                self._failed(exc, record, out, kept)
            if strict and self.error is not None:
                del out[kept:]  # the record that broke the rule is not written
                break
        return out

    def check(self) -> None:
        """``strict``: the first repair or loss noted since the last check is raised as
        NotRepresentable (lenient: nothing to do)."""
        if not self.strict:
            return
        items = self.notes.items
        for note in items[self.checked :]:
            if note.kind in ("lost", "repaired"):
                self._not_representable(note)
        self.checked = len(items)
        if self.notes.lost_fields:
            self._not_representable(self.notes.summary()[len(items)])

    def _not_representable(self, note: Note) -> None:
        name = note.where or self.name
        where = f"{name}:{note.line}" if note.line else name
        raise NotRepresentable(f"{where}: {note.kind}: {note.message}")

    def _failed(self, exc: Exception, record: Record, out: list[Any], kept: int) -> None:
        """The policy, called while ``exc`` is handled: what it does not take is raised
        again (another error of chatx's; under ``strict`` or CHATX_DEBUG a bug)."""
        if isinstance(exc, InputError):
            self._refuse(record, out, kept, exc.message, exc.expected)
        elif isinstance(exc, NotRepresentable) and self.strict:
            self.error = exc
        elif isinstance(exc, ChatxError) or self.strict or debug():
            raise  # the exception run() is handling
        else:  # a codec bug: one record lost, not the run
            self._refuse(record, out, kept, bug_text(exc), None)

    def _refuse(
        self, record: Record, out: list[Any], kept: int, message: str, expected: str | None
    ) -> None:
        """A record that cannot be taken: skipped with a note, or (strict) the error."""
        del out[kept:]
        if self.strict:
            self.error = InputError(message, file=self.name, line=record.line, expected=expected)
            return
        self.skipped += 1
        text = f"record skipped: {message}"
        if expected:
            text += f" (expected {expected})"
        self.notes.add("skipped", text, record.line)


def pump(inp: BinaryIO, out: BinaryIO, transcoder: Any, reporter: NoteReporter) -> None:
    """Read, convert, write and flush until the input ends."""
    read = getattr(inp, "read1", inp.read)
    write = out.write
    while True:
        chunk = read(BLOCK)
        if not chunk:
            break
        frames = transcoder.feed_frames(chunk)
        if frames:
            for data in frames:
                write(data)
            out.flush()
        reporter.flush()
    for data in transcoder.finish_frames():
        write(data)
    out.flush()


class NoteReporter:
    """Prints notes on stderr as they come, escaped; lost fields once, at the end."""

    def __init__(self, notes: Notes, name: str, quiet: bool) -> None:
        self.notes = notes
        self.name = name
        self.quiet = quiet
        self.shown = 0

    def flush(self, final: bool = False) -> None:
        items = self.notes.summary() if final else self.notes.items
        if not self.quiet and len(items) > self.shown:
            from chatx.textsafe import escape_text  # loaded by the first note said

            for note in items[self.shown :]:
                name = note.where or self.name
                where = f"{name}:{note.line}" if note.line else name
                sys.stderr.write(
                    f"chatx: {note.kind}: {escape_text(where)}: {escape_text(note.message)}\n"
                )
        self.shown = len(items)
