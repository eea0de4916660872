"""Server-sent events: the WHATWG event-stream format, read and written.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from chatx.errors import InputError
from chatx.record import DONE, Record

BOM = b"\xef\xbb\xbf"
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


# No event is this long; a line that is has no end in sight (a binary file, a stream
# without line ends). Reading stops there instead of holding all of it in memory.
MAX_LINE = 64 << 20


class LineTooLong(Exception):
    """A line grew past :data:`MAX_LINE`; ``lines`` are the complete lines before it."""

    def __init__(self, lines: list[bytes], offset: int | None, limit: int) -> None:
        super().__init__(f"a line longer than {limit >> 20} MiB")
        self.lines = lines
        self.offset = offset  # where the long line starts, in bytes from the input start
        self.limit = limit

    def error(self, line: int) -> InputError:
        """The error to report, once the reader knows the line number."""
        return InputError(
            f"a line longer than {self.limit >> 20} MiB starts here: reading stopped",
            line=line,
            offset=self.offset,
            expected="one event per line or block",
        )


class LineSplitter:
    """Cut a byte stream into lines at LF, CRLF or CR (only those), whatever the chunking.

    A leading UTF-8 BOM is dropped. Lines come back without their line end (as bytes, or
    as a bytearray when they began in an earlier chunk). Memory holds
    only the unfinished last line; one longer than ``max_line`` raises :class:`LineTooLong`
    (with the lines before it), and so does every call after that.
    """

    __slots__ = ("_failed", "_fed", "_head", "_skip_lf", "_tail", "max_line")

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._head: bytes | None = b""  # the start of the stream while a BOM is still possible
        self._skip_lf = False
        self._tail = bytearray()
        self._fed = 0  # bytes taken so far, for the offset of a line too long
        self._failed: LineTooLong | None = None
        self.max_line = max_line

    def split(self, chunk: bytes) -> list[bytes]:
        """Return the lines that ``chunk`` completes (possibly none)."""
        if self._failed is not None:
            raise LineTooLong([], self._failed.offset, self.max_line)
        self._fed += len(chunk)
        if self._head is not None:
            chunk = self._drop_bom(chunk)
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        long_chunk = len(chunk) > self.max_line
        if b"\r" in chunk:
            # A final CR already ends its line; whether it was half of a CRLF only
            # decides if the next chunk's leading LF is an empty line or not.
            self._skip_lf = chunk[-1] == 0x0D
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        elif b"\n" not in chunk:
            self._tail += chunk
            if len(self._tail) > self.max_line:
                self._fail([], self._fed - len(self._tail))
            return []
        lines = chunk.split(b"\n")
        if self._tail:
            # The line begun in an earlier chunk is handed out as the bytearray it grew
            # in: a long one is not copied once more.
            self._tail += lines[0]
            lines[0] = self._tail  # type: ignore[call-overload]
        self._tail = bytearray(lines.pop())
        if long_chunk or len(lines[0]) > self.max_line:
            self._check(lines)
        if len(self._tail) > self.max_line:
            self._fail(lines, self._fed - len(self._tail))
        return lines

    def finish(self) -> list[bytes]:
        """End of input: return the last line if it had no line end (drain)."""
        if self._failed is not None:
            raise LineTooLong([], self._failed.offset, self.max_line)
        if self._head:  # a stream shorter than a BOM that began like one
            self._tail += self._head
        last = self._tail
        self._head, self._skip_lf, self._tail = b"", False, bytearray()
        return [last] if last else []

    def _check(self, lines: list[bytes]) -> None:
        # Only a chunk longer than the limit can hold a complete line that long.
        limit = self.max_line
        for number, line in enumerate(lines):
            if len(line) > limit:
                self._fail(lines[:number], None)

    def _fail(self, lines: list[bytes], offset: int | None) -> None:
        self._tail = bytearray()
        self._failed = LineTooLong(lines, offset, self.max_line)
        raise self._failed

    def _drop_bom(self, chunk: bytes) -> bytes:
        head = self._head + chunk
        if len(head) < len(BOM) and BOM.startswith(head):
            self._head = head
            return b""
        self._head = None
        return head[len(BOM) :] if head.startswith(BOM) else head


# Deeper records are refused at the reader, so that nothing downstream meets them: orjson
# writes at most 254 levels (and an encoder may nest a source field deeper than it came),
# and recursive Python code stops at 1000 frames. Real payloads nest a few dozen levels.
MAX_DEPTH = 200
_DEEP_BYTES = 2 * MAX_DEPTH  # a payload this short cannot nest deeper: no check at all
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep (chatx reads at most {MAX_DEPTH})"


def too_deep(data: bytes, value: Any) -> bool:
    """True when ``value`` (parsed from ``data``) nests more than :data:`MAX_DEPTH` levels.

    Called only for payloads longer than ``2 * MAX_DEPTH`` bytes; counting the brackets
    first keeps it to two fast scans for all but bracket-heavy payloads.
    """
    if data.count(b"{") + data.count(b"[") <= MAX_DEPTH:
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


def payload_error(data: bytes, exc: ValueError, column0: int = 1) -> str:
    """Say in a few words why ``data`` is not one JSON value.

    ``column0`` is the column ``data`` starts at on its first line, for the column said.
    """
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
    # orjson's own words for its limits, said in the user's terms.
    if "depth limit" in msg or "recursion limit" in msg:
        return TOO_DEEP
    elif "infinity" in msg:
        msg = "number out of range (larger than a double can hold)"
    line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", pos + 1)
    if line == 1:
        column += column0 - 1
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

    __slots__ = ("_data", "_event", "_line", "_lines", "_more", "_start", "ignored",
                 "last_event_id", "retry")  # fmt: skip

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._line = 0  # lines read so far
        self.last_event_id = ""
        self.retry: int | None = None
        # (line, why) for each line the spec says to ignore (an unknown field name): the
        # caller says so on stderr, so that nothing is dropped unsaid. Emptied by the caller.
        self.ignored: list[tuple[int, str]] = []
        self._clear_block()

    def feed(self, chunk: bytes) -> list[Record]:
        """Read the next bytes; return the records of the blocks they complete.

        A line longer than :data:`MAX_LINE` raises InputError on the call after the one
        that returns the records before it.
        """
        try:
            lines = self._lines.split(chunk)
        except LineTooLong as exc:
            return self._too_long(exc)
        return self._parse(lines) if lines else []

    def finish(self) -> list[Record]:
        """End of input: return the records still pending (drain)."""
        try:
            lines = self._lines.finish()
        except LineTooLong as exc:
            return self._too_long(exc)
        out = self._parse(lines)
        out.extend(self._parse([b""]))  # dispatch a block left without its blank line
        self._line -= 1
        return out

    def _too_long(self, exc: LineTooLong) -> list[Record]:
        if not exc.lines:
            raise exc.error(self._line + 1) from None
        return self._parse(exc.lines)

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
        deep = _DEEP_BYTES
        n, start, data, more, event = self._line, self._start, self._data, self._more, self._event
        for line in lines:
            n += 1
            if not line:
                if data is not None:
                    if more is not None:
                        data = b"\n".join(more)
                    try:
                        parsed = loads(data)
                    except ValueError as exc:
                        append(bad_payload(data, exc, event, start))
                    else:
                        if len(data) > deep and too_deep(data, parsed):
                            append(Record(None, event, start, False, TOO_DEEP))
                        else:
                            append(Record(parsed, event, start))
                start, data, more, event = 0, None, None, None
                continue
            if line[:6] == b"data: ":
                if type(line) is bytes:
                    value = line[6:]
                else:  # a bytearray (see LineSplitter.split): cut in place, not copied
                    del line[:6]
                    value = line
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
                        self._other_field(name, value, n)
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

    def _other_field(self, name: bytes, value: bytes, line: int) -> None:
        if name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():
                # More digits than int() accepts (4300) is no sane delay: keep the last one.
                with contextlib.suppress(ValueError):
                    self.retry = int(value)
        else:
            self.ignored.append((line, _unknown_field(name)))


def _unknown_field(name: bytes) -> str:
    shown = name.decode("utf-8", "replace")
    shown = repr(shown if len(shown) <= 40 else shown[:39] + "…")
    meant = name.strip().lower().decode("ascii", "replace")
    if meant in ("data", "event", "id", "retry"):
        hint = f"did you mean {meant!r}? field names are exact"
    else:
        hint = "lines start with data:, event:, id:, retry: or :"
    return f"line ignored: {shown} is not an SSE field ({hint})"


class SSEWriter:
    """Frame payloads as server-sent events; ``DONE`` becomes ``data: [DONE]``."""

    __slots__ = ("_event_names", "_event_lines")

    def __init__(self, event_names: bool = False) -> None:
        self._event_names = event_names
        self._event_lines: dict[str, bytes] = {}  # event: and data: of each type met, made once

    def write(self, payloads: list[Any]) -> bytes:
        """Return the bytes for these payloads (JSON values or ``DONE``)."""
        return b"".join(self.frames(payloads))

    def frames(self, payloads: list[Any]) -> list[bytes]:
        """The bytes for these payloads, in order, as one or more pieces (:func:`frames`)."""
        try:
            return self._write(payloads, orjson.dumps)
        except TypeError:
            return self._write(payloads, lenient_dumps)

    def _write(self, payloads: list[Any], dumps: Any) -> list[bytes]:
        out: list[bytes] = []
        append = out.append
        names = self._event_names
        lines = self._event_lines
        for payload in payloads:
            if payload is DONE:
                append(b"data: [DONE]\n\n")
                continue
            if names and type(payload) is dict:
                name = payload.get("type")
                head = lines.get(name) if type(name) is str else None
                if head is None:
                    head = _event_line(name) + b"data: "
                    if type(name) is str and len(lines) < 256:
                        lines[name] = head
                append(head)
            else:
                append(b"data: ")
            append(dumps(payload))
            append(b"\n\n")
        return frames(out)

    def finish(self) -> bytes:
        """End of output: nothing to close in SSE."""
        return b""


LARGE = 1 << 20  # output pieces this long are handed on alone, never joined


def frames(pieces: list[bytes]) -> list[bytes]:
    """``pieces`` as few byte strings to write, joined but for the large ones.

    A long stream ends with events that each repeat its whole text (a Responses
    ``output_text.done``, ``response.completed``): joining them into one string would
    hold that text once more, at the moment memory is at its highest."""
    if sum(map(len, pieces)) <= LARGE:
        return [b"".join(pieces)]
    out: list[bytes] = []
    run: list[bytes] = []
    for piece in pieces:
        if len(piece) > LARGE:
            if run:
                out.append(b"".join(run))
                run = []
            out.append(piece)
        else:
            run.append(piece)
    if run:
        out.append(b"".join(run))
    return out


def lenient_dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps`` for what it refuses by default, used only when it has: dict keys
    that are not strings (written as strings, as JSON must have them) and integers beyond
    64 bits (a sum of two large counts; written as doubles, as JavaScript reads them).
    """
    option |= orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(value, option=option)
    except TypeError:
        return orjson.dumps(_doubles(value), option=option)


def _doubles(value: Any) -> Any:
    kind = type(value)
    if kind is int and not -(1 << 63) <= value < 1 << 64:
        return float(value)
    if kind is dict:
        return {key: _doubles(item) for key, item in value.items()}
    if kind is list:
        return [_doubles(item) for item in value]
    return value


def _event_line(name: Any) -> bytes:
    # A CR or LF in the name would end the field early and break the framing; the
    # payload's "type" still carries it, so the line is left out instead.
    if not isinstance(name, str) or "\n" in name or "\r" in name:
        return b""
    return b"event: " + name.encode() + b"\n"


def probe(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts an event stream."""
    return 100 if head.removeprefix(BOM).lstrip().startswith(_SSE_FIELDS) else 0
