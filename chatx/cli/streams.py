"""The standard streams while a command runs, when writing to them fails.

* stdout is where the data goes: a write that fails (``> /dev/full``, a full disk, an
  I/O error) makes the run exit 2 with a message, whatever the command, and the bytes
  still waiting are dropped, so that nothing fails twice. A reader that went away
  (``| head``) is no failure: :func:`chatx.cli._quiet_pipe` handles it.
* stderr is for people: a stderr that cannot be written (``2>/dev/full``) loses the
  messages, never changes the exit code, and never turns into a traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chatx.errors import ExitStatus

_failure: OSError | None = None  # the last error writing the process's own stdout


def error(message: str) -> None:
    """Say an error on stderr, escaped: it may quote text from a stream. (Here, not in
    chatx.cli, which imports this module: the commands use it as ``chatx.cli.error``.)"""
    from chatx.textsafe import escape_text  # loaded by the first error said

    sys.stderr.write(f"chatx: error: {escape_text(message)}\n")


def stdout_failed(exc: OSError) -> None:
    """Called by stdout's bytes layer when a write fails (not a broken pipe)."""
    global _failure
    _failure = exc


def is_stdout_failure(exc: BaseException) -> bool:
    return exc is _failure and _failure is not None


def output_failed(exc: OSError, code: int) -> int:
    """Say that stdout could not be written; the run's exit code (2, unless it already
    says worse: interrupted, terminated, a bug)."""
    global _failure
    _failure = None
    error(f"<stdout>: cannot write: {exc.strerror or exc}")
    try:  # what is still buffered goes nowhere, quietly, instead of failing again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (tests)
        pass
    return code if code >= ExitStatus.ERROR else ExitStatus.ERROR


class _Dropping(io.RawIOBase):
    """stderr's raw layer: what cannot be written is dropped, as a closed stderr is."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self.fd)
        except OSError:
            return False

    def write(self, data: Any) -> int:
        try:
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            raise
        except OSError:
            return len(data)


def own_fd(stream: Any, original: Any) -> int | None:
    """The descriptor under ``stream``, flushed, when it is the process's own standard
    stream (``original``); None for a stream a test or an embedding program put in its
    place, or one with no descriptor: those are left alone."""
    if stream is None or stream is not original:
        return None
    try:
        fd = stream.fileno()
        stream.flush()
    except (AttributeError, OSError, ValueError):
        return None
    return int(fd)


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """Put a :class:`_Dropping` under the process's own ``sys.stderr`` while a command
    runs (a stream a test or an embedding program put in its place is left alone)."""
    err = sys.stderr
    fd = own_fd(err, sys.__stderr__)
    if fd is None:
        yield
        return
    wrapper = io.TextIOWrapper(
        io.BufferedWriter(_Dropping(fd)),
        encoding=err.encoding,
        errors=err.errors,
        line_buffering=True,
    )
    sys.stderr = wrapper
    try:
        yield
    finally:
        sys.stderr = err
        with contextlib.suppress(OSError, ValueError):
            wrapper.flush()
