"""``chatx validate``: check streams against their format's rules, linter style.

Findings go to stdout (``FILE:LINE: RULE-ID severity message``, or one JSON object per
line with ``--output json``) as soon as they are known, so a live pipe is checked live;
errors about unreadable input go to stderr. Exit 0: no errors (warnings allowed unless
``--strict``) · 1: violations · 2: input that cannot be read as a stream.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from chatx.cli.formats import InputContainer, InputFiles, format_choice
from chatx.errors import ExitStatus, InputError, UsageError
from chatx.record import Record
from chatx.textsafe import escape_text


def validate(
    files: InputFiles = None,
    fmt: Annotated[
        str | None,
        format_choice("--format", "--from", "-f", help="Stream format (detected when not given)."),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Count warnings as violations.")] = False,
    output: Annotated[
        str,
        typer.Option(
            "--output",
            help="text (FILE:LINE: RULE severity message) or json (one object "
            "per finding per line).",
        ),
    ] = "text",
    schema: Annotated[
        bool,
        typer.Option(
            "--schema",
            help="Also check each event against the openai SDK types (slower "
            "start: imports openai).",
        ),
    ] = False,
    container: InputContainer = None,
) -> int:
    from chatx import containers
    from chatx.cli import error, reading_stdin

    if output not in ("text", "json"):
        raise UsageError("--output takes 'text' or 'json'")
    if container is not None:
        containers.get(container)  # a UsageError names the known ones
    from chatx.reading.finding import NoStreams, each

    status = ExitStatus.OK
    for spec, walked in _inputs(files or ["-"]):
        if spec == "-":
            reading_stdin(fmt)
        # A file of recorded exchanges (HAR, cassette…) gives each stream it holds, FILE#N.
        for file, name in each(spec):
            try:
                if isinstance(file, str) and os.path.isdir(file):  # one with no captures
                    from chatx.outdir.walking import NO_CAPTURES

                    raise InputError(NO_CAPTURES, file=name)
                result = check_file(
                    file, name, fmt=fmt, container=container, schema=schema, printer=Printer(output)
                )
            except NoStreams as exc:  # beside others in a folder, a file of no streams is said
                if not walked:
                    error(str(exc.located(name)))
                    status = max(status, ExitStatus.ERROR)
                else:
                    sys.stderr.write(f"chatx: warning: {escape_text(str(exc))}: skipped\n")
                continue
            except InputError as exc:
                error(str(exc.located(name)))
                status = max(status, ExitStatus.ERROR)
                continue
            if output == "text":
                sys.stdout.write(result.summary() + "\n")
            if result.errors or (strict and result.warnings):
                status = max(status, ExitStatus.FAILED)
    return int(status)


def _inputs(files: list[str]) -> Iterator[tuple[str, bool]]:
    """Each file to check, and whether a walk found it; a directory gives the captures
    under it, found by the walk a many-file convert makes (or itself, when it holds none)."""
    for file in files:
        if file == "-" or not os.path.isdir(file):
            yield file, False
            continue
        from chatx.outdir.walking import walk

        passed: list[str] = []
        found = walk(Path(file), passed)
        for message in passed:  # a FIFO would wait for a writer forever
            sys.stderr.write(f"chatx: warning: {escape_text(message)}\n")
        yield from [(str(path), True) for path in found] or [(file, False)]


@dataclass
class FileResult:
    """What one file's check found, for the summary line and the exit status."""

    name: str
    format: str
    container: str
    records: int = 0
    errors: int = 0
    warnings: int = 0

    def summary(self) -> str:
        found = (
            ", ".join(
                f"{n} {word}{'s' if n != 1 else ''}"
                for n, word in ((self.errors, "error"), (self.warnings, "warning"))
                if n
            )
            or "ok"
        )
        return (
            f"{escape_text(self.name)}: {found} ({self.format}, {self.container}, "
            f"{self.records} records)"
        )


class Printer:
    """Writes findings as they are found: text lines or JSON objects, escaped."""

    def __init__(self, output: str) -> None:
        self.output = output

    def write(self, findings: list[Any]) -> None:
        if not findings:
            return
        if self.output == "json":
            text = b"".join(_json_line(f.as_dict()) for f in findings).decode()
        else:
            text = "".join(
                f"{escape_text(f.file)}:{f.line}: {f.rule} {f.severity} {escape_text(f.message)}\n"
                for f in findings
            )
        sys.stdout.write(text)
        sys.stdout.flush()


def _json_line(finding: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(finding) + b"\n"
    except TypeError:  # a file name that is not UTF-8: its bytes as \xNN
        from chatx.textsafe import json_safe

        return orjson.dumps(json_safe(finding)) + b"\n"


def check_file(
    file: Any, name: str, *, fmt: str | None, container: str | None, schema: bool, printer: Printer
) -> FileResult:
    """Check one file (``-`` is stdin; or an input :func:`chatx.reading.finding.each` opened),
    printing findings as they come."""
    from chatx.reading.framing import open_groups
    from chatx.validation import check_groups, make_checker

    ignored: list[tuple[int, str]] = []  # lines the reader ignored: STR002 findings
    container, groups, found, reader = open_groups(file, container, ignored)
    fmt = fmt or found
    if fmt is None:
        fmt, groups = _detect(groups, name)
    result = FileResult(name, fmt, container)
    shown = _Shown(printer, result)
    checker = make_checker(fmt, file=name, container=container, schema=schema)
    check_groups(checker, shown.count(groups), ignored, shown.found, reader)
    if shown.parsed == 0:
        _not_a_stream(shown.first_bad, name)
    return result


class _Shown:
    """Counts the records and prints the findings, held until one record parses: until
    then the input may not be a stream at all."""

    def __init__(self, printer: Printer, result: FileResult) -> None:
        self.printer = printer
        self.result = result
        self.parsed = 0
        self.first_bad: Record | None = None
        self.held: list[Any] = []

    def count(self, groups: Iterator[list[Record]]) -> Iterator[list[Record]]:
        for group in groups:
            self.result.records += len(group)
            if not self.parsed:  # once one has, the rest need only be counted
                for record in group:
                    if record.error is None:
                        self.parsed += 1
                    elif self.first_bad is None:
                        self.first_bad = record
            yield group

    def found(self, findings: list[Any]) -> None:
        self.held += findings
        if self.parsed and self.held:
            findings, self.held = self.held, []
            self.printer.write(findings)
            for finding in findings:
                if finding.severity == "E":
                    self.result.errors += 1
                else:
                    self.result.warnings += 1


def _not_a_stream(first_bad: Record | None, name: str) -> None:
    if first_bad is None:
        raise InputError(
            "no records in the input", file=name, line=1, expected="at least one event"
        )
    raise InputError(
        f"not a stream: no record is valid JSON ({first_bad.error})",
        file=name,
        line=first_bad.line,
        expected="JSON payloads",
    )


def _detect(groups: Iterator[list[Record]], name: str) -> tuple[str, Iterator[list[Record]]]:
    """The format, told as every command tells it, and the records read to tell it
    again."""
    from chatx import codecs
    from chatx.validation import sniff_groups

    try:
        return sniff_groups(groups)
    except InputError as exc:
        exc.expected = f"one of {', '.join(codecs.names())} (or pass --format)"
        raise exc.located(name) from None
