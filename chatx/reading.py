"""Reading inputs into records: a whole input held in memory, or a file or stdin read
as it arrives (the container detected from the first bytes unless given)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from chatx import containers
from chatx.containers.sse import MAX_LINE
from chatx.errors import InputError
from chatx.notes import Notes
from chatx.record import Record

_BLOCK = 1 << 16  # one read of a file: what a pipe has, or up to 64 KiB


def read_records(
    data: bytes, container: str | None = None, notes: Notes | None = None
) -> tuple[str, list[Record]]:
    """Frame a whole stream held in memory into records; return the container used.

    ``notes`` gets a warning for each line the reader ignored (an unknown SSE field).
    """
    name = container or containers.detect(data[: containers.sniffed(data)])
    reader = containers.get(name).reader()
    records = reader.feed(data)
    records.extend(reader.finish())
    if notes is not None:
        for line, why in getattr(reader, "ignored", ()):
            notes.add("warning", why, line)
    return name, records


def open_records(
    file: str, container: str | None = None, ignored: list[tuple[int, str]] | None = None
) -> tuple[str, Iterator[Record]]:
    """Open ``file`` (``-``: stdin) and frame it into records as they are read.

    The container is detected from the first bytes unless given; errors are InputErrors
    that name the file. ``ignored`` gets (line, why) for each input line the reader
    ignored (an SSE line that is no field), by the time the records after it come out.
    """
    name = "<stdin>" if file == "-" else file
    if file == "-":
        stream: Any = sys.stdin.buffer
    else:
        try:
            stream = open(file, "rb")  # noqa: SIM115 - closed when the records run out
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=file) from None
    read = getattr(stream, "read1", stream.read)
    head = b""
    try:
        while not containers.ready(head) and len(head) <= MAX_LINE:
            chunk = read(_BLOCK)
            if not chunk:
                break
            head += chunk
        kind = container or containers.detect(head[: containers.sniffed(head)])
    except InputError as exc:
        if file != "-":
            stream.close()
        raise exc.located(name) from None
    return kind, _frame(stream, head, kind, name, ignored, close=file != "-")


def _frame(
    stream: Any,
    head: bytes,
    container: str,
    name: str,
    ignored: list[tuple[int, str]] | None,
    *,
    close: bool,
) -> Iterator[Record]:
    reader = containers.get(container).reader()
    said = getattr(reader, "ignored", None) if ignored is not None else None
    read = getattr(stream, "read1", stream.read)
    try:
        chunk = head
        while chunk:
            records = reader.feed(chunk)
            if said:
                ignored.extend(said)  # type: ignore[union-attr]
                said.clear()
            yield from records
            chunk = read(_BLOCK)
        records = reader.finish()
        if said:
            ignored.extend(said)  # type: ignore[union-attr]
        yield from records
    except InputError as exc:
        raise exc.located(name) from None
    finally:
        if close:
            stream.close()
