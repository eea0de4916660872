"""``chatx convert``: transcode a stream from one format to another."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import orjson
import typer

from chatx.codecs.base import EncodeOptions
from chatx.errors import ExitStatus, InputError, UsageError
from chatx.notes import Notes
from chatx.textsafe import escape_text

# One read: what a pipe has (a live stream sees each event at once), or up to 1 MiB of a
# file (files are read and written in large blocks).
_BLOCK = 1 << 20


def register(app: typer.Typer) -> None:
    app.command("convert", help="Convert a stream to another format (stdin to stdout by default).")(
        convert
    )


def convert(
    file: Annotated[str, typer.Argument(help="Input file, or - for stdin.")] = "-",
    to: Annotated[str, typer.Option("--to", "-t", help="Target format.")] = "responses-event",
    src: Annotated[
        str | None, typer.Option("--from", "-f", help="Source format (detected when not given).")
    ] = None,
    container: Annotated[
        str | None,
        typer.Option(
            "--container", help="Input container: sse, jsonl or json (detected when not given)."
        ),
    ] = None,
    out_container: Annotated[
        str | None,
        typer.Option(
            "--out-container", help="Output container (default: the target format's own)."
        ),
    ] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="Output file, - for stdout.")] = "-",
    choice: Annotated[
        int | None,
        typer.Option("--choice", help="Keep this choice of a several-choice chat stream."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Stop at the first record that cannot be decoded, repaired or represented.",
        ),
    ] = False,
    finish: Annotated[
        bool, typer.Option("--finish", help="Write an ending when the input stops without one.")
    ] = False,
    reasoning: Annotated[
        str,
        typer.Option(
            "--reasoning",
            help="Responses output: reasoning as 'summary' "
            "(reasoning_summary_*) or 'text' (reasoning_text.*).",
        ),
    ] = "summary",
    reasoning_field: Annotated[
        str | None,
        typer.Option(
            "--reasoning-field",
            help="Chat output: delta field for reasoning, 'reasoning_content' or 'reasoning'.",
        ),
    ] = None,
    request: Annotated[
        Path | None,
        typer.Option(
            "--request", help="The original request body (JSON), to fill the Responses envelope."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not print notes.")] = False,
) -> int:
    from chatx.pipeline import Transcoder

    if reasoning not in ("summary", "text"):
        raise UsageError("--reasoning takes 'summary' or 'text'")
    if reasoning_field not in (None, "reasoning", "reasoning_content"):
        raise UsageError("--reasoning-field takes 'reasoning' or 'reasoning_content'")
    options = EncodeOptions(
        reasoning=reasoning,
        reasoning_field=reasoning_field,  # type: ignore[arg-type]
        request=_load_request(request),
        finish=finish,
    )
    name = "<stdin>" if file == "-" else file
    notes = Notes()
    transcoder = Transcoder(
        to,
        src=src,
        container=container,
        out_container=out_container,
        options=options,
        choice=choice,
        strict=strict,
        name=name,
        notes=notes,
    )
    reporter = NoteReporter(notes, name, quiet)
    with _open_in(file) as inp, _open_out(output) as out:
        try:
            pump(inp, out, transcoder, reporter)
        except InputError as exc:
            reporter.flush()
            raise exc.located(name) from None
    reporter.flush(final=True)
    return ExitStatus.ERROR if transcoder.skipped else ExitStatus.OK


def pump(inp: BinaryIO, out: BinaryIO, transcoder: Any, reporter: NoteReporter) -> None:
    """Read, convert, write and flush until the input ends."""
    read = getattr(inp, "read1", inp.read)
    while True:
        chunk = read(_BLOCK)
        if not chunk:
            break
        data = transcoder.feed(chunk)
        if data:
            out.write(data)
            out.flush()
        reporter.flush()
    data = transcoder.finish()
    if data:
        out.write(data)
    out.flush()


class NoteReporter:
    """Prints notes on stderr as they come, escaped; lost fields once, at the end."""

    def __init__(self, notes: Notes, name: str, quiet: bool) -> None:
        self.notes = notes
        self.name = name
        self.quiet = quiet
        self.shown = 0

    def flush(self, final: bool = False) -> None:
        items = self.notes.summary() if final else self.notes.items
        if not self.quiet:
            for note in items[self.shown :]:
                where = f"{self.name}:{note.line}" if note.line else self.name
                sys.stderr.write(
                    f"chatx: {note.kind}: {escape_text(where)}: {escape_text(note.message)}\n"
                )
        self.shown = len(items)


def _load_request(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        body = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"request body is not JSON: {exc}", file=str(path)) from None
    if not isinstance(body, dict):
        raise InputError("request body must be a JSON object", file=str(path))
    return body


class _Std:
    """A context manager around a standard stream that does not close it."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def __enter__(self) -> BinaryIO:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        return None


def _open_in(file: str) -> Any:
    if file == "-":
        return _Std(sys.stdin.buffer)
    try:
        return open(file, "rb")  # noqa: SIM115 - closed by the caller's with
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), file=file) from None


def _open_out(output: str) -> Any:
    if output == "-":
        return _Std(sys.stdout.buffer)
    return open(output, "wb")  # noqa: SIM115
