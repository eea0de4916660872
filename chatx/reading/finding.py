"""The streams an opened input holds (:mod:`chatx.reading.opening` opened it), each
exchange of a file of recorded exchanges told by :mod:`chatx.reading.telling`. ``chatx
ls`` lists them (:func:`streams`); :func:`pick` is the one stream a command that reads
one stream takes, :func:`each` every stream for a command that reads them all. A bare
stream is one stream (``#0``), told by its records as it is read.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from chatx.errors import InputError
from chatx.notes import Notes
from chatx.reading.opening import Address, Source, open_source, parse

if TYPE_CHECKING:  # a bare stream loads nothing of the bodies exchanges hold
    from chatx.containers.bodies import Entry
    from chatx.reading.telling import Exchange


# -- what a file holds --------------------------------------------------------------------


def entries(source: Source) -> Iterator[Entry]:
    """The exchanges of a file of recorded exchanges, one at a time."""
    assert source.kind is not None
    try:
        from chatx.containers import demux

        path = None if source.address.file == "-" else source.address.file
        yield from demux.entries(source.kind, source.stream, path)
    except InputError as exc:
        raise exc.located(source.name) from None


def streams(source: Source, only: int | None = None) -> Iterator[Exchange]:
    """Each exchange of ``source`` (a file of exchanges) told apart; ``only``: just that
    one (an InputError when the file has no exchange of that number)."""
    from chatx.reading.telling import classify

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
    stream: Exchange | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (FILE#N, why)

    @property
    def request(self) -> dict[str, Any] | None:
        return self.stream.request if self.stream is not None else None

    @property
    def format(self) -> str | None:
        """The format ``ls`` found for a stream of a file of exchanges (None: a bare
        input, whose records tell it as they are read)."""
        return self.stream.format if self.stream is not None else None

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
        if self.stream is not None and self.stream.pieces is not None:
            from chatx.containers.bodies import reader

            with reader(self.stream.pieces()) as body:  # too big to hold: read in pieces
                yield body
            return
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


def _readable(stream: Exchange) -> Exchange:
    if stream.kind == "unreadable":
        raise InputError(f"its body cannot be decoded ({stream.note})", file=stream.address)
    if stream.kind == "unknown":
        raise InputError(
            f"a stream of an unknown format ({stream.note}): no format chatx reads",
            file=stream.address,
        )
    if not stream.readable:
        raise InputError(f"not a stream: {_described(stream)}", file=stream.address)
    return stream


def _described(stream: Exchange) -> str:
    """A non-stream exchange in words: its kind, and why chatx cannot read it."""
    return f"{stream.kind} ({stream.note})" if stream.note else stream.kind


def _only(source: Source) -> Picked:
    found: Exchange | None = None
    addresses: list[str] = []
    skipped: list[tuple[str, str]] = []
    total = unknown = 0
    for stream in streams(source):
        total += 1
        unknown += stream.kind == "unknown"
        if stream.kind == "unreadable":
            skipped.append((stream.address, f"its body cannot be decoded ({stream.note})"))
        elif stream.readable:
            addresses.append(stream.address)
            found = found or stream
    if found is None:
        said = [f"{a} skipped: {why}" for a, why in skipped]
        raise none_streaming(source.name, total, said, unknown)
    if len(addresses) > 1:
        raise InputError(
            f"{len(addresses)} streams, name one: {', '.join(addresses)}", file=source.name
        )
    return Picked(source, found.address, found, skipped)


class NoStreams(InputError):
    """A file of exchanges none of which is a stream chatx reads: an error when it is
    named, passed over with a warning when a directory walk found it."""


def none_streaming(name: str, total: int, skipped: list[str], unknown: int = 0) -> NoStreams:
    """A file of exchanges none of which is a stream chatx reads; ``unknown`` of them are
    streams of a format it has no codec for, said as such (not "none streaming")."""
    plural = "" if total == 1 else "s"
    said = "".join(f"; {message}" for message in skipped)
    if unknown:
        what = "a stream" if unknown == 1 else f"{unknown} streams"
        return NoStreams(f"no stream chatx reads in {name} ({total} interaction{plural}, {what}"
                         f" of an unknown format){said}", file=name)  # fmt: skip
    return NoStreams(f"no streams in {name} ({total} interaction{plural}, none streaming){said}",
                     file=name)  # fmt: skip


def each(spec: str) -> Iterator[tuple[str | Source | Exchange, str]]:
    """Every stream ``spec`` holds, for a command that reads them all (validate): an
    address as given (read by name), a bare input opened (a :class:`Source`), or each
    stream of a file of exchanges, one at a time (not its non-streaming objects).
    Trouble is a :class:`Exchange` with ``error`` set, for the caller to say where it says
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


def _each(source: Source) -> Iterator[tuple[str | Source | Exchange, str]]:
    from chatx.reading.telling import Exchange

    total, readable, skipped, unknown = 0, 0, [], 0
    try:
        for stream in streams(source):
            total += 1
            unknown += stream.kind == "unknown"
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
        yield Exchange(source.name, -1, None, error=exc), source.name
        return
    if not readable:
        error = none_streaming(source.name, total, [], unknown)
        yield Exchange(source.name, -1, None, error=error), source.name
