"""A JSON array of strings too big to hold, read as it comes into the text they join to:
inline-snapshot's external file of one streamed body keeps the pieces it came in, a
million of them for a long stream.

Each element is read on its own (orjson, as the whole file is read), and its text goes to
an unnamed temporary file (:class:`bodies.Spool`), encoded as the joined text would be.
What this reading does not follow (an element that is no string, or longer than
:data:`ELEMENT`, a fault anywhere) makes the file read whole, as a smaller one is: its
bytes are kept in another temporary file as they pass, for that.
"""

from __future__ import annotations

import re
from typing import BinaryIO

import orjson

from chatx.containers import bodies

BIG = 8 << 20  # a file larger than this is read as it comes
ELEMENT = 1 << 20  # an element longer than this is not looked for: the file is read whole
_READ = 1 << 20
# An element: blanks, a string (its escapes skipped whole), blanks, and what follows it.
_ELEMENT = re.compile(rb'[ \t\n\r]*+("[^"\\]*+(?:\\.[^"\\]*+)*+")[ \t\n\r]*+([,\]])', re.S)
_OPEN = re.compile(rb"[ \t\n\r]*+\[")
_BLANKS = b" \t\n\r"


class _NotFollowed(Exception):
    """The array is not one this reading follows: the file is read whole."""


def joined(stream: BinaryIO) -> bodies.Spool | bytes:
    """The text the strings of the array in ``stream`` join to, in a spool; or, for a
    file this reading does not follow (see the module's docstring), all its bytes."""
    reading = _Reading(stream)
    try:
        return reading.read()
    except _NotFollowed:
        return reading.original()


class _Reading:
    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.raw: bodies.Spool | None = None  # past BIG: the file's bytes as they pass
        self.buf = b""
        self.pos = 0
        self.eof = False

    def _more(self) -> bool:
        data = b"" if self.eof else self.stream.read(_READ)
        if not data:
            self.eof = True
            return False
        if self.raw is not None:
            self.raw.write(data)
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        return True

    def read(self) -> bodies.Spool | bytes:
        while len(self.buf) <= BIG and self._more():
            pass
        if len(self.buf) <= BIG:
            return self.buf  # small: read whole, as any is
        self.raw = bodies.Spool()
        self.raw.write(self.buf)
        opened = _OPEN.match(self.buf)
        if opened is None:
            raise _NotFollowed
        self.pos = opened.end()
        text = bodies.Spool()
        while not self._element(text):
            pass
        if self.buf[self.pos :].strip(_BLANKS) or any(
            piece.strip(_BLANKS) for piece in iter(lambda: self.stream.read(_READ), b"")
        ):
            raise _NotFollowed  # more after the array: the whole read says what
        text.done()
        return text

    def _element(self, text: bodies.Spool) -> bool:
        """The next element into ``text``; True after the last."""
        while (found := _ELEMENT.match(self.buf, self.pos)) is None:
            if len(self.buf) - self.pos > ELEMENT or not self._more():
                raise _NotFollowed
        try:
            value = orjson.loads(found[1])
        except orjson.JSONDecodeError:
            raise _NotFollowed from None
        text.write(value.encode("utf-8", "surrogatepass"))
        self.pos = found.end()
        return found[2] == b"]"

    def original(self) -> bytes:
        """The whole file: its bytes read so far, then the rest of the stream."""
        if self.raw is None:
            return self.buf + self.stream.read()
        self.raw.done()
        return b"".join(self.raw.pieces()) + self.stream.read()
