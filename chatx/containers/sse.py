"""Server-sent events: the WHATWG event-stream format, read and written.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from chatx.record import DONE, Record

BOM = b"\xef\xbb\xbf"
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


class LineSplitter:
    """Cut a byte stream into lines at LF, CRLF or CR (only those), whatever the chunking.

    A leading UTF-8 BOM is dropped. Lines come back without their line end. Memory holds
    only the unfinished last line.
    """

    __slots__ = ("_head", "_skip_lf", "_tail")

    def __init__(self) -> None:
        self._head: bytes | None = b""  # the start of the stream while a BOM is still possible
        self._skip_lf = False
        self._tail = bytearray()

    def split(self, chunk: bytes) -> list[bytes]:
        """Return the lines that ``chunk`` completes (possibly none)."""
        if self._head is not None:
            chunk = self._drop_bom(chunk)
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if b"\r" in chunk:
            # A final CR already ends its line; whether it was half of a CRLF only
            # decides if the next chunk's leading LF is an empty line or not.
            self._skip_lf = chunk[-1] == 0x0D
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        elif b"\n" not in chunk:
            self._tail += chunk
            return []
        lines = chunk.split(b"\n")
        if self._tail:
            self._tail += lines[0]
            lines[0] = bytes(self._tail)
        self._tail = bytearray(lines.pop())
        return lines

    def finish(self) -> list[bytes]:
        """End of input: return the last line if it had no line end (drain)."""
        if self._head:  # a stream shorter than a BOM that began like one
            self._tail += self._head
        last = bytes(self._tail)
        self._head, self._skip_lf, self._tail = b"", False, bytearray()
        return [last] if last else []

    def _drop_bom(self, chunk: bytes) -> bytes:
        head = self._head + chunk
        if len(head) < len(BOM) and BOM.startswith(head):
            self._head = head
            return b""
        self._head = None
        return head[len(BOM) :] if head.startswith(BOM) else head


def payload_error(data: bytes, exc: ValueError) -> str:
    """Say in a few words why ``data`` is not one JSON value."""
    try:
        data.decode()
    except UnicodeDecodeError as bad:
        return f"invalid UTF-8 at byte {bad.start}"
    if not data.strip():
        return "invalid JSON: empty payload"
    pos, msg = getattr(exc, "pos", 0), getattr(exc, "msg", str(exc))
    # orjson counts pos in characters, so a non-ASCII payload needs the message check.
    if msg.startswith("unexpected end") or pos >= len(data.rstrip()):
        return "invalid JSON: unexpected end of data (half-written line?)"
    line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", pos + 1)
    where = f"column {column}" if line == 1 else f"line {line}, column {column}"
    return f"invalid JSON: {msg} at {where}"


def bad_payload(data: bytes, exc: ValueError, event: str | None, line: int) -> Record:
    """The record for a payload orjson refused: the ``[DONE]`` sentinel, or an error."""
    if data.strip() == b"[DONE]":
        return Record(None, event, line, True)
    return Record(None, event, line, False, payload_error(data, exc))


class SSEReader:
    """Incremental event-stream parser: bytes in, one record per dispatched event out.

    Follows the WHATWG steps with one deliberate difference: a last block that ends
    without its blank line is still dispatched by ``finish()``, since servers that
    close the connection early still meant it. ``last_event_id`` and ``retry`` keep the
    ``id:`` and ``retry:`` fields; records do not carry them.
    """

    __slots__ = ("_data", "_event", "_line", "_lines", "_more", "_start", "last_event_id", "retry")

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._line = 0  # lines read so far
        self.last_event_id = ""
        self.retry: int | None = None
        self._clear_block()

    def feed(self, chunk: bytes) -> list[Record]:
        """Read the next bytes; return the records of the blocks they complete."""
        lines = self._lines.split(chunk)
        return self._parse(lines) if lines else []

    def finish(self) -> list[Record]:
        """End of input: return the records still pending (drain)."""
        out = self._parse(self._lines.finish())
        out.extend(self._parse([b""]))  # dispatch a block left without its blank line
        self._line -= 1
        return out

    def _clear_block(self) -> None:
        self._start = 0  # line of the block's first field; 0 before it
        self._data: bytes | None = None
        self._more: list[bytes] | None = None  # every data line, once there are several
        self._event: str | None = None

    def _parse(self, lines: list[bytes]) -> list[Record]:
        # The hot path: one tight loop over lines, state in locals.
        out: list[Record] = []
        append = out.append
        loads = orjson.loads
        n, start, data, more, event = self._line, self._start, self._data, self._more, self._event
        for line in lines:
            n += 1
            if not line:
                if data is not None:
                    if more is not None:
                        data = b"\n".join(more)
                    try:
                        append(Record(loads(data), event, start))
                    except ValueError as exc:
                        append(bad_payload(data, exc, event, start))
                start, data, more, event = 0, None, None, None
                continue
            if line[:6] == b"data: ":
                value = line[6:]
            elif line[0] == 0x3A:  # ":" starts a comment (OpenRouter's ": OPENROUTER PROCESSING")
                continue
            else:
                name, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if not start:
                    start = n
                if name != b"data":
                    # Bedrock Mantle writes event: after data:; it still names the block.
                    if name == b"event":
                        event = value.decode("utf-8", "replace") or None
                    else:
                        self._other_field(name, value)
                    continue
            if not start:
                start = n
            if data is None:
                data = value
            elif more is None:
                more = [data, value]
            else:
                more.append(value)
        self._line, self._start, self._data, self._more, self._event = n, start, data, more, event
        return out

    def _other_field(self, name: bytes, value: bytes) -> None:
        if name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            # More digits than int() accepts (4300) is no sane delay: keep the last one.
            with contextlib.suppress(ValueError):
                self.retry = int(value)


class SSEWriter:
    """Frame payloads as server-sent events; ``DONE`` becomes ``data: [DONE]``."""

    __slots__ = ("_event_names",)

    def __init__(self, event_names: bool = False) -> None:
        self._event_names = event_names

    def write(self, payloads: list[Any]) -> bytes:
        """Return the bytes for these payloads (JSON values or ``DONE``)."""
        out: list[bytes] = []
        append = out.append
        dumps = orjson.dumps
        names = self._event_names
        for payload in payloads:
            if payload is DONE:
                append(b"data: [DONE]\n\n")
                continue
            if names and type(payload) is dict:
                append(_event_line(payload.get("type")))
            append(b"data: ")
            append(dumps(payload))
            append(b"\n\n")
        return b"".join(out)

    def finish(self) -> bytes:
        """End of output: nothing to close in SSE."""
        return b""


def _event_line(name: Any) -> bytes:
    # A CR or LF in the name would end the field early and break the framing; the
    # payload's "type" still carries it, so the line is left out instead.
    if not isinstance(name, str) or "\n" in name or "\r" in name:
        return b""
    return b"event: " + name.encode() + b"\n"


def probe(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts an event stream."""
    return 100 if head.removeprefix(BOM).lstrip().startswith(_SSE_FIELDS) else 0
