"""Inputs as the commands name them: a file, stdin (``-``), or one stream of a file that
holds several, addressed ``FILE#N`` with N as ``chatx ls`` prints it.

:func:`open_source` opens an input below every container: compressed bytes are read
decompressed (by their magic), and the first bytes tell a bare stream from a file of
recorded exchanges (:mod:`chatx.containers.demux`). :func:`streams` lists what such a
file holds, one exchange at a time, each told apart as a stream, a non-streaming object
chatx can read, or something else (:mod:`chatx.reading.finding`); :func:`pick` is the one
stream a command that reads one stream takes.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from chatx.containers import compressed, demux
from chatx.containers.bodies import Entry
from chatx.containers.lines import MAX_LINE
from chatx.errors import InputError
from chatx.limits import MAX_LAYERS
from chatx.notes import Notes
from chatx.reading.finding import Stream, classify, judge

__all__ = ["Address", "NoStreams", "Picked", "Source", "Stream", "each", "judge", "open_source",
           "parse", "pick"]  # fmt: skip

_ADDRESS = re.compile(r"^(.*)#(\d+)$", re.S)
_READ = 1 << 16
_HEAD_MAX = 1 << 14  # a head that says nothing by then is a bare stream's


@dataclass(frozen=True, slots=True)
class Address:
    """``file`` (``-`` for stdin) and the stream ``index`` named after ``#``, if one is."""

    file: str
    index: int | None = None

    @property
    def name(self) -> str:
        return "<stdin>" if self.file == "-" else self.file

    def of(self, index: int) -> str:
        return f"{self.name}#{index}"


def parse(spec: str) -> Address:
    """Read ``FILE#N``; a path that exists as written is a file, whatever its name."""
    if spec == "-" or os.path.lexists(spec):
        return Address(spec)
    match = _ADDRESS.match(spec)
    if match and (match.group(1) == "-" or os.path.lexists(match.group(1))):
        return Address(match.group(1), int(match.group(2)))
    return Address(spec)


# -- opening ----------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Source:
    """One input opened: ``stream`` reads it from the start, decompressed; ``kind`` is
    the kind of file of recorded exchanges it is, None for a bare stream."""

    address: Address
    stream: BinaryIO
    kind: str | None = None
    compression: str | None = None
    closers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.address.name

    def close(self) -> None:
        for close in reversed(self.closers):
            close()
        self.closers.clear()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(spec: str | Address) -> Source:
    """Open ``spec`` (a path, ``-`` or ``FILE#N``) and look at its first bytes."""
    address = spec if isinstance(spec, Address) else parse(spec)
    file = address.file
    closers: list[Callable[[], None]] = []
    if file == "-":
        raw: Any = sys.stdin.buffer
    else:
        try:
            raw = open(file, "rb")  # noqa: SIM115 - closed by Source.close
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=file) from None
        closers.append(raw.close)
    try:
        head, ended = _head(raw, b"", lambda h: compressed.undecided(h))
        compression = compressed.detect(head)
        stream, head, ended = _decompressed(raw, head, ended, closers)
        if not ended:
            more, ended = _head(
                stream, head, lambda h: not demux.decidable(h) and len(h) < _HEAD_MAX
            )
            head = more
        kind = demux.detect(head)
        if compression is None and file != "-" and raw.seekable():
            raw.seek(0)  # a plain file is read again from its start, through no wrapper
        else:
            # A terminal's end of input is said once (Ctrl-D): what follows the head
            # must not read past it, or it would wait for a second one.
            stream = compressed.prefixed(head, io.BytesIO() if ended else stream)
    except InputError as exc:
        for close in reversed(closers):
            close()
        raise exc.located(address.name) from None
    except BaseException:
        for close in reversed(closers):
            close()
        raise
    return Source(address, stream, kind, compression, closers)


def _decompressed(
    raw: Any, head: bytes, ended: bool, closers: list[Callable[[], None]]
) -> tuple[Any, bytes, bool]:
    """``raw`` read decompressed while its first bytes say it is compressed (a ``.gz`` of
    a ``.gz``), at most MAX_LAYERS times over, each layer bounded; (stream, head, ended)
    of what is left, ``head`` its first bytes read already."""
    stream = raw
    for _ in range(MAX_LAYERS):
        compression = compressed.detect(head)
        if compression is None:
            return stream, head, ended
        rest = io.BytesIO() if ended else stream
        stream = compressed.open_stream(compression, compressed.prefixed(head, rest))
        closers.append(stream.close)
        head, ended = _head(stream, b"", lambda h: compressed.undecided(h))
    if compressed.detect(head) is not None:
        raise InputError(
            f"compressed more than {MAX_LAYERS} times over (chatx undoes at most {MAX_LAYERS}"
            " layers: MAX_LAYERS)"
        )
    return stream, head, ended


def _head(stream: Any, head: bytes, wanting: Callable[[bytes], bool]) -> tuple[bytes, bool]:
    """``head`` and what more is read while ``wanting(head)``: as little as a live pipe
    has sent, so a stream's first event is not held back; and whether the input ended."""
    read = getattr(stream, "read1", stream.read)
    while (not head or wanting(head)) and len(head) <= MAX_LINE:
        chunk = read(_READ)
        if not chunk:
            return head, True
        head += chunk
    return head, False


# -- what a file holds --------------------------------------------------------------------


def entries(source: Source) -> Iterator[Entry]:
    """The exchanges of a file of recorded exchanges, one at a time."""
    assert source.kind is not None
    try:
        yield from demux.entries(source.kind, source.stream)
    except InputError as exc:
        raise exc.located(source.name) from None


def streams(source: Source, only: int | None = None) -> Iterator[Stream]:
    """Each exchange of ``source`` (a file of exchanges) told apart; ``only``: just that
    one (an InputError when the file has no exchange of that number)."""
    count = 0
    for entry in entries(source):
        count += 1
        if only is not None and entry.index != only:
            continue
        yield classify(entry, source.address.of(entry.index))
        if only is not None:
            return
    if only is not None:
        raise InputError(
            f"no stream #{only}: the file holds {count} interaction{'' if count == 1 else 's'}"
            f" (#0 to #{count - 1})"
            if count
            else f"no stream #{only}: the file holds no interactions",
            file=source.name,
        )


# -- the streams a command reads ------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Picked:
    """The one stream a command reads: a bare input (``stream`` None: read ``source``)
    or a stream of a file of exchanges, its body in memory. ``skipped`` says each
    exchange whose body could not be decoded on the way."""

    source: Source
    name: str
    stream: Stream | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (FILE#N, why)

    @property
    def request(self) -> dict[str, Any] | None:
        return self.stream.request if self.stream is not None else None

    def say_skipped(self, notes: Notes) -> None:
        """A note for each exchange skipped on the way, naming that exchange (as ls
        says it), not the stream read."""
        for address, why in self.skipped:
            notes.add("skipped", why, where=address)

    def __enter__(self) -> Picked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.source.close()

    @contextmanager
    def reading(self) -> Iterator[BinaryIO]:
        """The stream's bytes as a binary file, closed after."""
        if self.stream is not None:
            yield io.BytesIO(self.stream.data)
            return
        with self.source:
            yield self.source.stream


def pick(spec: str | Address) -> Picked:
    """The stream ``spec`` names: a bare input, ``FILE#N``, or the only stream of a
    file. A file of several streams is an InputError listing their addresses; one of
    none says how many exchanges it holds."""
    address = spec if isinstance(spec, Address) else parse(spec)
    source = open_source(address)
    if source.kind is None:
        if address.index not in (None, 0):
            source.close()
            raise InputError(
                f"no stream #{address.index}: a bare stream is one stream (#0)", file=address.name
            )
        name = address.name if address.index is None else address.of(0)
        return Picked(source, name)
    with source:
        if address.index is not None:
            (stream,) = streams(source, address.index)
            return Picked(source, stream.address, _readable(stream))
        return _only(source)


def _readable(stream: Stream) -> Stream:
    if stream.kind == "unreadable":
        raise InputError(f"its body cannot be decoded ({stream.note})", file=stream.address)
    if not stream.readable:
        raise InputError(f"not a stream: {_described(stream)}", file=stream.address)
    return stream


def _described(stream: Stream) -> str:
    """A non-stream exchange in words: its kind, and why chatx cannot read it."""
    return f"{stream.kind} ({stream.note})" if stream.note else stream.kind


def _only(source: Source) -> Picked:
    found: Stream | None = None
    addresses: list[str] = []
    skipped: list[tuple[str, str]] = []
    total = 0
    for stream in streams(source):
        total += 1
        if stream.kind == "unreadable":
            skipped.append((stream.address, f"its body cannot be decoded ({stream.note})"))
        elif stream.readable:
            addresses.append(stream.address)
            found = found or stream
    if found is None:
        raise none_streaming(source.name, total, [f"{a} skipped: {why}" for a, why in skipped])
    if len(addresses) > 1:
        raise InputError(
            f"{len(addresses)} streams, name one: {', '.join(addresses)}", file=source.name
        )
    return Picked(source, found.address, found, skipped)


class NoStreams(InputError):
    """A file of exchanges none of which is a stream chatx reads: an error when it is
    named, passed over with a warning when a directory walk found it."""


def none_streaming(name: str, total: int, skipped: list[str]) -> NoStreams:
    """A file of exchanges none of which is a stream chatx reads."""
    plural = "" if total == 1 else "s"
    said = "".join(f"; {message}" for message in skipped)
    return NoStreams(f"no streams in {name} ({total} interaction{plural}, none streaming){said}",
                     file=name)  # fmt: skip


def each(spec: str) -> Iterator[tuple[str | Source | Stream, str]]:
    """Every stream ``spec`` holds, for a command that reads them all (validate): an
    address as given (read by name), a bare input opened (a :class:`Source`), or each
    stream of a file of exchanges, one at a time (not its non-streaming objects).
    Trouble is a :class:`Stream` with ``error`` set, for the caller to say where it says
    the others'."""
    address = parse(spec)
    if address.index is not None:
        yield spec, spec
        return
    try:
        source = open_source(address)
    except InputError:
        yield spec, address.name  # opened again by the caller, who says why it fails
        return
    if source.kind is None:
        yield source, address.name
        return
    with source:
        yield from _each(source)


def _each(source: Source) -> Iterator[tuple[str | Source | Stream, str]]:
    total, readable, skipped = 0, 0, []
    try:
        for stream in streams(source):
            total += 1
            if stream.kind == "unreadable":
                stream.error = InputError(
                    f"skipped: its body cannot be decoded ({stream.note})", file=stream.address
                )
                skipped.append(stream.address)
                yield stream, stream.address
            elif stream.kind == "stream":  # a non-streaming object is no stream to check
                readable += 1
                yield stream, stream.address
    except InputError as exc:
        yield Stream(source.name, -1, None, error=exc), source.name
        return
    if not readable:
        error = none_streaming(source.name, total, [])
        yield Stream(source.name, -1, None, error=error), source.name
