"""A JSON array of events, read element by element as its bytes arrive.

Memory holds the element being read, not the array: a 72 MB array is read as its SSE
form is. A one-element-per-line array (what chatx and most recorders write) is cut at
its line ends and each line parsed whole; any other layout is cut by a scan that skips
strings and counts brackets. An array that does not parse (cut short, a bad element)
gives the elements that do and an error record for each that does not, at its line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from itertools import repeat
from typing import Any, cast

import orjson

from chatx.containers import exact
from chatx.containers.exact import DIGITS, LONG_RUN, Reading
from chatx.containers.lines import BOM
from chatx.containers.payload import (
    _DEEP_BYTES,
    TOO_DEEP,
    checked,
    frames,
    lenient_dumps,
    payload_error,
    too_deep,
)
from chatx.errors import InputError
from chatx.limits import MAX_LINE, size
from chatx.record import DONE, Dumped, Record

# Strings (so brackets and commas inside them are skipped) and the structural bytes.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.DOTALL)
# The same, read as the bytes arrive: a string without its closing quote yet has no
# group 1 (it goes on in the next chunk), and _IN_STRING goes on with it there.
_STREAM = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{},]', re.DOTALL)
_IN_STRING = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*(")?', re.DOTALL)
# [ \t\n]* matches at every position (empty at worst), so its match is never None.
_space = cast("Callable[[bytes | bytearray, int], re.Match[bytes]]", re.compile(rb"[ \t\n]*").match)
_JSON_SPACE = b" \t\n\r"
_STRIPPED = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.strip() strips
_KINDS = {dict: "an object", str: "a string", int: "a number", float: "a number",
          bool: "a boolean", type(None): "null"}  # fmt: skip
_CUT = "invalid JSON: unexpected end of data (half-written line?)"
_COMMA, _CLOSE = 0x2C, 0x5D


class JSONArrayReader:
    """Incremental JSON-array reader: one record per element, as soon as it is whole.

    Input that is not an array (one object printed over several lines, or something
    else) is read whole at ``finish()``.
    """

    __slots__ = ("_after_comma", "_at", "_bad", "_blank", "_buf", "_closed", "_col", "_count", "_cr", "_failed",
                 "_depth", "_fast", "_head", "_line", "_mode", "_reading", "_string", "raw", "raw_over")  # fmt: skip

    def __init__(self) -> None:
        self._head = bytearray()  # the first bytes, until one that is not blank says what comes
        self._failed: InputError | None = None  # an element too long: said on every call after
        self._blank = 0  # _head is blank (or the BOM) up to here
        self._mode: str | None = None  # "array", or "whole" for anything else
        self._buf = bytearray()  # array: from just after the last separator read
        self._cr = False  # the last chunk ended with CR (its LF may start the next)
        self._line = 1  # the line of _buf[0]
        self._col = 0  # the column of _buf[0] on its line, from 0
        self._at = 0  # where the scan of the element being read goes on
        self._depth = 1  # the nesting there (the array itself is one level)
        self._string = False  # the scan stopped inside a string
        self._fast = True  # the element may still be read as one line
        self._after_comma = False  # the element being read follows a comma
        self._closed = False  # the array's "]" was read: what follows is left out
        self._count = 0  # records made
        self._bad = False  # something other than elements and blanks: not an empty array
        self._reading = Reading()  # lone surrogates, mended record after record
        # Elements each one line (as chatx and most tools write an array of events) come
        # unparsed (Record.raw), for a decoder that reads raw; any other is parsed.
        self.raw = False
        # Elements longer than this stay raw even when ``raw`` is off (see LONG_PAYLOAD).
        self.raw_over = sys.maxsize

    def feed(self, chunk: bytes) -> list[Record]:
        """Read the next bytes; return the records of the elements they complete.

        An element (or a whole value that is no array) longer than
        :data:`~chatx.limits.MAX_LINE` raises InputError, on the call after the one that
        returns the records before it: memory holds one element, and no more than that.
        """
        if self._failed is not None:
            raise self._failed
        if self._mode is None:
            chunk = self._start(chunk)
            if self._mode != "array":
                self._check_whole()
                return []
        elif self._mode == "whole":
            self._buf += chunk
            self._check_whole()
            return []
        if self._closed:
            self._bad = self._bad or bool(chunk.strip(_JSON_SPACE))
            return []
        self._buf += self._unify(chunk)
        out = self._read(final=False)
        if len(self._buf) > MAX_LINE:
            self._buf = bytearray()
            self._failed = InputError(
                f"an element longer than {size(MAX_LINE)} starts here: reading stopped",
                line=self._line,
                expected="one event per element",
            )
        return out

    def _check_whole(self) -> None:
        if len(self._buf) > MAX_LINE:
            self._buf = bytearray()
            self._failed = InputError(
                f"a JSON value longer than {size(MAX_LINE)}: reading stopped",
                line=1,
                expected="a JSON array of events, or one object",
            )
            raise self._failed

    def finish(self) -> list[Record]:
        """End of input: the last element, and anything not an array (drain)."""
        if self._failed is not None:
            raise self._failed
        if self._mode == "array":
            out = [] if self._closed else self._read(final=True)
            if not self._count and (self._bad or not self._closed):
                out.append(Record(None, None, 1, False, _CUT))
            return out
        buf = bytes(self._buf if self._mode == "whole" else self._head)
        self._buf = bytearray()
        return _whole(buf.removeprefix(BOM))

    # -- reading ---------------------------------------------------------------------

    def _start(self, chunk: bytes) -> bytes:
        """Keep the first bytes until one that is not blank: a "[" starts an array (the
        bytes after it are returned), anything else is read whole."""
        # Grown in place, and only the bytes not looked at yet are scanned: blank lines
        # before the array cost time in proportion, however many pieces they come in.
        self._head += chunk
        held = self._head
        if len(held) < len(BOM) and BOM.startswith(held):
            return b""
        begin = max(self._blank, len(BOM) if held.startswith(BOM) else 0)
        self._blank = _STRIPPED.match(held, begin).end()  # type: ignore[union-attr]
        if self._blank == len(held):
            return b""
        head = bytes(held)
        self._head, self._blank = bytearray(), 0
        text = head.removeprefix(BOM)
        rest = text.lstrip()
        if rest[:1] != b"[":
            self._mode = "whole"
            self._buf = bytearray(head)
            return b""
        self._mode = "array"
        before = self._unify(text[: len(text) - len(rest) + 1])  # the blanks and "["
        self._bad = bool(before[:-1].strip(_JSON_SPACE))  # orjson takes no other blank
        self._line += before.count(b"\n")
        self._col = len(before) - before.rfind(b"\n") - 1
        return rest[1:]

    def _unify(self, chunk: bytes) -> bytes:
        """LF for CRLF and CR, whatever the chunking: valid JSON has CR only as a blank,
        and lines are counted at LF."""
        if self._cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return chunk

    def _read(self, final: bool) -> list[Record]:
        """The records of the elements whole in the buffer; what they took is dropped."""
        out: list[Record] = []
        buf = self._buf
        pos = 0  # just after the last separator read
        while True:
            start = _space(buf, pos).end()
            # Blanks between elements are counted and dropped as they are read, not
            # scanned again with every piece that follows.
            pos = self._skip(buf, pos, start)
            if start == len(buf):
                break
            fast = self._fast and self._at <= start
            lines = self._lines_read(buf, start) if fast else None
            if lines is not None:  # elements one a line, each with its comma
                out += lines[0]
                self._count += len(lines[0])
                self._after_comma = True
                pos = self._advance(buf, pos, lines[1])
                continue
            found = self._line_read(buf, pos, start) if fast else None
            if found is True:  # the line is whole, what follows it is not here yet
                if not final:
                    break
                found = None
            if found is not None:
                record, end = found
                out.append(record)
                self._count += 1
            else:
                end = self._scanned(buf, pos, start, final, out)
                if end < 0:  # the element goes on in the next chunk
                    break
            self._after_comma = buf[end] == _COMMA
            pos = self._advance(buf, pos, end + 1)
            if not self._after_comma:  # the array's "]" (or a "}"): what follows is left out
                self._closed = True
                self._bad = self._bad or buf[end] != _CLOSE or bool(buf[pos:].strip(_JSON_SPACE))
                pos = len(buf)
                break
        if pos:
            del buf[:pos]
            self._at = max(0, self._at - pos)
        return out

    def _scanned(self, buf: bytearray, pos: int, start: int, final: bool, out: list[Record]) -> int:
        """The element at ``start`` read by the scan, into ``out``: the separator after it,
        or -1 when it goes on in the next chunk (at the end of input, what is left is
        salvaged)."""
        end = self._scan(buf, max(self._at, start))
        if end < 0:
            if final:
                out += self._salvage(buf, pos)
            return end
        piece = bytes(buf[start:end]).rstrip()
        if piece:
            out.append(self._element(piece, *self._where(buf, pos, start)))
            self._count += 1
        elif buf[end] == _COMMA or self._after_comma:
            self._bad = True  # an element left empty
        return end

    def _lines_read(self, buf: bytearray, start: int) -> tuple[list[Record], int] | None:
        """The elements from ``start`` (a line's first element) that are each one whole
        line ended by their comma, as :meth:`_line_read` reads each, and the position
        after the last one's line; None when the first is not so. One loop over the
        lines, where :meth:`_read` steps element by element: an array of a million
        events, one a line as chatx and most tools write one, reads at about a JSON-lines
        file's speed."""
        last = buf.rfind(b"\n", start)
        if last < 0:
            return None
        if self.raw:
            whole = self._whole_lines(bytes(buf[start:last]))
            if whole is not None:
                return whole, last + 1
        out: list[Record] = []
        append = out.append
        loads, space = orjson.loads, _JSON_SPACE
        raw, over = self.raw, self.raw_over
        line, end = self._line, start
        for text in bytes(buf[start:last]).split(b"\n"):
            piece = text.strip(space)
            if piece[-1:] != b",":
                break
            piece = piece[:-1].rstrip(space)
            if not piece or piece[0] == _COMMA or piece[0] == _CLOSE:
                break
            try:
                value = loads(piece)
            except ValueError:
                break
            if raw or len(piece) > over:
                append(Record(None, None, line, False, None, piece))
            else:
                append(self._handed(_record(piece, value, line), piece))
            line += 1
            end += len(text) + 1
        return (out, end) if out else None

    def _whole_lines(self, chunk: bytes) -> list[Record] | None:
        """Raw: the records of ``chunk``'s lines when each is one element and its comma,
        nothing around them (as chatx writes an array), each read by orjson to be sure
        it is one value (two on a line, or one over several, are not); else None."""
        if chunk[-1:] != b"," or chunk.count(b",\n") != chunk.count(b"\n"):
            return None
        pieces = chunk[:-1].split(b",\n")
        try:
            for _ in map(orjson.loads, pieces):
                pass
        except ValueError:
            return None
        line = self._line
        lines = range(line, line + len(pieces))
        return list(
            map(Record, repeat(None), repeat(None), lines, repeat(False), repeat(None), pieces)
        )

    def _line_read(self, buf: bytearray, pos: int, start: int) -> Any:
        """The element at ``start`` read as the rest of its line (``[record, end]``, end
        the separator after it); True when its line is whole but what follows is not
        here yet; None when it is not one line (the scan reads it)."""
        if buf[start] == _COMMA or buf[start] == _CLOSE:
            return None
        nl = buf.find(b"\n", start)
        if nl < 0:
            return None
        end = nl - 1 if buf[nl - 1] == _COMMA else nl
        piece = bytes(buf[start:end]).rstrip()
        try:
            value = orjson.loads(piece)
        except ValueError:
            self._fast = False
            return None
        # A whole JSON value ends outside any string: what follows it is the array's.
        sep = _space(buf, end).end()
        if sep == len(buf):
            return True
        if buf[sep] != _COMMA and buf[sep] != _CLOSE:
            self._fast = False
            return None
        line = self._where(buf, pos, start)[0]
        if self.raw or len(piece) > self.raw_over:
            # The line is one JSON value (orjson read it whole): the decoder reads the
            # bytes, as those of a JSON-lines or SSE record, exactly where need be.
            return [Record(None, None, line, False, None, piece), sep]
        return [self._handed(_record(piece, value, line), piece), sep]

    def _scan(self, buf: bytearray, at: int) -> int:
        """The separator that ends the element being read (its "," or the array's "]"),
        or -1 when it goes on in the next chunk (where the scan goes on)."""
        depth = self._depth
        if self._string:
            match = _IN_STRING.match(buf, at)
            at = match.end()  # type: ignore[union-attr]
            if match.group(1) is None:  # type: ignore[union-attr]
                self._at = at
                return -1
            self._string = False
        for match in _STREAM.finditer(buf, at):
            byte = buf[match.start()]
            if byte == 0x22:  # a string
                if match.group(1) is None:
                    self._at, self._depth, self._string = match.end(), depth, True
                    return -1
            elif byte == 0x5B or byte == 0x7B:  # [ {
                depth += 1
            elif byte == _CLOSE or byte == 0x7D:  # ] }
                depth -= 1
                if depth == 0:
                    return match.start()
            elif depth == 1:  # a comma between elements
                return match.start()
        self._at, self._depth = len(buf), depth
        return -1

    def _salvage(self, buf: bytearray, pos: int) -> list[Record]:
        """End of input inside an element: what is left, cut as a whole array that does
        not parse is cut (an unclosed string does not hide the commas after it)."""
        spans: list[tuple[int, int]] = []
        depth, begin = 1, pos
        for match in _TOKENS.finditer(buf, pos):
            byte = buf[match.start()]
            if byte == 0x5B or byte == 0x7B:  # [ {
                depth += 1
            elif byte == _CLOSE or byte == 0x7D:  # ] }
                depth -= 1
                if depth == 0:
                    spans.append((begin, match.start()))
                    begin = -1
                    break
            elif byte == _COMMA and depth == 1:
                spans.append((begin, match.start()))
                begin = match.end()
        if begin >= 0:
            spans.append((begin, len(buf)))
        out = []
        for begin, end in spans:
            start = _space(buf, begin).end()
            piece = bytes(buf[start:end]).rstrip()
            if piece:
                out.append(self._element(piece, *self._where(buf, pos, start)))
        self._count += len(out)
        return out

    def _element(self, piece: bytes, line: int, column0: int) -> Record:
        """The record of one element's bytes: its value, or why it is not one."""
        try:
            value = orjson.loads(piece)
        except ValueError as exc:
            try:  # what JSON.parse reads and orjson does not: see exact
                value = exact.loads(piece)
            except ValueError:
                return Record(None, None, line, False, payload_error(piece, exc, column0))
            if len(piece) > _DEEP_BYTES and too_deep(piece, value):
                return Record(None, None, line, False, TOO_DEEP)
            return self._handed(Record(value, None, line, raw=piece), piece)
        return self._handed(_record(piece, value, line), piece)

    def _handed(self, record: Record, piece: bytes) -> Record:
        """``record`` as the reader hands it on: see :class:`~chatx.containers.exact.Reading`."""
        if record.raw is not None or self._reading.carrying:
            return self._reading.record(record, piece)
        return record

    def _where(self, buf: bytearray, pos: int, at: int) -> tuple[int, int]:
        """The line of ``at``, and its column from 1 (``pos``: where _line and _col are)."""
        nl = buf.rfind(b"\n", pos, at)
        column = at - nl if nl >= 0 else self._col + at - pos + 1
        return self._line + buf.count(b"\n", pos, at), column

    def _advance(self, buf: bytearray, pos: int, to: int) -> int:
        """Move the reading position to ``to``: the next element starts afresh."""
        self._skip(buf, pos, to)
        self._at, self._depth, self._string, self._fast = 0, 1, False, True
        return to

    def _skip(self, buf: bytearray, pos: int, to: int) -> int:
        """Move the reading position to ``to``, its line and column counted."""
        lines = buf.count(b"\n", pos, to)
        if lines:
            self._line += lines
            self._col = to - buf.rfind(b"\n", pos, to) - 1
        else:
            self._col += to - pos
        return to


def _record(piece: bytes, value: Any, line: int) -> Record:
    """The record of ``value`` orjson read from ``piece``: checked for depth and for an
    integer it read as a double (see exact)."""
    if len(piece) <= _DEEP_BYTES and LONG_RUN not in piece.translate(DIGITS):
        return Record(value, None, line)
    return checked(piece, value, None, line)


def _whole(buf: bytes) -> list[Record]:
    """Input that is not an array, read whole: one object printed over several lines
    (a non-streaming response, as APIs and ``chatx collect`` print it) is one record;
    anything else is an error record."""
    if not buf.strip():
        return []
    try:
        value = orjson.loads(buf)
    except ValueError as exc:
        return [Record(None, None, getattr(exc, "lineno", 1), False, payload_error(buf, exc))]
    line = _line_numbers(buf, [len(buf) - len(buf.lstrip())])[0]
    if type(value) is dict:
        return [checked(buf, value, None, line)]
    kind = _KINDS.get(type(value), "something else")
    return [Record(None, None, line, False, f"expected a JSON array of events, found {kind}")]


def element_lines(buf: bytes) -> list[int]:
    """The 1-based line where each element of the JSON array ``buf`` starts."""
    reader = JSONArrayReader()
    return [record.line for record in reader.feed(buf) + reader.finish()]


def _line_numbers(buf: bytes, offsets: list[int]) -> list[int]:
    lines, line, prev = [], 1, 0
    for offset in offsets:
        line += buf.count(b"\n", prev, offset)
        lines.append(line)
        prev = offset
    return lines


class JSONArrayWriter:
    """Write payloads as one JSON array, one element per line; ``DONE`` is dropped."""

    __slots__ = ("_sep",)

    def __init__(self, event_names: bool = False) -> None:
        """``event_names`` is accepted for a uniform writer call and ignored."""
        self._sep = b"[\n"

    def write(self, payloads: list[Any]) -> bytes:
        """Return the bytes for these payloads, continuing the array."""
        return b"".join(self.frames(payloads))

    def frames(self, payloads: list[Any]) -> list[bytes]:
        """The bytes for these payloads, in order, as one or more pieces (see sse.frames)."""
        sep = self._sep
        try:
            return self._write(payloads, orjson.dumps)
        except TypeError:  # what plain dumps refuses: see lenient_dumps
            self._sep = sep
            return self._write(payloads, lenient_dumps)

    def _write(self, payloads: list[Any], dumps: Any) -> list[bytes]:
        out: list[bytes] = []
        for payload in payloads:
            if payload is not DONE:
                out.append(self._sep)
                if type(payload) is Dumped:
                    out.append(b",\n".join(payload.payloads))
                else:
                    out.append(dumps(payload))
                self._sep = b",\n"
        return frames(out)

    def finish(self) -> bytes:
        """End of output: close the array (an empty one if nothing was written)."""
        return b"[]\n" if self._sep == b"[\n" else b"\n]\n"
