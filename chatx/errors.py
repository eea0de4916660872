"""Exit codes and the exception tree every command funnels through."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Process exit codes (diff(1) style: 0 same/ok, 1 differs/violations, 2 trouble)."""

    OK = 0
    FAILED = 1  # done, but not as asked: --check stale, violations, --strict loss
    ERROR = 2  # bad input or usage
    INTERNAL = 70  # a bug in chatx (sysexits EX_SOFTWARE); --traceback shows where
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
    TERMINATED = 143  # SIGTERM, as shells report it (128 + 15)


class ChatxError(Exception):
    """Base of every error chatx reports to the user without a traceback."""

    exit_status = ExitStatus.ERROR


class UsageError(ChatxError, ValueError):
    """The command line asks for something impossible (unknown format, bad option mix);
    from the library, a ValueError like any argument that cannot mean anything."""


class InputError(ChatxError):
    """Input that cannot be read as a stream; carries where it happened."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        offset: int | None = None,
        expected: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.offset = offset
        self.expected = expected

    def located(self, file: str | None = None) -> InputError:
        """Return this error with a file name filled in, if it had none."""
        if self.file is None and file is not None:
            self.file = file
        return self

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.message}"
        if self.offset is not None:
            text += f" (byte {self.offset})"
        if self.expected:
            text += f" (expected {self.expected})"
        return text


class NotRepresentable(ChatxError):
    """--strict: the target format has no place for something the source says."""

    exit_status = ExitStatus.FAILED
