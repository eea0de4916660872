"""A JSON array of events: the whole input is one array, read at the end."""

from __future__ import annotations

import re
from typing import Any

import orjson

from chatx.containers.sse import BOM, payload_error
from chatx.record import DONE, Record

# Strings (so brackets and commas inside them are skipped) and the structural bytes.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.DOTALL)
_SPACE = re.compile(rb"[ \t\n]*")
_KINDS = {dict: "an object", str: "a string", int: "a number", float: "a number",
          bool: "a boolean", type(None): "null"}  # fmt: skip


class JSONArrayReader:
    """Buffer the input; at ``finish()`` return one record per array element."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[Record]:
        """Keep the bytes; an array can only be read whole."""
        self._buf += chunk
        return []

    def finish(self) -> list[Record]:
        """End of input: parse the array and return its elements as records (drain)."""
        buf = bytes(self._buf).removeprefix(BOM)
        self._buf = bytearray()
        if not buf.strip():
            return []
        try:
            value = orjson.loads(buf)
        except ValueError as exc:
            return [Record(None, None, getattr(exc, "lineno", 1), False, payload_error(buf, exc))]
        if type(value) is not list:
            kind = _KINDS.get(type(value), "something else")
            line = _line_numbers(buf, [len(buf) - len(buf.lstrip())])[0]
            return [
                Record(None, None, line, False, f"expected a JSON array of events, found {kind}")
            ]
        lines = element_lines(buf)
        return [Record(item, None, line) for item, line in zip(value, lines, strict=True)]


def element_lines(buf: bytes) -> list[int]:
    """The 1-based line where each element of the valid JSON array ``buf`` starts."""
    if b"\r" in buf:  # valid JSON has CR only as whitespace, so line ends can be unified
        buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    starts: list[int] = []
    depth = 0
    for match in _TOKENS.finditer(buf):
        byte = buf[match.start()]
        if byte == 0x5B or byte == 0x7B:  # [ {
            depth += 1
            if depth != 1:
                continue
        elif byte == 0x5D or byte == 0x7D:  # ] }
            depth -= 1
            continue
        elif byte != 0x2C or depth != 1:  # a string, or a comma inside an element
            continue
        start = _SPACE.match(buf, match.end()).end()
        if buf[start] != 0x5D:  # "]" closes an empty array
            starts.append(start)
    return _line_numbers(buf, starts)


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
        out: list[bytes] = []
        dumps = orjson.dumps
        for payload in payloads:
            if payload is not DONE:
                out.append(self._sep)
                out.append(dumps(payload))
                self._sep = b",\n"
        return b"".join(out)

    def finish(self) -> bytes:
        """End of output: close the array (an empty one if nothing was written)."""
        return b"[]\n" if self._sep == b"[\n" else b"\n]\n"


def probe(head: bytes) -> int:
    """Score 0..100 that ``head`` (the first bytes) starts a JSON array."""
    return 100 if head.removeprefix(BOM).lstrip()[:1] == b"[" else 0
