"""Where a command reads and writes: stdin or a file; stdout or a named file (``-o``).

A file named by ``-o`` is replaced only by a complete output: the bytes go to a
temporary file beside it (an unpredictable name, created exclusively: see
:mod:`chatx.atomic`), renamed onto it when the command succeeds. A symlink at ``-o``
that is yours (or root's) keeps pointing at its file, and that file is replaced;
another user's symlink is refused, as Linux refuses to follow it in /tmp. Whatever stops the
run (bad input, ``--strict``, Ctrl-C, SIGTERM, a full disk) leaves the file as it was
and removes the temporary one. A FIFO, a terminal or ``/dev/stdout`` named by ``-o`` is
no file to replace: it is written directly, and flushed as stdout is.

Errors name the path the user gave, never the temporary file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from typing import Any, BinaryIO

from chatx.errors import ChatxError, InputError, UsageError

# Large writes for a file no one reads until it is renamed into place.
_FILE_BUFFER = 1 << 20


def _descriptor(path: str) -> bool:
    """``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``: a descriptor already open
    (``>>`` appends to it), never a file to replace."""
    return os.path.abspath(path).startswith(("/dev/", "/proc/"))


class OutputError(ChatxError):
    """The output could not be written (exit 2)."""


def refuse_input_as_output(file: str, output: str) -> None:
    """A UsageError when ``output`` is the input ``file`` (``-`` for stdin) itself: the
    same path, a symlink or a hard link to it, or the file stdin is redirected from.
    Converting a file onto itself would lose it."""
    if output == "-":
        return
    try:
        target = os.stat(output)
    except OSError:  # not there yet (or unreachable: opening it says why)
        return
    if not stat.S_ISREG(target.st_mode):
        return  # a FIFO or a device is read and written as a stream, not replaced
    try:
        source = os.fstat(sys.stdin.fileno()) if file == "-" else os.stat(file)
    except (OSError, ValueError, AttributeError):  # no stdin, or no file descriptor for it
        return
    if (source.st_dev, source.st_ino) != (target.st_dev, target.st_ino):
        return
    what = "the file stdin reads from" if file == "-" else f"the input {file}"
    raise UsageError(f"-o {output} is {what}: writing it would lose it; choose another file")


class OutputFile:
    """``with OutputFile(path) as out``: ``out.write``/``out.flush`` as a binary file's;
    the file at ``path`` changes only when the block ends without an exception."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.temporary: str | None = None
        self.file: Any = None
        self.live = False

    def __enter__(self) -> OutputFile:
        from chatx import atomic  # writing a file, not stdout

        try:  # /dev/stdout is a descriptor's name, nothing to follow
            target = self.path if _descriptor(self.path) else atomic.own_target(self.path)
        except atomic.PlacementError as exc:
            raise OutputError(str(exc)) from None
        try:
            existing: os.stat_result | None = os.stat(target)
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            raise self._error(exc) from None
        if existing is not None and (not stat.S_ISREG(existing.st_mode) or _descriptor(self.path)):
            self.live = True
            # Opening /dev/stdout opens its file again: "ab" keeps what a shell's >> or
            # an earlier writer put there (a FIFO or a terminal ignores the mode).
            mode = "ab" if _descriptor(self.path) else "wb"
            try:
                self.file = open(self.path, mode)  # noqa: SIM115 - closed in __exit__
            except OSError as exc:
                raise self._error(exc) from None
            return self
        # A symlink keeps pointing at the file it names: the file is what is replaced.
        self.target = target
        self.temporary, fd = self._create(target, existing)
        self.file = os.fdopen(fd, "wb", buffering=_FILE_BUFFER)
        return self

    def _create(self, target: str, existing: os.stat_result | None) -> tuple[str, int]:
        """A new file beside ``target``, with the mode ``target`` has (or a new file
        would get)."""
        from chatx import atomic

        try:
            temporary, fd = atomic.temporary_beside(target)
        except FileExistsError:
            raise OutputError(f"{self.path}: cannot write a temporary file beside it") from None
        except OSError as exc:
            if not os.path.isdir(os.path.dirname(target) or "."):
                raise self._error(exc) from None
            raise OutputError(
                f"{self.path}: cannot write a temporary file beside it to rename into "
                f"place: {exc.strerror or exc}"
            ) from None
        if existing is not None:
            # Should this fail, the file is still whole, with a new file's mode.
            with contextlib.suppress(OSError, AttributeError):  # no fchmod: Windows
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        return temporary, fd

    @property
    def replaces(self) -> bool:
        """Whether the file is replaced at the end (not written as a stream)."""
        return not self.live

    def write(self, data: bytes) -> int:
        try:
            return self.file.write(data)
        except BrokenPipeError:  # -o >(head -1): quiet, as stdout's reader going away
            raise
        except OSError as exc:
            raise self._error(exc) from None

    def flush(self) -> None:
        """Flushed as it goes only when the output is a stream (a FIFO, a terminal); a
        file is written in large blocks."""
        if self.live:
            try:
                self.file.flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise self._error(exc) from None

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.live and kind is None:
            self._close()
            return
        if self.live:  # the run failed already: that is what to say
            self._discard()
            return
        try:
            if kind is None:
                self._close()
                os.replace(self.temporary, self.target)  # type: ignore[arg-type]
                self.temporary = None
        except OSError as error:
            raise self._error(error) from None
        finally:
            self._discard()

    def _close(self) -> None:
        file, self.file = self.file, None
        try:
            file.close()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._error(exc) from None

    def _discard(self) -> None:
        """Remove the temporary file when it was not renamed into place."""
        if self.file is not None:
            with contextlib.suppress(OSError):  # its bytes are being thrown away
                self.file.close()
            self.file = None
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None

    def _error(self, exc: OSError) -> OutputError:
        return OutputError(f"{self.path}: cannot write: {exc.strerror or exc}")


class _Std:
    """A context manager around a standard stream that does not close it."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def __enter__(self) -> BinaryIO:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        return None


def open_input(file: str) -> Any:
    """``with open_input(file) as inp``: stdin for ``-``, else the file, binary."""
    if file == "-":
        return _Std(sys.stdin.buffer)
    try:
        return open(file, "rb")  # noqa: SIM115 - closed by the caller's with
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), file=file) from None


def open_output(output: str) -> Any:
    """``with open_output(output) as out``: stdout for ``-``, else an :class:`OutputFile`."""
    if output == "-":
        return _Std(sys.stdout.buffer)
    return OutputFile(output)
