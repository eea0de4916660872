"""Server-sent events: the WHATWG event-stream format, read and written.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import contextlib
import sys
from itertools import repeat
from typing import Any

import orjson

from chatx.containers.exact import DIGITS, LONG_RUN, Reading
from chatx.containers.lines import LineSplitter
from chatx.containers.payload import _DEEP_BYTES, frames, lenient_dumps, off_the_fast_path
from chatx.record import DONE, Dumped, RawRegion, Record

__all__ = ["SSEReader", "SSEWriter"]

MAX_IGNORED = 100  # lines that are no SSE field said one by one; the rest are counted
# Raw: the bytes after a read's last blank line wait for the next read up to this many;
# a longer block is read line by line.
_CARRIED = 1 << 20


class SSEReader:
    """Incremental event-stream parser: bytes in, one record per dispatched event out.

    Follows the WHATWG steps with one deliberate difference: a last block that ends
    without its blank line is still dispatched by ``finish()``, since servers that
    close the connection early still meant it. ``last_event_id`` and ``retry`` keep the
    ``id:`` and ``retry:`` fields; records do not carry them.
    """

    __slots__ = ("_carry", "_crlf", "_data", "_event", "_line", "_lines", "_more", "_names",
                 "_reading", "_start", "_unsaid", "_said", "ignored", "last_event_id", "raw",
                 "raw_over", "retry")  # fmt: skip

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._line = 0  # lines read so far
        self.last_event_id = ""
        self.retry: int | None = None
        # (line, why) for each line the spec says to ignore (an unknown field name): the
        # caller says so on stderr, so that nothing is dropped unsaid. Emptied by the caller.
        self.ignored: list[tuple[int, str]] = []
        # Past MAX_IGNORED lines said one by one, the rest are counted and said once at
        # the end: a file of a million stray lines is not a million warnings held.
        self._said = 0
        self._unsaid: list[int] = []  # [count, last line] of the lines not said one by one
        # Records carry their payload unparsed (Record.raw), for a decoder that reads raw.
        self.raw = False
        # Payloads longer than this stay raw even when ``raw`` is off (see LONG_PAYLOAD).
        self.raw_over = sys.maxsize
        self._names: dict[bytes, str] = {}  # event: lines met, and the names they give
        self._reading = Reading()  # lone surrogates, mended record after record
        # Raw: the bytes after the last blank line read, which wait for the next read
        # (:meth:`_feed_raw`); and whether a CR was met (its lines are read one by one).
        self._carry = bytearray()
        self._crlf = False
        self._clear_block()

    def feed(self, chunk: bytes) -> list[Record] | RawRegion:
        """Read the next bytes; return the records of the blocks they complete.

        A line longer than :data:`MAX_LINE` raises InputError on the call after the one
        that returns the records before it.
        """
        if self.raw and not self._crlf:
            return self._feed_raw(chunk)
        return self._feed_lines(chunk)

    def _feed_lines(self, chunk: bytes) -> list[Record]:
        lines, _ = self._lines.take(chunk, self._line + 1)
        return self._parse(lines) if lines else []

    def _feed_raw(self, chunk: bytes) -> list[Record] | RawRegion:
        """Raw records: the blocks up to the last blank line read (the bytes after it
        wait for the next read). When each of them is one ``data: `` line, as most
        streams' blocks are, their lines are one :class:`~chatx.record.RawRegion`, no
        payload cut out (see :func:`_data_lines`). Else, and from a CR on (line ends of
        one byte more), they are read line by line."""
        if type(chunk) is not bytes:  # a region's lines are bytes, compared as such
            chunk = bytes(chunk)
        carry = self._carry
        if b"\r" in chunk:
            self._crlf = True
            self._carry = bytearray()
            return self._feed_lines(bytes(carry) + chunk if carry else chunk)
        if carry:
            seen = len(carry) - 1
            carry += chunk
            cut = carry.rfind(b"\n\n", max(seen, 0)) + 2
            if cut < 2:
                return self._feed_lines(self._take_carry()) if self._long(carry) else []
            with memoryview(carry) as view:
                region = bytes(view[:cut])
            del carry[:cut]
        else:
            cut = chunk.rfind(b"\n\n") + 2
            if cut < 2:
                carry += chunk
                return self._feed_lines(self._take_carry()) if self._long(carry) else []
            region = chunk[:cut]
            if cut < len(chunk):
                carry += chunk[cut:]
        lines = _data_lines(region) if self._between_blocks(region) else None
        if lines is None:
            return self._feed_lines(region)
        first = self._line + 1
        self._line += 2 * len(lines)
        self._lines.passed(len(region))
        return RawRegion(lines, first, 2, b"data: ")

    def _long(self, carry: bytearray) -> bool:
        """Whether the bytes waiting for a blank line are more than a block is worth
        holding apart (:data:`_CARRIED`): they go to the line splitter, which holds a long
        line as it grows, and says when it is too long."""
        return len(carry) > _CARRIED

    def _take_carry(self) -> bytes:
        carry, self._carry = self._carry, bytearray()
        return bytes(carry)

    def _between_blocks(self, region: bytes) -> bool:
        """Whether the reader stands between two blocks, and ``region``'s lines are not
        too long for it: what a region needs to be read at once."""
        return (
            self._data is None
            and self._event is None
            and not self._start
            and self._lines.between_lines
            and len(region) <= self._lines.max_line
        )

    def finish(self) -> list[Record]:
        """End of input: return the records still pending (drain)."""
        out = self._feed_lines(self._take_carry()) if self._carry else []
        return out + self._finish_lines()

    def _finish_lines(self) -> list[Record]:
        lines, whole = self._lines.take(None, self._line + 1)
        out = self._parse(lines)
        if not whole:  # a line too long: its error comes next, no block is dispatched
            return out
        out.extend(self._parse([b""]))  # dispatch a block left without its blank line
        self._line -= 1
        if self._unsaid:
            count, last = self._unsaid
            self._unsaid = []
            self.ignored.append(
                (last, f"{count} more lines ignored after the first {MAX_IGNORED}, the last here:"
                       " not SSE fields (lines start with data:, event:, id:, retry: or :)")
            )  # fmt: skip
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
        parsed = self._parsed
        named = self._names.get  # event: lines met; a bytearray line is asked the long way
        raw, over = self.raw, self.raw_over
        n, start, data, more, event = self._line, self._start, self._data, self._more, self._event
        for line in lines:
            n += 1
            if not line:
                if data is not None:
                    if more is not None:
                        data = b"\n".join(more)
                    if raw or len(data) > over:
                        append(Record(None, event, start, False, None, data))
                    else:
                        append(parsed(data, event, start))
                start, data, more, event = 0, None, None, None
                continue
            if line[:6] == b"data: ":
                # A bytearray (see LineSplitter.split) is cut in place, not copied.
                value = line[6:] if type(line) is bytes else _cut(line, 6)
            elif line[0] == 0x3A:  # ":" starts a comment (OpenRouter's ": OPENROUTER PROCESSING")
                continue
            elif line[:7] == b"event: ":  # a Responses block's first line
                event = (named(line) if type(line) is bytes else None) or self._event_name(line)
                start = start or n
                continue
            else:
                found, event = self._other_field(line, n, event)
                start = start or n
                if found is None:
                    continue
                value = found
            start = start or n
            if data is None:
                data = value
            elif more is None:
                more = [data, value]
            else:
                more.append(value)
        self._line, self._start, self._data, self._more, self._event = n, start, data, more, event
        return out

    def _parsed(self, data: bytes, event: str | None, start: int) -> Record:
        """The record of a block's payload, parsed here (not left raw for the decoder)."""
        reading = self._reading
        try:
            value = orjson.loads(data)
        except ValueError as exc:
            return off_the_fast_path(reading, data, None, exc, event, start)
        # A run of 19 digits may be an integer orjson read as a double; half a surrogate
        # pair may wait for this record.
        if (
            len(data) <= _DEEP_BYTES
            and not reading.carrying
            and LONG_RUN not in data.translate(DIGITS)
        ):
            return Record(value, event, start)
        return off_the_fast_path(reading, data, value, None, event, start)

    def _event_name(self, line: bytes) -> str | None:
        """The name an ``event: …`` line gives, decoded once per distinct line."""
        if type(line) is not bytes:  # a bytearray (see LineSplitter.split)
            return line[7:].decode("utf-8", "replace") or None
        name = self._names.get(line)
        if name is None:
            name = line[7:].decode("utf-8", "replace") or None
            if name is not None and len(self._names) < 256:
                self._names[line] = name
        return name

    def _other_field(
        self, line: bytes, n: int, event: str | None
    ) -> tuple[bytes | None, str | None]:
        """A line that is no ``data: ``, ``event: `` or comment line: the value of a
        ``data:`` line written without its space, or None for any other field (said, or
        kept, by :meth:`_field`); and the block's event name."""
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            return value, event
        return None, self._field(name, value, n, event)

    def _field(self, name: bytes, value: bytes, line: int, event: str | None) -> str | None:
        """A field other than data (Bedrock Mantle writes event: after data:; it still
        names the block); returns the block's event name."""
        if name == b"event":
            return value.decode("utf-8", "replace") or None
        if name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():
                # More digits than int() accepts (4300) is no sane delay: keep the last one.
                with contextlib.suppress(ValueError):
                    self.retry = int(value)
        elif self._said < MAX_IGNORED:
            self._said += 1
            self.ignored.append((line, _unknown_field(name)))
        elif self._unsaid:
            self._unsaid[0] += 1
            self._unsaid[1] = line
        else:
            self._unsaid = [1, line]
        return event


def _data_lines(region: bytes) -> list[bytes] | None:
    """The ``data:`` lines of ``region`` when its blocks are each one ``data: `` line
    and a blank one, else None. ``region`` ends with a blank line and holds no CR, so
    its lines are what LF cuts."""
    if not region.startswith(b"data: "):  # (a stream of named events: no cut made)
        return None
    lines = region.split(b"\n")
    if len(lines) % 2 == 0 or any(lines[1::2]):
        return None
    data = lines[0:-1:2]
    return data if all(map(bytes.startswith, data, repeat(b"data: "))) else None


def _cut(line: Any, size: int) -> bytes:
    """``line`` (a bytearray) without its first ``size`` bytes, cut in place."""
    del line[:size]
    return line


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
            kind = type(payload)
            if kind is Dumped:
                head = self._head(payload.name) if names else b"data: "
                append(head)
                append((b"\n\n" + head).join(payload.payloads))
            else:
                if names and kind is dict:
                    name = payload.get("type")
                    known = lines.get(name) if type(name) is str else None
                    append(known if known is not None else self._head(name))
                else:
                    append(b"data: ")
                append(dumps(payload))
            append(b"\n\n")
        return frames(out)

    def _head(self, name: Any) -> bytes:
        """The ``event:`` line of a payload of type ``name`` and the ``data:`` field's
        start, made once for each of the first 256 names."""
        lines = self._event_lines
        head = lines.get(name) if type(name) is str else None
        if head is None:
            head = _event_line(name) + b"data: "
            if type(name) is str and len(lines) < 256:
                lines[name] = head
        return head

    def finish(self) -> bytes:
        """End of output: nothing to close in SSE."""
        return b""


def _event_line(name: Any) -> bytes:
    # A CR or LF in the name would end the field early and break the framing; the
    # payload's "type" still carries it, so the line is left out instead.
    if not isinstance(name, str) or "\n" in name or "\r" in name:
        return b""
    return b"event: " + name.encode() + b"\n"
