"""Reading inputs into records: a whole input held in memory, or a file or stdin read
as it arrives (the container detected from the first bytes unless given).

A :class:`Side` is one input of the commands that compare or rebuild a stream (diff,
show, collect): its records are read once, as they come, and only what those commands
print is kept (counts, unreadable records, notes), so memory follows the text the stream
carries, not its number of events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from chatx import codecs, containers
from chatx.arguments import INPUT, as_bytes
from chatx.containers.payload import LONG_PAYLOAD
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.reading import finding, opening
from chatx.record import Record

if TYPE_CHECKING:  # a bare stream loads nothing of telling exchanges apart
    from chatx.reading.telling import Exchange

_BLOCK = 1 << 16  # one read of a file: what a pipe has, or up to 64 KiB


def read_records(
    data: bytes | bytearray | memoryview, container: str | None = None, notes: Notes | None = None
) -> tuple[str, list[Record]]:
    """Frame a whole stream held in memory into records; return the container used.

    ``notes`` gets a warning for each line the reader ignored (an unknown SSE field).
    """
    data = as_bytes(data, "read_records()")
    name = container or containers.detect(data[: containers.sniffed(data)])
    reader = containers.get(name).reader()
    records = [*reader.feed(data), *reader.finish()]
    if notes is not None:
        for line, why in getattr(reader, "ignored", ()):
            notes.add("warning", why, line)
    return name, records


def open_records(
    file: str | opening.Source | Exchange,
    container: str | None = None,
    ignored: list[tuple[int, str]] | None = None,
) -> tuple[str, Iterator[Record], str | None]:
    """Open ``file`` (``-``: stdin, ``FILE#N``: one stream of a file of exchanges, or a
    :class:`chatx.reading.telling.Exchange` read already) and frame it into records as they are read:
    (container, records, the format ``ls`` found for a stream of a file of exchanges).

    The container is detected from the first bytes unless given; errors are InputErrors
    that name the file. ``ignored`` gets (line, why) for each input line the reader
    ignored (an SSE line that is no field), by the time the records after it come out.
    """
    _, kind, _, lists, _, found = _open(file, container, ignored)
    return kind, chain.from_iterable(lists), found


def open_groups(
    file: str | opening.Source | Exchange,
    container: str | None = None,
    ignored: list[tuple[int, str]] | None = None,
) -> tuple[str, Iterator[list[Record]], str | None, Any]:
    """:func:`open_records`, the records in the lists each read gives (a read's records
    are there at once), and the container's reader, which a caller may ask to leave the
    payloads after a point unparsed (a RawReader's ``raw``): what ``validate`` reads."""
    _, kind, reader, lists, _, found = _open(file, container, ignored)
    return kind, lists, found, reader


def group_bytes(
    data: bytes, container: str | None, ignored: list[tuple[int, str]] | None, name: str
) -> tuple[str, Any, Iterator[list[Record]]]:
    """:func:`read_bytes`, the records in the lists each block's read gives."""
    return _in_memory(data, container, ignored, name)


def frame_bytes(
    data: bytes,
    container: str | None = None,
    ignored: list[tuple[int, str]] | None = None,
    name: str = INPUT,
) -> tuple[str, Iterator[Record]]:
    """Frame a stream held in memory block by block, as :func:`open_records` frames a
    file: the records come out as they are read, none kept here."""
    kind, _, records = read_bytes(data, container, ignored, name)
    return kind, records


def _open(
    file: str | opening.Source | Exchange,
    container: str | None,
    ignored: list[tuple[int, str]] | None,
    notes: Notes | None = None,
) -> tuple[str, str, Any, Iterator[list[Record]], dict[str, Any] | None, str | None]:
    """(name, container, reader, records in the lists each read gives, the request
    recorded with it, the format ``ls``
    found for it) of ``file``: a path, ``-``, ``FILE#N``, or a stream a file of exchanges
    holds; ``notes`` gets the exchanges skipped on the way. A stream of a file of
    exchanges has its format found there, from its URL and records
    (:func:`chatx.reading.telling.told`): every command reads it as ``ls`` lists it."""
    if isinstance(file, opening.Source):
        return (file.name, *_source(file, file.name, container, ignored), None, None)
    if not isinstance(file, str):  # an Exchange, whose module a bare stream never loads
        if file.error is not None:
            raise file.error
        framed = _of_exchange(file, container, ignored, file.address)
        return (file.address, *framed, file.request, file.format)
    picked = finding.pick(file)
    name = picked.name
    if picked.stream is not None:
        if notes is not None:
            picked.say_skipped(notes)
        framed = _of_exchange(picked.stream, container, ignored, name)
        return (name, *framed, picked.request, picked.format)
    return (name, *_source(picked.source, name, container, ignored), None, None)


def records_of(
    source: opening.Source,
    container: str | None = None,
    ignored: list[tuple[int, str]] | None = None,
) -> tuple[str, Iterator[Record]]:
    """A bare stream opened by :func:`chatx.reading.opening.open_source`, framed as it is read."""
    kind, _, lists = _source(source, source.name, container, ignored)
    return kind, chain.from_iterable(lists)


def _source(
    source: opening.Source, name: str, container: str | None, ignored: list[tuple[int, str]] | None
) -> tuple[str, Any, Iterator[list[Record]]]:
    stream = source.stream
    read = getattr(stream, "read1", stream.read)
    gathered = containers.Head()
    try:
        while True:
            chunk = read(_BLOCK)
            if not chunk or gathered.add(chunk):
                break
        head = gathered.take()
        kind = container or containers.detect(head[: containers.sniffed(head)])
    except InputError as exc:
        source.close()
        raise exc.located(name) from None
    chunks = chain(containers.pieces(head), iter(lambda: read(_BLOCK), b""))
    reader = containers.get(kind).reader()
    return kind, reader, _lists(chunks, reader, name, ignored, source.close)


def read_bytes(
    data: bytes, container: str | None, ignored: list[tuple[int, str]] | None, name: str
) -> tuple[str, Any, Iterator[Record]]:
    """(container, its reader, records) of a stream held in memory, framed block by block
    as it is read: :func:`frame_bytes`, with the reader, which a caller may ask to leave
    the payloads after a point unparsed (a RawReader's ``raw``)."""
    kind, reader, lists = _in_memory(data, container, ignored, name)
    return kind, reader, chain.from_iterable(lists)


def _of_exchange(
    stream: Exchange, container: str | None, ignored: list[tuple[int, str]] | None, name: str
) -> tuple[str, Any, Iterator[list[Record]]]:
    """The records of a stream a file of exchanges holds: its body in memory, or one too
    big to hold read in pieces (:attr:`chatx.reading.telling.Exchange.pieces`)."""
    if stream.pieces is None:
        return _in_memory(stream.data, container, ignored, name)
    pieces = stream.pieces()
    head, rest = b"", iter(pieces)
    for piece in rest:  # enough to detect the container (a body told by ls has records)
        head += piece
        if containers.ready(head):
            break
    try:
        kind = container or containers.detect(head[: containers.sniffed(head)])
    except InputError as exc:
        raise exc.located(name) from None
    blocks = (piece[at : at + _BLOCK] for piece in chain((head,), rest)
              for at in range(0, len(piece), _BLOCK))  # fmt: skip
    reader = containers.get(kind).reader()
    return kind, reader, _lists(blocks, reader, name, ignored, None)


def _in_memory(
    data: bytes, container: str | None, ignored: list[tuple[int, str]] | None, name: str
) -> tuple[str, Any, Iterator[list[Record]]]:
    data = as_bytes(data, "a stream held in memory")
    try:
        kind = container or containers.detect(data[: containers.sniffed(data)])
    except InputError as exc:
        raise exc.located(name) from None
    blocks = (data[at : at + _BLOCK] for at in range(0, len(data), _BLOCK))
    reader = containers.get(kind).reader()
    return kind, reader, _lists(blocks, reader, name, ignored, None)


def _lists(
    chunks: Iterator[bytes],
    reader: Any,
    name: str,
    ignored: list[tuple[int, str]] | None,
    close: Callable[[], None] | None,
) -> Iterator[list[Record]]:
    """The records of each read, in the list the reader gives them: a read's records are
    there at once (a live input's too), for a caller that takes several at a time."""
    said = getattr(reader, "ignored", None) if ignored is not None else None
    try:
        for chunk in chunks:
            records = reader.feed(chunk)
            if said:
                ignored.extend(said)  # type: ignore[union-attr]
                said.clear()
            if records:
                yield records
        records = reader.finish()
        if said:
            ignored.extend(said)  # type: ignore[union-attr]
        if records:
            yield records
    except InputError as exc:
        raise exc.located(name) from None
    finally:
        if close is not None:
            close()


# -- one input of the commands that assemble (show, collect, diff) ----------------------


@dataclass(slots=True, eq=False)
class Side:
    """One input, read once as it comes: its name, format, container, the notes reading
    and decoding it gave, and what was counted on the way (records are not kept, unless
    ``kept`` is a list)."""

    name: str
    format: str
    container: str
    source: Iterator[Record] = field(repr=False)
    notes: Notes = field(default_factory=Notes)
    ignored: list[tuple[int, str]] = field(default_factory=list, repr=False)
    events: int = 0
    unreadable: list[tuple[int, str]] = field(default_factory=list)  # (line, why)
    kept: list[Record] | None = None
    reader: Any = field(default=None, repr=False)
    # The request recorded with the stream (a HAR's, a cassette's): what collect --as
    # responses fills the envelope from, as convert does.
    request: dict[str, Any] | None = field(default=None, repr=False)

    def decode_only(self, raw: bool = False) -> None:
        """The records from here on are only decoded, never looked at: a payload longer
        than ``LONG_PAYLOAD`` may come raw, for the decoder to parse around the long texts
        it holds (a Responses stream's terminal event repeats every text it had); with
        ``raw`` every payload does, for the decoder's run hook to know most by their
        bytes, as ``convert``'s does (a record of a run is never parsed: its ``data``
        stays None), unless the records are kept for a caller to look at."""
        if codecs.get(self.format).run_hook is not None and hasattr(self.reader, "raw_over"):
            self.reader.raw_over = LONG_PAYLOAD
            if raw and self.kept is None:
                self.reader.raw = True

    def records(self) -> Iterator[Record]:
        """The records not read yet; each input line the reader ignored becomes a warning
        note, said before the record after it, as convert says it."""
        for record in self.source:
            if self.ignored:
                self._say_ignored(record.line)
            yield self._count(record)
        self._say_ignored(None)

    def groups(self, size: int = 256) -> Iterator[list[Record]]:
        """The records not read yet, as :meth:`records` gives them, in lists of up to
        ``size`` for a decoder to find runs in. A record an ignored line's warning comes
        before starts a list, the warning said once the list before it is decoded: the
        notes come in the order :meth:`records` gives them. The records of a list are
        read before the first is decoded: for an input decoded whole (collect, diff),
        not one shown as it arrives."""
        group: list[Record] = []
        for record in self.source:
            if self.ignored and self.ignored[0][0] < record.line:
                if group:
                    yield group
                    group = []
                self._say_ignored(record.line)
            group.append(self._count(record))
            if len(group) >= size:
                yield group
                group = []
        if group:
            yield group
        self._say_ignored(None)

    def _count(self, record: Record) -> Record:
        self.events += 1
        if record.error is not None:
            self.unreadable.append((record.line, record.error))
        if self.kept is not None:
            self.kept.append(record)
        return record

    def drain(self) -> None:
        """Read the rest, so that the counts and notes cover the whole input."""
        for _ in self.records():
            pass

    def _say_ignored(self, before: int | None) -> None:
        said = 0
        for line, why in self.ignored:
            if before is not None and line >= before:
                break
            self.notes.add("warning", why, line)
            said += 1
        del self.ignored[:said]

    def describe(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "format": self.format,
            "container": self.container,
            "events": self.events,
        }


def load(data: bytes, name: str, fmt: str | None = None, *, keep: bool = False) -> Side:
    """A stream held in memory, framed as it is read; its format detected unless ``fmt``
    is given. ``keep`` keeps every record read in ``Side.kept``."""
    ignored: list[tuple[int, str]] = []
    container, reader, records = read_bytes(data, None, ignored, name)
    return _side(name, container, reader, records, ignored, fmt, keep)


def open_side(file: str, fmt: str | None = None, *, keep: bool = False) -> Side:
    """A file, stdin for ``-``, or ``FILE#N``, framed as it is read (see :func:`load`);
    decompressed, and the only stream of a file of exchanges when no ``#N`` names one."""
    ignored: list[tuple[int, str]] = []
    notes = Notes()
    name, container, reader, lists, request, found = _open(file, None, ignored, notes)
    side = _side(name, container, reader, chain.from_iterable(lists), ignored, fmt or found, keep)
    side.request = request
    side.notes.items[:0] = notes.items
    return side


def _side(
    name: str,
    container: str,
    reader: Any,
    records: Iterator[Record],
    ignored: list[tuple[int, str]],
    fmt: str | None,
    keep: bool,
) -> Side:
    try:
        codec, head = (codecs.get(fmt), []) if fmt else codecs.sniff_iter(records)
    except InputError as exc:
        raise exc.located(name) from None
    side = Side(name, codec.name, container, chain(head, records), ignored=ignored, reader=reader)
    if keep:
        side.kept = []
    return side
