"""A file of exchanges that is one JSON document (a JSON cassette, a WireMock or
Datadog stub, a nock recording, a Llama Stack recording or recordable mock), read as
:func:`chatx.containers.exact.document` reads its bytes; one past
:data:`chatx.containers.json_walk.BIG` is walked (:class:`~chatx.containers.json_walk.Walk`)
from its stream as it comes: its bodies decoded into parts of one temporary file, its
arrays at the paths a reader names given element by element to the reader's sinks.
"""

from __future__ import annotations

import io
import os
import tempfile
import weakref
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from chatx.containers import bodies, exact, json_walk
from chatx.containers.json_walk import Elements, Path, Walk, put

# A document walked keeps a string to walk in its skeleton when it is no longer than this
# (most bodies of a cassette are small: a spool for each would cost more than it saves).
KEEP = 64 << 10
_BLOCK = 1 << 22  # the reads of a document walked


def document(
    stream: BinaryIO,
    paths: frozenset[Path] = frozenset(),
    make: Callable[[bodies.Spool], Any] = bodies.Walked,
    big: int | None = None,
    piece: int | None = None,
    keep: int | None = None,
    head: bytes = b"",
    arrays: dict[Path, Callable[[], Elements]] | None = None,
) -> Any:
    """A file that is one JSON document (a cassette), read as :func:`exact.document`
    reads its bytes: one longer than ``big`` bytes (``json_walk.BIG``) is walked, each string
    at one of ``paths`` longer than ``keep`` bytes (:data:`KEEP`) decoded into a spool in
    pieces of ``piece`` bytes (:data:`PIECE`) and given as ``make(spool)`` (a
    :class:`bodies.Walked`, unless said) where it stood;
    an array at one of ``arrays`` read element by element (see :class:`Walk`). Tests make
    all three small. ``head`` is what the caller read of the stream already."""
    big = json_walk.BIG if big is None else big  # (tests set it on the walk)
    data = head
    while len(data) <= big:
        read = stream.read(big + 1 - len(data))
        if not read:
            return exact.document(data)
        data += read
    source = _Stream(stream, data)
    walk = Walk(
        source,
        1,
        paths,
        name="not valid JSON",
        piece=json_walk.PIECE if piece is None else piece,
        keep=KEEP if keep is None else keep,
        check=big,
        spool=Shared().part,
        exact=lambda: source.digits,
        arrays=arrays,
    )
    value, spools = walk.value()
    after = source.after()  # the rest is blanks; read to the end, 19 digits or not
    if after is not None:
        walk.fail("unexpected content after document", after)
    for path in paths:
        put(value, path, spools, make)
    for path in arrays or ():
        put(value, path, walk.sinks, lambda sink: sink)
    return value


class _Stream:
    """A stream's bytes as a walk reads them; each byte read is also looked at for a run
    of 19 digits (see :func:`exact.may_hold_big_int`), as the whole file would be."""

    def __init__(self, stream: BinaryIO, data: bytes) -> None:
        self.read = getattr(stream, "read1", stream.read)
        self.buf = data
        self.pos = 0
        self.lines = 1  # the line at buf[counted]
        self.counted = 0
        self.eof = False
        self.tail = b""  # the last digits read, as translated
        self.digits = False
        self._look(data)

    def _look(self, data: bytes) -> None:
        if not self.digits:
            told = data.translate(exact.DIGITS)
            run = len(exact.LONG_RUN)
            self.digits = exact.LONG_RUN in told or exact.LONG_RUN in self.tail + told[:run]
            self.tail = (self.tail + told[-run:])[-run:]

    def more(self) -> bool:
        if self.eof:
            return False
        keep = self.pos
        self.line_at(keep)
        self.counted -= keep
        self.pos = 0
        chunk = json_walk.fill(self.read, max(_BLOCK, len(self.buf) - keep))
        if not chunk:
            self.eof = True
            self.buf = self.buf[keep:]
            return False
        self._look(chunk)
        self.buf = self.buf[keep:] + chunk
        return True

    def line_at(self, at: int) -> int:
        if self.counted < at:
            self.lines += self.buf.count(b"\n", self.counted, at)
            self.counted = at
        return self.lines

    def after(self) -> int | None:
        """The line of the first byte after the value that is no blank, if any; the
        stream is read to its end."""
        found = None
        while True:
            rest = self.buf[self.pos :]
            if found is None and rest.strip():
                found = self.line_at(self.pos + len(rest) - len(rest.lstrip()))
            self.pos = len(self.buf)
            if not self.more():
                return found


class Shared:
    """One temporary file that the spools of a document's walked strings (or arrays) are
    parts of, one after the other: one file descriptor, however many are walked. Made
    with the first part, closed once no part is left (each holds this)."""

    def __init__(self) -> None:
        self.file: io.BufferedRandom | None = None

    def part(self) -> bodies.Spool:
        if self.file is None:
            self.file = tempfile.TemporaryFile()  # noqa: SIM115  # closed with the last part
            weakref.finalize(self, self.file.close)
        return _Part(self, self.file)


class _Part(bodies.Spool):
    """A spool that is the stretch of a shared file written since it was made."""

    def __init__(self, shared: Shared, file: io.BufferedRandom) -> None:  # no file of its own
        self.shared = shared
        self.file = file
        self.start = file.tell()
        self.close = weakref.finalize(self, _nothing)  # the file closes with its last part
        self.size = 0
        self.ascii = True

    def pieces(self, size: int = json_walk.PIECE) -> Iterator[bytes]:
        fd = self.file.fileno()
        for at in range(0, self.size, size):
            yield os.pread(fd, min(size, self.size - at), self.start + at)


def _nothing() -> None:
    """A part has nothing to close of its own."""
