"""Compressed input, opened by its magic bytes below every container: gzip, bz2 and xz
from the standard library, zstd through the ``zstandard`` package when it is installed
(the ``zstd`` extra); and the one bounded decompression every compressed thing chatx
reads goes through, a bare file or a body recorded inside a file of exchanges alike.

Each compression is read to the end its format gives it, and no further: input that
ends inside a member, stream or frame is cut short, and bytes after the last one that
do not start another are garbage; both are errors. Several members (gzip), streams (bz2,
xz, with xz's zero padding between them) or frames (zstd, skippable frames included)
one after the other are read as one input, as their command-line tools read them. The
output stops at :data:`~chatx.limits.MAX_DECOMPRESSED` with an error naming the limit.

Each decompressor is imported only when its magic is met, so a bare stream starts as
fast as ever.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

from chatx import limits
from chatx.errors import InputError
from chatx.limits import size

# The longest magic is xz's six bytes: a head this long tells them all apart.
MAGIC_BYTES = 6
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
# Body encodings with no magic bytes, told by a Content-Encoding header: one member each,
# nothing after it.
_MAGIC_OF = {name: magic for magic, name in _MAGIC} | {
    "deflate": b"",
    "raw-deflate": b"",
    "br": b"",
}


# Each compression: its name, the suffix files are given, the module that reads it, and
# the extra that installs that module (None: the standard library). Input is told by its
# magic bytes whatever its name; a directory walk and output names go by the suffixes.
READERS = (
    ("gzip", ".gz", "gzip", None),
    ("bz2", ".bz2", "bz2", None),
    ("xz", ".xz", "lzma", None),
    ("zstd", ".zst", "zstandard", "zstd"),
)
SUFFIXES = tuple(suffix for _, suffix, _, _ in READERS)
_SAID = {"br": "brotli", "raw-deflate": "deflate"}
_UNIT = {"gzip": "member", "bz2": "stream", "xz": "stream", "zstd": "frame", "deflate": "stream",
         "raw-deflate": "stream", "br": "stream"}  # fmt: skip

_READ = 1 << 16


def without_suffix(name: str) -> str:
    """A file name without its compression suffix (``a.sse.gz`` -> ``a.sse``)."""
    return name.rsplit(".", 1)[0] if name.endswith(SUFFIXES) else name


def detect(head: bytes) -> str | None:
    """The compression ``head`` (the first bytes) starts with, or None."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def undecided(head: bytes) -> bool:
    """True while ``head`` is too short to say: a proper prefix of some magic."""
    return any(len(head) < len(magic) and magic.startswith(head) for magic, _ in _MAGIC)


def open_stream(name: str, raw: BinaryIO, limit: int | None = None) -> BinaryIO:
    """A binary file object that reads ``raw`` (positioned at the compressed data's
    first byte) decompressed, at most ``limit`` bytes of it (``None``:
    :data:`~chatx.limits.MAX_DECOMPRESSED`; read and read1); damaged,
    cut or trailed data is an InputError when it is read."""
    from chatx.containers import members  # only compressed input loads the decoders

    members.require(name)  # a missing package said when the input is opened, not read
    return io.BufferedReader(Inflating(name, raw, limit), _READ)


def decompress(data: bytes, name: str, limit: int | None = None) -> bytes:
    """``data`` (one whole compressed input) decompressed, at most ``limit`` bytes; an
    InputError saying which compression it is when the bytes are damaged, cut short or
    followed by garbage, or when they say more than ``limit``."""
    with open_stream(name, io.BytesIO(data), limit) as stream:
        return stream.read()


def reason(exc: BaseException) -> str:
    """A decompressor's error in a few words."""
    if isinstance(exc, EOFError):
        return "cut short: the data ends early"
    return str(exc) or type(exc).__name__


def too_large(limit: int) -> str:
    """The words for output past ``limit``."""
    return (
        f"decompresses to more than {size(limit)}, the most chatx reads of one compressed"
        " input (MAX_DECOMPRESSED; pipe it decompressed to read more)"
    )


class Inflating(io.RawIOBase):
    """One compression read to its end: member after member (stream, frame), each
    checked to end where the format says, at most ``limit`` bytes out."""

    def __init__(self, name: str, raw: Any, limit: int | None = None) -> None:
        self.kind = name
        self.name = _SAID.get(name, name)  # as messages say it
        self.magic = _MAGIC_OF[name]
        self._read = getattr(raw, "read1", raw.read)
        # Looked up when used, not when defined: a test may lower it.
        self.limit = limits.MAX_DECOMPRESSED if limit is None else limit
        self.total = 0  # bytes given out
        self.taken = 0  # compressed bytes read from raw
        self.ended = False  # raw said its end
        self.member: Any = None  # the member being read; None between members
        self.members = 0
        self.between = b""  # bytes read after a member ended, not yet known to start one
        self.out = memoryview(b"")  # output made, not yet given out

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.out:
            try:
                self.out = memoryview(self._more(len(buffer)))
            except InputError:
                raise
            except Exception as exc:  # each library has its own: OSError, LZMAError, ZstdError…
                raise InputError(f"bad {self.name} data: {reason(exc)}") from None
        size = min(len(buffer), len(self.out))
        buffer[:size] = self.out[:size]
        self.out = self.out[size:]
        self.total += size
        if self.total > self.limit:
            raise InputError(f"bad {self.name} data: {too_large(self.limit)}")
        return size

    def _input(self) -> bytes:
        if self.ended:
            return b""
        chunk = self._read(_READ)
        self.taken += len(chunk)
        self.ended = not chunk
        return bytes(chunk)

    def _more(self, room: int) -> bytes:
        """The next output (b"": the end, every member whole)."""
        while True:
            member = self.member
            if member is None:
                member = self.member = self._next_member()
                if member is None:
                    return b""
            if member.wants_input() and not self.ended:
                member.give(self._input())
            out = member.take(max(room, 1))
            if member.done():
                self.between, self.member = member.rest(), None
            elif not out and self.ended and member.wants_input():
                raise InputError(
                    f"bad {self.name} data: cut short: the input ends inside a"
                    f" {_UNIT[self.kind]}, after {self.taken} bytes"
                )
            if out:
                return out

    def _next_member(self) -> Any:
        """The decoder of the member that starts here, or None at a clean end."""
        data, padding = self.between, 0
        while True:
            if self.kind == "xz":  # stream padding: zero bytes, four at a time
                stripped = data.lstrip(b"\0")
                padding += len(data) - len(stripped)
                data = stripped
            if (data and len(data) >= len(self.magic)) or self.ended:
                break
            data += self._input()
        at = self.taken - len(data)  # where these bytes start in the input
        if not data:
            if padding % 4:
                raise InputError(
                    f"bad xz data: {padding} zero bytes after the last stream (padding comes"
                    " in fours)"
                )
            return None
        if self.magic.startswith(data):
            raise InputError(
                f"bad {self.name} data: cut short: the input ends inside a"
                f" {_UNIT[self.kind]}'s first bytes, after {self.taken} bytes"
            )
        if not self._starts(data) or (self.members and not self.magic):
            unit = _UNIT[self.kind]
            raise InputError(
                f"bad {self.name} data: garbage after the last {unit}"
                f" (byte {at} is not the start of another {unit})"
            )
        if padding % 4:
            raise InputError(f"bad xz data: {padding} zero bytes between streams (padding"
                             " comes in fours)")  # fmt: skip
        self.members += 1
        from chatx.containers import members  # only compressed input loads the decoders

        member = members.open_member(self.kind)
        member.give(data)
        self.between = b""
        return member

    def _starts(self, data: bytes) -> bool:
        if data.startswith(self.magic):
            return True
        # zstd's skippable frames: magic 0x184D2A50 to 0x184D2A5F, little-endian.
        return self.kind == "zstd" and data[1:4] == b"\x2a\x4d\x18" and data[0] >> 4 == 5
