"""Cutting a byte stream into lines, whatever the chunking: what the SSE and JSON-lines
readers share."""

from __future__ import annotations

from chatx.errors import InputError
from chatx.limits import MAX_LINE

__all__ = ["BOM", "LineSplitter", "LineTooLong"]

BOM = b"\xef\xbb\xbf"


class LineTooLong(Exception):
    """A line grew past :data:`MAX_LINE`; ``lines`` are the complete lines before it."""

    def __init__(self, lines: list[bytes], offset: int | None, limit: int) -> None:
        super().__init__(f"a line longer than {limit >> 20} MiB")
        self.lines = lines
        self.offset = offset  # where the long line starts, in bytes from the input start
        self.limit = limit

    def lines_before(self, line: int) -> list[bytes]:
        """The complete lines before the long one, for the reader to parse first; when
        there are none, the error itself, at ``line`` (the reader's next line)."""
        if not self.lines:
            raise self.error(line) from None
        return self.lines

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

    def take(self, chunk: bytes | None, line: int) -> tuple[list[bytes], bool]:
        """What a reader feeds and finishes on: the lines ``chunk`` completes (``None``:
        the end of input, and the last line if it had no line end), and True; or, at a
        line too long, the complete lines before it and False. The error itself comes on
        the next call, or now when no line comes before it: at ``line``, the reader's
        next line."""
        try:
            return (self.split(chunk) if chunk is not None else self.finish()), True
        except LineTooLong as exc:
            return exc.lines_before(line), False

    @property
    def between_lines(self) -> bool:
        """Whether the bytes taken so far end a line (and decided the BOM, and left no
        CR whose LF may come next, and no line too long): the next bytes begin a line."""
        return not self._tail and self._head is None and not self._skip_lf and self._failed is None

    def passed(self, size: int) -> None:
        """``size`` bytes of whole lines were read without this splitter (beginning
        between lines, ending a line): counted for the offset of a line too long."""
        self._fed += size

    def finish(self) -> list[bytes]:
        """End of input: return the last line if it had no line end (drain)."""
        if self._failed is not None:
            raise LineTooLong([], self._failed.offset, self.max_line)
        if self._head:  # a stream shorter than a BOM that began like one
            self._tail += self._head
        last = self._tail
        self._head, self._skip_lf, self._tail = b"", False, bytearray()
        # A bytearray handed out as bytes, as split's first line is (not copied again).
        return [last] if last else []  # type: ignore[list-item]

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
        head = (self._head or b"") + chunk  # called only while _head is bytes
        if len(head) < len(BOM) and BOM.startswith(head):
            self._head = head
            return b""
        self._head = None
        return head[len(BOM) :] if head.startswith(BOM) else head
