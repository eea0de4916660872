"""httprr traces (Go, ``golang.org/x/oscar/internal/httprr`` and its copies): a line
``httprr trace v1``, then per exchange a line ``<request bytes> <response bytes>`` and
exactly that many bytes of raw HTTP request and raw HTTP response, with nothing between.

The byte counts are what frame the file: a hand-edited request line may end in a bare
LF, so nothing here splits the file into lines. Each message's head ends at its first
empty line (CRLF or LF); a chunked response body is joined from its chunks.

The trace is read as it comes. A response longer than :data:`BIG` (a 300 MB stream
recorded whole) goes to an unnamed temporary file (:class:`~chatx.containers.bodies.Spool`)
as it is read, and its body is read from there in pieces, de-chunked and decompressed as
it goes, by every command.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from chatx.containers.bodies import (
    BodyError,
    Entry,
    Spool,
    decoded,
    decoded_pieces,
    json_object,
    reader,
)

_HEADER = b"httprr trace v1\n"
_COUNTS = re.compile(rb"(\d+) (\d+)\n")
_HEAD_END = re.compile(rb"\r?\n\r?\n")
BIG = 8 << 20  # a response longer than this is read into a spool as it comes
_READ = 1 << 20
_COUNTS_LINE = 1 << 12  # a counts line is looked for in this many bytes
_HEAD = 1 << 16  # the head of a response in a spool is looked for in its first bytes


def entries(stream: BinaryIO) -> Iterator[Entry]:
    from chatx.errors import InputError

    trace = _Trace(stream)
    if trace.take(len(_HEADER)) != _HEADER:
        raise InputError("not an httprr trace: no 'httprr trace v1' line", line=1)
    index = 0
    while trace.ahead(1):
        line = trace.line
        counts = trace.counts()
        if counts is None:
            raise InputError(
                f"exchange {index}: no '<request bytes> <response bytes>' line", line=line
            )
        request_size, response_size = int(counts.group(1)), int(counts.group(2))
        request = trace.take(request_size)
        response: bytes | Spool = (
            trace.take(response_size) if response_size <= BIG else trace.spooled(response_size)
        )
        got = len(request) + (len(response) if isinstance(response, bytes) else response.size)
        if got < request_size + response_size:
            raise InputError(
                f"truncated trace: exchange {index} says {request_size + response_size} bytes,"
                f" {got} are left",
                line=line,
            )
        yield _entry(index, line, request, response)
        index += 1


class _Trace:
    """The trace read as it comes, the line each byte is on counted as the bytes pass."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buf = b""
        self.pos = 0
        self.line = 1

    def ahead(self, size: int) -> bool:
        """Whether ``size`` bytes are left (read until they are, or the trace ends)."""
        while len(self.buf) - self.pos < size:
            data = self.stream.read(max(_READ, size - len(self.buf) + self.pos))
            if not data:
                return False
            self.buf = self.buf[self.pos :] + data
            self.pos = 0
        return True

    def counts(self) -> re.Match[bytes] | None:
        self.ahead(_COUNTS_LINE)
        counts = _COUNTS.match(self.buf, self.pos)
        if counts is not None:
            self.take(counts.end() - self.pos)
        return counts

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes, or all that are left when fewer (read as they come:
        a count past the trace's end reads no more than the trace)."""
        while len(self.buf) - self.pos < size and self.ahead(len(self.buf) - self.pos + 1):
            pass
        data = self.buf[self.pos : self.pos + size]
        self.pos += len(data)
        self.line += data.count(b"\n")
        return data

    def spooled(self, size: int) -> Spool:
        """The next ``size`` bytes (all that are left when fewer) in a spool."""
        spool = Spool()
        while spool.size < size and (data := self.take(min(_READ, size - spool.size))):
            spool.write(data)
        spool.done()
        return spool


def _entry(index: int, line: int, request: bytes, response: bytes | Spool) -> Entry:
    first, _, request_body = _message(request)
    parts = first.split(b" ")
    status_head, headers, _ = _message(response if isinstance(response, bytes) else _head(response))
    status = status_head.split(b" ")
    code = int(status[1]) if len(status) > 1 and status[1].isdigit() else None
    held = response

    def stream() -> Iterator[bytes]:
        return _body_pieces(held) if isinstance(held, Spool) else iter((_body(held),))

    return Entry(
        index,
        line,
        method=parts[0].decode("latin-1") if parts[0] else None,
        url=parts[1].decode("latin-1") if len(parts) > 1 else None,
        status=code,
        content_type=headers.get("content-type"),
        request=json_object(request_body),
        load=lambda: b"".join(stream()),
        stream=stream if isinstance(response, Spool) else None,
    )


def _head(spool: Spool) -> bytes:
    """A response in a spool to the end of its head (its first empty line); all of it
    when that is not in its first _HEAD bytes (a head that long, or none)."""
    start = next(spool.pieces(_HEAD), b"")
    end = _HEAD_END.search(start)
    return start[: end.end()] if end else b"".join(spool.pieces())


def _message(raw: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """The start line, the headers (lower-case names) and the body of an HTTP message."""
    end = _HEAD_END.search(raw)
    head, body = (raw[: end.start()], raw[end.end() :]) if end else (raw, b"")
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    headers: dict[str, str] = {}
    for text in lines[1:]:
        name, colon, value = text.partition(b":")
        if colon:
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return lines[0], headers, body


def _body(response: bytes) -> bytes:
    _, headers, body = _message(response)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _dechunk(body)
    return decoded(body, headers.get("content-encoding"))


def _body_pieces(spool: Spool) -> Iterator[bytes]:
    """:func:`_body` of a response held in a spool, in pieces."""
    head = _head(spool)
    _, headers, _ = _message(head)
    end = _HEAD_END.search(head)
    pieces = _after(spool, end.end() if end else spool.size)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        pieces = _dechunked(pieces)
    return decoded_pieces(pieces, headers.get("content-encoding"))


def _after(spool: Spool, start: int) -> Iterator[bytes]:
    """A spool's bytes from ``start``."""
    at = 0
    for piece in spool.pieces():
        if at + len(piece) > start:
            yield piece[max(0, start - at) :]
        at += len(piece)


def _dechunk(body: bytes) -> bytes:
    return b"".join(_dechunked(iter((body,))))


def _dechunked(body: Iterator[bytes]) -> Iterator[bytes]:
    """A chunked body's data, its chunks' in turn, read from its pieces as they come."""
    chunks = reader(body)
    while True:
        size_line = chunks.readline()
        if not size_line.endswith(b"\n"):
            raise BodyError("bad chunked body: a chunk without its size line")
        size_text = size_line[:-1].split(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            size = -1
        if size < 0:
            raise BodyError(f"bad chunked body: chunk size {size_text!r}")
        if size == 0:
            return
        while size and (data := chunks.read(min(size, _READ))):
            yield data
            size -= len(data)
        chunks.read(2 if chunks.peek(2)[:2] == b"\r\n" else 1)
