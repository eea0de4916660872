"""The JSON-array reader chatx had before it read arrays element by element: the whole
input held, parsed at the end, and read element by element only when it did not parse.
tests/containers/test_json_array.py holds the streaming reader to the records this one
gives, errors and lines included, whatever the input and its chunking."""

from __future__ import annotations

import re

import orjson

from chatx.containers.lines import BOM
from chatx.containers.payload import MAX_DEPTH, TOO_DEEP, checked, payload_error, too_deep
from chatx.record import Record

# Strings (so brackets and commas inside them are skipped) and the structural bytes.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.DOTALL)
_SPACE = re.compile(rb"[ \t\n]*")
_KINDS = {dict: "an object", str: "a string", int: "a number", float: "a number",
          bool: "a boolean", type(None): "null"}  # fmt: skip


class WholeArrayReader:
    """Buffer the input; at ``finish()`` return one record per array element (the reader
    chatx had before it read arrays as they arrive)."""

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
            if buf.lstrip()[:1] == b"[":
                return _salvage(buf)
            return [Record(None, None, getattr(exc, "lineno", 1), False, payload_error(buf, exc))]
        if type(value) is not list:
            line = _line_numbers(buf, [len(buf) - len(buf.lstrip())])[0]
            if type(value) is dict:
                # One object printed over several lines (a non-streaming response, as
                # APIs and `chatx collect` print it): one record.
                return [checked(buf, value, None, line)]
            kind = _KINDS.get(type(value), "something else")
            return [
                Record(None, None, line, False, f"expected a JSON array of events, found {kind}")
            ]
        lines, deep = _scan(buf)
        return [
            Record(None, None, line, False, TOO_DEEP)
            if number in deep
            else Record(item, None, line)
            for number, (item, line) in enumerate(zip(value, lines, strict=True))
        ]


def _scan(buf: bytes) -> tuple[list[int], set[int]]:
    """Each element's line, and the elements nesting deeper than ``MAX_DEPTH``."""
    if b"\r" in buf:  # valid JSON has CR only as whitespace, so line ends can be unified
        buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    starts: list[int] = []
    deep: set[int] = set()
    depth = 0
    for match in _TOKENS.finditer(buf):
        byte = buf[match.start()]
        if byte == 0x5B or byte == 0x7B:  # [ {
            depth += 1
            if depth > MAX_DEPTH + 1:  # the array itself is one level
                deep.add(len(starts) - 1)
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
    return _line_numbers(buf, starts), deep


def _salvage(buf: bytes) -> list[Record]:
    """An array that does not parse (cut short, a bad element): read element by element.

    What parses is kept; the element that does not (a half-written last one) becomes an
    error record at its line, so a truncated capture converts as far as it goes.
    """
    if b"\r" in buf:
        buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    spans = _element_spans(buf)
    pieces = [(_SPACE.match(buf, a).end(), b) for a, b in spans]
    pieces = [(a, b) for a, b in pieces if buf[a:b].strip()]
    lines = _line_numbers(buf, [a for a, _ in pieces])
    out = []
    for (a, b), line in zip(pieces, lines, strict=True):
        piece = buf[a:b].rstrip()
        try:
            item = orjson.loads(piece)
        except ValueError as exc:
            column0 = a - buf.rfind(b"\n", 0, a)
            out.append(Record(None, None, line, False, payload_error(piece, exc, column0)))
            continue
        if len(piece) > 2 * MAX_DEPTH and too_deep(piece, item):
            out.append(Record(None, None, line, False, TOO_DEEP))
        else:
            out.append(Record(item, None, line))
    if not out:
        out.append(
            Record(
                None, None, 1, False, "invalid JSON: unexpected end of data (half-written line?)"
            )
        )
    return out


def _line_numbers(buf: bytes, offsets: list[int]) -> list[int]:
    lines, line, prev = [], 1, 0
    for offset in offsets:
        line += buf.count(b"\n", prev, offset)
        lines.append(line)
        prev = offset
    return lines


def _element_spans(buf: bytes) -> list[tuple[int, int]]:
    """The byte spans of the top-level array's elements, the unfinished last one too."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, -1
    for match in _TOKENS.finditer(buf):
        byte = buf[match.start()]
        if byte == 0x5B or byte == 0x7B:  # [ {
            depth += 1
            if depth == 1:
                start = match.end()
        elif byte == 0x5D or byte == 0x7D:  # ] }
            depth -= 1
            if depth == 0:
                spans.append((start, match.start()))
                start = -1
                break
        elif byte == 0x2C and depth == 1:  # , between elements
            spans.append((start, match.start()))
            start = match.end()
    if start >= 0:
        spans.append((start, len(buf)))
    return spans
