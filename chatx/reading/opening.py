"""Inputs as the commands name them: a file, stdin (``-``), or one stream of a file that
holds several, addressed ``FILE#N`` with N as ``chatx ls`` prints it.

:func:`open_source` opens an input below every container: compressed bytes are read
decompressed (by their magic), and the first bytes tell a bare stream from a file of
recorded exchanges (:mod:`chatx.containers.demux`). What such a file holds is found by
:mod:`chatx.reading.finding`, the next step.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from chatx.containers.lines import BOM
from chatx.errors import InputError
from chatx.limits import MAX_LAYERS, MAX_LINE

_ADDRESS = re.compile(r"^(.*)#(\d+)$", re.S)
_READ = 1 << 16
_HEAD_MAX = 1 << 14  # a head that says nothing by then is a bare stream's

# What lets a plain SSE file be opened without loading the readers it does not need.
# The first byte of each compression's magic (gzip, bz2, xz, zstd: chatx.containers.
# compressed's table, tests/codecs/test_startup.py holds the two alike): a head that
# starts otherwise is not compressed.
_MAGIC_FIRST = (b"\x1f", b"B", b"\xfd", b"(")
# A head whose first line is an SSE field is a bare stream: chatx.containers.demux reads
# such a line as a top-level YAML key no cassette has and decides so at its first line.
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


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
        head, ended = _head(raw, b"", _undecided)
        compression = _compression(head)
        stream, head, ended = _decompressed(raw, head, ended, closers)
        if not ended:
            more, ended = _head(stream, head, lambda h: not _decidable(h) and len(h) < _HEAD_MAX)
            head = more
        kind = None if _bare(head) is not None else _demux().detect(head)
        if compression is None and file != "-" and raw.seekable():
            raw.seek(0)  # a plain file is read again from its start, through no wrapper
        else:
            # A terminal's end of input is said once (Ctrl-D): what follows the head
            # must not read past it, or it would wait for a second one.
            stream = prefixed(head, io.BytesIO() if ended else stream)
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
        compression = _compression(head)
        if compression is None:
            return stream, head, ended
        from chatx.containers import compressed

        rest = io.BytesIO() if ended else stream
        stream = compressed.open_stream(compression, prefixed(head, rest))
        closers.append(stream.close)
        head, ended = _head(stream, b"", _undecided)
    if _compression(head) is not None:
        raise InputError(
            f"compressed more than {MAX_LAYERS} times over (chatx undoes at most {MAX_LAYERS}"
            " layers: MAX_LAYERS)"
        )
    return stream, head, ended


def _compression(head: bytes) -> str | None:
    """The compression ``head`` starts with (:func:`chatx.containers.compressed.detect`)."""
    if not head.startswith(_MAGIC_FIRST):
        return None
    from chatx.containers import compressed

    return compressed.detect(head)


def _undecided(head: bytes) -> bool:
    """True while ``head`` may yet be a compression's magic, too short to say."""
    if head and not head.startswith(_MAGIC_FIRST):
        return False
    from chatx.containers import compressed

    return compressed.undecided(head)


def _bare(head: bytes) -> bytes | None:
    """``head``'s text (its BOM and leading white space left out) when its first line is
    an SSE field, so that it is a bare stream; None when demux is to tell."""
    text = head.removeprefix(BOM).lstrip()
    return text if text.startswith(_SSE_FIELDS) else None


def _decidable(head: bytes) -> bool:
    """:func:`chatx.containers.demux.decidable`: a bare SSE stream's head is, once it
    holds a whole line."""
    text = _bare(head)
    return b"\n" in text if text is not None else _demux().decidable(head)


def _demux() -> Any:
    from chatx.containers import demux

    return demux


class Prefixed(io.RawIOBase):
    """``head`` (bytes already read to look at them), then the rest of ``rest``: what
    a pipe or a decompressed layer gives after its head was read."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self.head = memoryview(head)
        self.rest = rest
        self._read = getattr(rest, "read1", rest.read)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            size = min(len(buffer), len(self.head))
            buffer[:size] = self.head[:size]
            self.head = self.head[size:]
            return size
        data = self._read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def prefixed(head: bytes, rest: Any) -> BinaryIO:
    """A buffered binary file object reading ``head`` then ``rest``."""
    return io.BufferedReader(Prefixed(head, rest), 1 << 16)


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
