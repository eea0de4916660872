"""``chatx convert``: transcode a stream from one format to another.

One input to stdout or ``-o`` is converted as it arrives (a live pipe sees each event at
once). With ``--out-dir`` (or ``--check``) many inputs go through :mod:`chatx.outdir`:
one output per input per format, a progress bar on a terminal, a summary line.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
import typer

from chatx.cli.formats import (
    InputContainer,
    InputFiles,
    SourceFormat,
    complete_format,
    formats_option,
)
from chatx.cli.output import OutputError, open_output, refuse_input_as_output
from chatx.codecs.base import EncodeOptions
from chatx.drive import NoteReporter, pump
from chatx.errors import ExitStatus, InputError, UsageError
from chatx.notes import Notes
from chatx.textsafe import escape_text

# --reasoning: the words it takes, as EncodeOptions types them.
_REASONING: dict[str, Literal["summary", "text"]] = {"summary": "summary", "text": "text"}


def convert(
    files: InputFiles = None,
    to: Annotated[
        list[str] | None,
        typer.Option(
            "--to",
            "-t",
            help="Target format; with --out-dir several: repeat --to or separate with commas "
            "('all' for every format).  [default: responses-event]",
            show_default=False,
            metavar="FORMAT",
            callback=formats_option,
            autocompletion=complete_format,
        ),
    ] = None,
    src: SourceFormat = None,
    container: InputContainer = None,
    out_container: Annotated[
        str | None,
        typer.Option(
            "--out-container", help="Output container (default: the target format's own)."
        ),
    ] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="Output file, - for stdout.")] = "-",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            "-d",
            help="Write one output per input per format into DIR, named "
            "<stem>.<format>.<container> (a directory's captures keep their relative path); "
            "a file is rewritten only when its bytes change.",
            metavar="DIR",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; exit 1 listing the outputs (in --out-dir or -o) that are "
            "stale or missing.",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option("--jobs", "-j", help="With --out-dir: convert in N processes.", metavar="N"),
    ] = 1,
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
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Do not print notes (nor the --out-dir summary).")
    ] = False,
) -> int:
    from chatx.settings import Settings, targets

    mode = _REASONING.get(reasoning)
    if mode is None:
        raise UsageError("--reasoning takes 'summary' or 'text'")
    if reasoning_field not in (None, "reasoning", "reasoning_content"):
        raise UsageError("--reasoning-field takes 'reasoning' or 'reasoning_content'")
    files = files or ["-"]
    formats = targets(to or ["responses-event"])
    options = EncodeOptions(
        reasoning=mode,
        reasoning_field=reasoning_field,
        request=_load_request(request),
        finish=finish,
    )
    settings = Settings(src, container, out_container, options, choice, strict)
    if out_dir is not None or check:
        passed: list[str] = []
        plan = _plan(files, formats, out_dir, output, out_container, passed)
        if not quiet:
            for message in passed:
                _say("warning", message)
        return run_many(*plan, settings, check=check, workers=jobs, quiet=quiet)
    if len(files) > 1 or len(formats) > 1 or Path(files[0]).is_dir():
        raise UsageError(
            "several inputs, several --to formats or a directory need --out-dir DIR "
            "(one output per input per format)"
        )
    return convert_one(files[0], formats[0], output, settings, quiet)


def convert_one(file: str, to: str, output: str, settings: Any, quiet: bool) -> int:
    """One stream, stdin or a file, to stdout or ``-o``: written as it is converted.
    Compressed input is read decompressed; a file of recorded exchanges gives the stream
    ``FILE#N`` names (or its only one), with the request recorded beside it."""
    from chatx.reading import finding, opening

    address = opening.parse(file)
    refuse_input_as_output(address.file, output)
    if file == "-":
        from chatx.cli import reading_stdin

        reading_stdin(settings.src)
    picked = finding.pick(address)
    name = picked.name
    notes = Notes()
    picked.say_skipped(notes)  # exchanges whose bodies could not be decoded
    transcoder = settings.recorded(picked.request).transcoder(to, name, notes)
    reporter = NoteReporter(notes, name, quiet)
    with picked.reading() as inp, open_output(output) as out:
        try:
            pump(inp, out, transcoder, reporter)
        except InputError as exc:
            reporter.flush()
            raise exc.located(name) from None
        if (transcoder.skipped or picked.skipped) and getattr(out, "replaces", False):
            # A file is replaced only by a run that ends well (exit 0 or 1): stdout has
            # it all the same. An exchange of the file that cannot be decoded ends in 2.
            reporter.flush(final=True)
            what = "records were" if transcoder.skipped else "exchanges were"
            raise OutputError(f"{output}: not written, since {what} skipped")
    reporter.flush(final=True)
    return ExitStatus.ERROR if transcoder.skipped or picked.skipped else ExitStatus.OK


def _plan(
    files: list[str],
    formats: list[str],
    out_dir: Path | None,
    output: str,
    out_container: str | None,
    passed: list[str],
) -> tuple[list[Any], list[str]]:
    """The jobs of a many-file run (``--out-dir``) or of ``-o FILE --check``; what a
    walk passed over (a FIFO…) in ``passed``."""
    from chatx.outdir import planning

    if "-" in files:
        raise UsageError("--out-dir and --check read files and directories, not stdin (-)")
    if out_dir is not None:
        if output != "-":
            raise UsageError("-o and --out-dir do not go together: -o names one output file")
        return planning.plan(files, formats, out_dir, out_container, passed)
    if output == "-" or len(files) > 1 or len(formats) > 1 or Path(files[0]).is_dir():
        raise UsageError("--check compares with --out-dir DIR, or with -o FILE for one input")
    from chatx.reading import finding, opening

    address = opening.parse(files[0])
    if not Path(address.file).is_file():
        return [], [f"{files[0]}: {os.strerror(errno.ENOENT)}"]
    with finding.pick(address) as picked:  # FILE#N, or the only stream a file holds
        index = picked.stream.index if picked.stream is not None else None
    return [
        planning.Job(Path(address.file), picked.name, formats[0], Path(output), None, index)
    ], []


def run_many(
    jobs: list[Any],
    problems: list[str],
    settings: Any,
    *,
    check: bool,
    workers: int,
    quiet: bool,
) -> int:
    """Convert (or check) every job; say what happened on stderr; list stale files."""
    from chatx.outdir import running

    if workers < 1:
        raise UsageError("-j takes a number of processes, 1 or more")
    tally = running.Tally()
    for problem in problems:
        _say("error", problem)
        tally.problem()
    several = len({job.target for job in jobs}) > 1
    stale = []
    outcomes = running.run(jobs, settings, check=check, workers=workers)
    with _progress(len(jobs)) as progress:
        for outcome in outcomes:
            tally.add(outcome)
            _report(outcome, several, quiet, progress)
            if outcome.status in ("stale", "missing"):
                stale.append(outcome)
    for outcome in stale:  # data, for CI logs and scripts: one "stale PATH" per line
        sys.stdout.write(f"{outcome.status} {escape_text(str(outcome.job.output))}\n")
    if not quiet:
        _say(None, tally.summary(check))
    return tally.exit_status


def _report(outcome: Any, several: bool, quiet: bool, progress: Any) -> None:
    to = f" (to {outcome.job.target})" if several else ""
    if not quiet:
        for note in outcome.notes:
            where = f"{outcome.job.name}:{note.line}" if note.line else outcome.job.name
            progress.say(note.kind, f"{where}: {note.message}{to}")
    if outcome.error is not None:
        progress.say("error", outcome.error + to)
    progress.advance()


def _say(kind: str | None, message: str) -> None:
    prefix = f"chatx: {kind}: " if kind else "chatx: "
    sys.stderr.write(prefix + escape_text(message) + "\n")


class _NoProgress:
    """No progress bar: messages go straight to stderr."""

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def say(self, kind: str | None, message: str) -> None:
        _say(kind, message)

    def advance(self) -> None:
        return None


class _Bar(_NoProgress):
    """A rich progress bar on stderr; messages are printed above it."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        console = Console(stderr=True, markup=False, highlight=False, emoji=False)
        self.progress = Progress(
            "converting",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.progress.add_task("converting", total=total)

    def __enter__(self) -> _Bar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def say(self, kind: str | None, message: str) -> None:
        prefix = f"chatx: {kind}: " if kind else "chatx: "
        self.progress.console.print(prefix + escape_text(message), soft_wrap=True)

    def advance(self) -> None:
        self.progress.advance(self.task)


def _progress(total: int) -> _NoProgress:
    """A bar for a multi-file run when stderr is a terminal; silent otherwise."""
    if total > 1 and sys.stderr.isatty():
        return _Bar(total)
    return _NoProgress()


def _load_request(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    from chatx.containers.payload import request_json

    try:
        body = request_json(path.read_bytes())  # nested past MAX_DEPTH: refused too
    except orjson.JSONDecodeError as exc:
        raise InputError(f"request body is not JSON: {exc}", file=str(path)) from None
    if not isinstance(body, dict):
        raise InputError("request body must be a JSON object", file=str(path))
    return body
