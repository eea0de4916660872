"""Compressed input, opened by its magic bytes below every container: gzip, bz2 and xz
from the standard library, zstd through the ``zstandard`` package when it is installed
(the ``zstd`` extra). Each decompressor is imported only when its magic is met, so a
bare stream starts as fast as ever.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

from chatx.errors import InputError

# The longest magic is xz's six bytes: a head this long tells them all apart.
MAGIC_BYTES = 6
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


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


def open_stream(name: str, raw: BinaryIO) -> BinaryIO:
    """A binary file object that reads ``raw`` decompressed (read and read1); damaged
    data is an InputError when it is read."""
    return io.BufferedReader(_Guarded(name, _open(name, raw)), 1 << 16)


def _open(name: str, raw: BinaryIO) -> Any:
    if name == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if name == "bz2":
        import bz2

        return bz2.BZ2File(raw, mode="rb")
    if name == "xz":
        import lzma

        return lzma.LZMAFile(raw, mode="rb")
    return _zstd_reader(raw)


def _zstd_reader(raw: BinaryIO) -> Any:
    from importlib.util import find_spec

    if find_spec("zstandard") is None:
        raise InputError(
            "zstd-compressed input needs the zstandard package (pip install 'chatx[zstd]')",
            line=1,
        )
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


def decompress(data: bytes, name: str) -> bytes:
    """``data`` (one whole compressed input) decompressed; an InputError saying which
    compression it is when the bytes are damaged."""
    try:
        with open_stream(name, io.BytesIO(data)) as stream:
            return stream.read()
    except InputError:
        raise
    except Exception as exc:  # each library has its own errors: EOFError, OSError, ZstdError
        raise InputError(f"bad {name} data: {reason(exc)}") from None


def reason(exc: BaseException) -> str:
    """A decompressor's error in a few words."""
    if isinstance(exc, EOFError):
        return "the data ends early"
    return str(exc) or type(exc).__name__


class _Guarded(io.RawIOBase):
    """A decompressor read through: its errors (EOFError, OSError, ZstdError…) become
    InputErrors that say which compression was damaged."""

    def __init__(self, name: str, stream: Any) -> None:
        self.name = name
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.stream.read1(len(buffer))
        except Exception as exc:
            raise InputError(f"bad {self.name} data: {reason(exc)}") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


class Prefixed(io.RawIOBase):
    """``head`` (bytes already read to look at them), then the rest of ``rest``."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self.head = memoryview(head)
        self.rest = rest
        self._read = getattr(rest, "read1", rest.read)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            size = min(len(buffer), len(self.head))
            buffer[:size] = self.head[:size]
            self.head = self.head[size:]
            return size
        data = self._read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def prefixed(head: bytes, rest: Any) -> BinaryIO:
    """A buffered binary file object reading ``head`` then ``rest``."""
    return io.BufferedReader(Prefixed(head, rest), 1 << 16)
