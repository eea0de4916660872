"""Each compression's decoder of one member (gzip), stream (bz2, xz, deflate, brotli) or
frame (zstd), behind one small interface the bounded reader of
:mod:`chatx.containers.compressed` drives: ``give`` compressed bytes, ``take`` at most
``room`` bytes out (so no member inflates past the reader's limit in one step), ``done``
when the member's end is read, and ``rest``, the bytes after it.

The libraries differ in what they bound: zlib and brotli take an output limit, bz2 and
lzma a max_length, zstandard neither; each wrapper makes them alike.
"""

from __future__ import annotations

from typing import Any

from chatx.errors import InputError

# An xz stream needing more memory than this to decompress (its dictionary) is refused:
# xz -9 needs 65 MiB.
XZ_MEMORY = 256 << 20


def open_member(name: str) -> Any:
    """The incremental decoder of one ``name`` member, stream or frame."""
    if name == "gzip":
        import zlib

        return _Zlib(zlib.decompressobj(31))
    if name in ("deflate", "raw-deflate"):
        import zlib

        return _Zlib(zlib.decompressobj(15 if name == "deflate" else -15))
    if name == "br":
        return _Brotli(brotli_module())
    if name == "bz2":
        import bz2

        return _Buffered(bz2.BZ2Decompressor())
    if name == "xz":
        import lzma

        return _Buffered(lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=XZ_MEMORY))
    return _ZstdFrame(zstandard_module())


class _Stdlib:
    """A decompressor of the standard library (``zlib``, ``bz2``, ``lzma``), the bytes
    given to it waiting in ``buf``; it says it is done at ``eof``. How much it takes and
    what it keeps differ: :class:`_Zlib`, :class:`_Buffered`."""

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder
        self.buf = b""

    def give(self, data: bytes) -> None:
        self.buf += data

    def done(self) -> bool:
        return bool(self.decoder.eof)


class _Zlib(_Stdlib):
    """A zlib decompressor (gzip, deflate): what it did not take waits in
    ``unconsumed_tail``."""

    def wants_input(self) -> bool:
        return not self.buf and not self.decoder.eof

    def take(self, room: int) -> bytes:
        out: bytes = self.decoder.decompress(self.buf, room)
        self.buf = self.decoder.unconsumed_tail
        return out

    def rest(self) -> bytes:
        return bytes(self.decoder.unused_data)


class _Buffered(_Stdlib):
    """A bz2 or lzma decompressor: it keeps what it did not take, and says when it
    needs more (``needs_input``)."""

    def wants_input(self) -> bool:
        return not self.buf and self.decoder.needs_input and not self.decoder.eof

    def take(self, room: int) -> bytes:
        data, self.buf = self.buf, b""
        if self.decoder.eof:
            self.buf = data
            return b""
        return bytes(self.decoder.decompress(data, room))

    def rest(self) -> bytes:
        return bytes(self.decoder.unused_data) + self.buf


class _Brotli:
    """A brotli decompressor: given an output limit when the package takes one (brotli
    1.2), else fed a KiB at a time, so that one call makes a bounded output either way."""

    PIECE = 1 << 10

    def __init__(self, module: Any) -> None:
        self.decoder = module.Decompressor()
        self.limited = hasattr(self.decoder, "can_accept_more_data")
        self.buf = b""

    def give(self, data: bytes) -> None:
        self.buf += data

    def wants_input(self) -> bool:
        if self.buf or self.decoder.is_finished():
            return False
        return not self.limited or bool(self.decoder.can_accept_more_data())

    def take(self, room: int) -> bytes:
        decoder = self.decoder
        if not self.limited:
            data, self.buf = self.buf[: self.PIECE], self.buf[self.PIECE :]
            return bytes(decoder.process(data))
        data = b""
        if decoder.can_accept_more_data():
            data, self.buf = self.buf, b""
        return bytes(decoder.process(data, output_buffer_limit=room))

    def done(self) -> bool:
        return bool(self.decoder.is_finished())

    def rest(self) -> bytes:
        return self.buf


class _ZstdFrame:
    """One zstd frame (or skippable frame), walked block by block: the decompressor is
    given one whole block at a time, so what one call makes is at most a block (128
    KiB), however far the data would expand; and where the frame ends is known from
    its own headers, so a frame cut short is told from a whole one."""

    BLOCK_HEAD = 3

    def __init__(self, zstandard: Any) -> None:
        self.module = zstandard
        self.decoder: Any = None
        self.buf = bytearray()
        self.state = "start"  # start, blocks, checksum, skip, done
        self.checksum = 0
        self.skip = 0  # bytes of a skippable frame still to pass over

    def give(self, data: bytes) -> None:
        self.buf += data

    def wants_input(self) -> bool:
        return self.state != "done" and self._unit() is None

    def done(self) -> bool:
        return self.state == "done"

    def rest(self) -> bytes:
        return bytes(self.buf)

    def take(self, room: int) -> bytes:
        out: list[bytes] = []
        made = 0
        while self.state != "done" and made < room:
            size = self._unit()
            if size is None:
                break
            unit = bytes(self.buf[:size])
            del self.buf[:size]
            piece = self._feed(unit)
            made += len(piece)
            out.append(piece)
        return b"".join(out)

    def _unit(self) -> int | None:
        """How many bytes the next whole unit (header, block, checksum) takes, when they
        are all in ``buf``; None while more are needed."""
        buf, state = self.buf, self.state
        if state == "skip":
            return min(len(buf), self.skip) or None
        if state == "start":
            size = self._header_size()
        elif state == "blocks":
            if len(buf) < self.BLOCK_HEAD:
                return None
            head = int.from_bytes(buf[:3], "little")
            kind, length = (head >> 1) & 3, head >> 3
            if kind == 3:
                raise InputError("bad zstd data: a block of the reserved type")
            size = self.BLOCK_HEAD + (1 if kind == 1 else length)
        else:
            size = self.checksum
        return size if size is not None and len(self.buf) >= size else None

    def _header_size(self) -> int | None:
        buf = self.buf
        if buf[:4] != b"\x28\xb5\x2f\xfd":  # a skippable frame: magic, then its length
            if len(buf) < 8:
                return None
            return 8
        if len(buf) < 5:
            return None
        flags = buf[4]
        single = flags >> 5 & 1
        content_size = (1 if single else 0, 2, 4, 8)[flags >> 6]
        return 5 + (0 if single else 1) + (0, 1, 2, 4)[flags & 3] + content_size

    def _feed(self, unit: bytes) -> bytes:
        state = self.state
        if state == "skip":
            self.skip -= len(unit)
            self.state = "skip" if self.skip else "done"
            return b""
        if state == "start" and unit[:4] != b"\x28\xb5\x2f\xfd":
            self.skip = int.from_bytes(unit[4:8], "little")
            self.state = "skip" if self.skip else "done"
            return b""
        if state == "start":
            self.decoder = self.module.ZstdDecompressor().decompressobj()
            self.checksum = 4 if unit[4] >> 2 & 1 else 0
            self.state = "blocks"
        elif state == "blocks" and unit[0] & 1:  # the frame's last block
            self.state = "checksum" if self.checksum else "done"
        elif state == "checksum":
            self.state = "done"
        out: bytes = self.decoder.decompress(unit)
        if self.state == "done" and not self.decoder.eof:
            raise InputError("bad zstd data: a frame whose decoder did not end with it")
        return out


def require(name: str) -> None:
    """Raise the InputError naming the package ``name`` needs, if it is not installed."""
    if name == "zstd":
        zstandard_module()
    elif name == "br":
        brotli_module()


def zstandard_module() -> Any:
    from importlib.util import find_spec

    if find_spec("zstandard") is None:
        raise InputError(
            "zstd-compressed input needs the zstandard package (pip install 'chatx[zstd]')",
            line=1,
        )
    import zstandard

    return zstandard


BROTLI = ("brotli", "brotlicffi")  # brotlicffi: the same module under another name


def brotli_module() -> Any:
    from importlib import import_module
    from importlib.util import find_spec

    name = next((n for n in BROTLI if find_spec(n) is not None), None)
    if name is None:
        raise InputError(
            "a brotli-compressed body (Content-Encoding: br) needs the brotli package"
            " (pip install 'chatx[brotli]')"
        )
    return import_module(name)
