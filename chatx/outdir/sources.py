"""The streams of a many-file run, read from their files: which streams of a file are
converted (:func:`planned`), each output's stem, and the bytes of one job's stream
(:func:`job_input`), a file of recorded exchanges being read once for all its jobs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatx.containers import compressed
from chatx.containers.bodies import BodyError, Entry
from chatx.errors import InputError
from chatx.reading.finding import entries, none_streaming, streams
from chatx.reading.opening import Address, Source, open_source


def stem_of(path: Any) -> str:
    """A file's name without its suffix, nor the compression's (``a.sse.gz`` → ``a``)."""
    name = compressed.without_suffix(str(path.name))
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def planned(path: Any, index: int | None) -> list[tuple[int | None, str | None]]:
    """The streams of ``path`` a many-file run converts, each with the format ``ls``
    found for it: ``[(None, None)]`` for a bare stream (its records tell), else ``index``
    or every exchange whose body is a stream or cannot be decoded (its job then fails,
    naming it); an InputError when it holds no stream."""
    with open_source(Address(str(path), index)) as source:
        if source.kind is None:
            if index not in (None, 0):
                raise InputError(f"no stream #{index}: a bare stream is one stream (#0)")
            return [(None, None)]
        found: list[tuple[int | None, str | None]] = []
        total = unknown = 0
        for stream in streams(source, index):
            total += 1
            unknown += stream.kind == "unknown"
            if index is not None or stream.readable or stream.kind == "unreadable":
                found.append((stream.index, stream.format))
        if not found:
            raise none_streaming(source.name, total, [], unknown)
        return found


class _Cursor:
    """The last file of exchanges a job read, kept open: jobs come in file order and
    stream order, so a file is read once however many of its streams are converted."""

    source: Source | None = None
    entries: Iterator[Entry] | None = None
    current: Entry | None = None


_cursor = _Cursor()


def job_input(path: Any, index: int | None) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes of one job's stream (decompressed) and the request recorded with it."""
    if index is None:
        data = path.read_bytes()
        kind = compressed.detect(data[: compressed.MAGIC_BYTES])
        return (compressed.decompress(data, kind) if kind else data), None
    entry = _entry(str(path), index)
    try:
        return entry.body(), entry.request
    except BodyError as exc:
        raise InputError(f"its body cannot be decoded ({exc})", file=f"{path}#{index}") from None


def release() -> None:
    """Close the file of exchanges the jobs were reading."""
    if _cursor.source is not None:
        _cursor.source.close()
    _cursor.source = _cursor.entries = _cursor.current = None


def _entry(file: str, index: int) -> Entry:
    cursor = _cursor
    here = cursor.source is not None and cursor.source.address.file == file
    if not (here and cursor.current is not None and cursor.current.index <= index):
        if cursor.source is not None:
            cursor.source.close()
        cursor.source = open_source(Address(file))
        cursor.entries, cursor.current = entries(cursor.source), None
    while cursor.current is None or cursor.current.index < index:
        cursor.current = next(cursor.entries, None)  # type: ignore[arg-type]
        if cursor.current is None:
            cursor.source.close()  # type: ignore[union-attr]
            cursor.source = None
            raise InputError(f"no stream #{index} in the file", file=file)
    return cursor.current
