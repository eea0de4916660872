"""JSON lines: one JSON value per line, blank lines skipped."""

from __future__ import annotations

import sys
from itertools import repeat
from operator import getitem
from typing import Any

import orjson

from chatx.containers.exact import DIGITS, LONG_RUN, Reading
from chatx.containers.lines import LineSplitter
from chatx.containers.payload import _DEEP_BYTES, frames, lenient_dumps, off_the_fast_path
from chatx.record import DONE, Dumped, RawRegion, Record


class JSONLReader:
    """Incremental JSON-lines reader: one record per non-blank line.

    Lines end at LF, CRLF or CR, as in SSE. A ``[DONE]`` line is tolerated as the
    sentinel (payload-only captures sometimes keep it).
    """

    __slots__ = ("_line", "_lines", "_reading", "raw", "raw_over")

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._line = 0
        # Records carry their payload unparsed (Record.raw), for a decoder that reads raw.
        self.raw = False
        # Payloads longer than this stay raw even when ``raw`` is off (see LONG_PAYLOAD).
        self.raw_over = sys.maxsize
        self._reading = Reading()  # lone surrogates, mended record after record

    def feed(self, chunk: bytes) -> list[Record] | RawRegion:
        """Read the next bytes; return the records of the lines they complete.

        A line longer than :data:`~chatx.containers.lines.MAX_LINE` raises InputError on
        the call after the one that returns the records before it.
        """
        if self.raw and type(chunk) is not bytes:  # a region's lines are bytes
            chunk = bytes(chunk)
        lines, _ = self._lines.take(chunk, self._line + 1)
        if not lines:
            return []
        if self.raw and all(lines) and min(map(getitem, lines, repeat(0))) > 0x20:
            # Raw, and no line blank (none begins with a space or a control byte): the
            # records are the lines, one each, as they are (see RawRegion).
            if type(lines[0]) is not bytes:  # the line begun in the read before
                lines[0] = bytes(lines[0])
            first = self._line + 1
            self._line += len(lines)
            return RawRegion(lines, first, 1, b"")
        return self._parse(lines)

    def finish(self) -> list[Record]:
        """End of input: return the record of a last line without line end (drain)."""
        return self._parse(self._lines.take(None, self._line + 1)[0])

    def _parse(self, lines: list[bytes]) -> list[Record]:
        out: list[Record] = []
        append = out.append
        loads = orjson.loads
        deep, digits, long_run = _DEEP_BYTES, DIGITS, LONG_RUN
        reading = self._reading
        carrying = reading.carrying  # half a surrogate pair waits for a record
        raw, over = self.raw, self.raw_over
        n = self._line
        for line in lines:
            n += 1
            # A blank line is passed over before orjson refuses it: its error costs a
            # microsecond, which a file of millions of them multiplies.
            if not line or (line[0] <= 0x20 and line.isspace()):
                continue
            if raw or len(line) > over:
                append(Record(None, None, n, False, None, line))
                continue
            try:
                value = loads(line)
            except ValueError as exc:
                append(off_the_fast_path(reading, line, None, exc, None, n))
                carrying = reading.carrying
                continue
            # A run of 19 digits may be an integer orjson read as a double.
            if len(line) <= deep and not carrying and long_run not in line.translate(digits):
                append(Record(value, None, n))
            else:
                append(off_the_fast_path(reading, line, value, None, None, n))
                carrying = reading.carrying
        self._line = n
        return out


class JSONLWriter:
    """Write one compact JSON value per line; ``DONE`` is dropped (JSONL has no sentinel)."""

    __slots__ = ()

    def __init__(self, event_names: bool = False) -> None:
        """``event_names`` is accepted for a uniform writer call and ignored."""

    def write(self, payloads: list[Any]) -> bytes:
        """Return the bytes for these payloads (JSON values or ``DONE``)."""
        return b"".join(self.frames(payloads))

    def frames(self, payloads: list[Any]) -> list[bytes]:
        """The bytes for these payloads, in order, as one or more pieces (see sse.frames)."""
        newline = orjson.OPT_APPEND_NEWLINE
        try:
            dumps = orjson.dumps
            return frames(
                [
                    dumps(p, option=newline) if type(p) is not Dumped else _lines(p)
                    for p in payloads
                    if p is not DONE
                ]
            )
        except TypeError:  # what plain dumps refuses: see lenient_dumps
            return frames(
                [
                    lenient_dumps(p, newline) if type(p) is not Dumped else _lines(p)
                    for p in payloads
                    if p is not DONE
                ]
            )

    def finish(self) -> bytes:
        """End of output: nothing to close."""
        return b""


def _lines(dumped: Dumped) -> bytes:
    return b"\n".join(dumped.payloads) + b"\n"
