"""``chatx convert``: transcode a stream from one format to another.

One input to stdout or ``-o`` is converted as it arrives (a live pipe sees each event at
once). With ``--out-dir`` (or ``--check``) many inputs go through
:mod:`chatx.cli.convert_many` and :mod:`chatx.outdir`: one output per input per format,
a progress bar on a terminal, a summary line.
"""

# No ``from __future__ import annotations``: the options' declarations below are read by
# typer from a function made inside :func:`_typed`, whose annotations must be objects.
import errno
import os
import stat
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal

import orjson

from chatx.cli.output import OutputError, open_output, refuse_input_as_output
from chatx.codecs.base import EncodeOptions
from chatx.drive import NoteReporter, pump
from chatx.errors import ExitStatus, InputError, UsageError
from chatx.notes import Notes

if TYPE_CHECKING:  # pathlib loads when a path option is given: 6 ms of a start
    from pathlib import Path

# --reasoning: the words it takes, as EncodeOptions types them.
_REASONING: dict[str, Literal["summary", "text"]] = {"summary": "summary", "text": "text"}


def __getattr__(name: str) -> Any:
    """``convert``, the command as typer reads it, made when the typer app is built
    (``--help``, a command line :func:`quick` leaves to click): a usual ``convert``
    loads neither typer nor click."""
    if name != "convert":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    command = globals()["convert"] = _typed()
    return command


def _typed() -> Callable[..., int]:
    from pathlib import Path

    import typer

    from chatx.cli.formats import (
        InputContainer,
        InputFiles,
        SourceFormat,
        complete_format,
        formats_option,
    )

    def convert(
        files: InputFiles = None,
        to: Annotated[
            list[str] | None,
            typer.Option(
                "--to",
                "-t",
                help="Target format; with --out-dir several: repeat --to or separate with "
                "commas ('all' for every format).  [default: responses-event]",
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
        output: Annotated[
            str, typer.Option("-o", "--output", help="Output file, - for stdout.")
        ] = "-",
        out_dir: Annotated[
            Path | None,
            typer.Option(
                "--out-dir",
                "-d",
                help="Write one output per input per format into DIR, named "
                "<stem>.<format>.<container> (a directory's captures keep their relative "
                "path); a file is rewritten only when its bytes change.",
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
            typer.Option(
                "--jobs", "-j", help="With --out-dir: convert in N processes.", metavar="N"
            ),
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
            bool,
            typer.Option("--finish", help="Write an ending when the input stops without one."),
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
                "--request",
                help="The original request body (JSON), to fill the Responses envelope.",
            ),
        ] = None,
        quiet: Annotated[
            bool,
            typer.Option("--quiet", "-q", help="Do not print notes (nor the --out-dir summary)."),
        ] = False,
    ) -> int:
        return run(
            files, to, src, container, out_container, output, out_dir, check, jobs, choice,
            strict, finish, reasoning, reasoning_field, request, quiet,
        )  # fmt: skip

    return convert


# -- the usual command lines, read without click ------------------------------------------
#
# A convert is mostly a short command line a script writes: reading it with click costs
# typer and click's import (20 ms of a 80 ms start). quick() reads the lines whose reading
# is plain (each option spelt out, its value in the next argument or after "=", a value
# click takes as it is) into what typer would pass; any other line (--help, "--", joined
# short options, a value that starts with "-", a number click would read otherwise, an
# unknown format, an option it does not know) is left to click, which then says what it
# says of it. tests/cli/test_quick.py holds the two readings alike, line by line.

# Each option's spellings, its parameter, and what it takes: a string, a number, a path,
# a format (checked as --from and --to are, at once), several (--to) or nothing (a flag).
_QUICK_OPTIONS = {
    ("--to", "-t"): ("to", "formats"),
    ("--from", "-f"): ("src", "format"),
    ("--container",): ("container", "str"),
    ("--out-container",): ("out_container", "str"),
    ("-o", "--output"): ("output", "str"),
    ("--out-dir", "-d"): ("out_dir", "path"),
    ("--check",): ("check", "flag"),
    ("--jobs", "-j"): ("jobs", "int"),
    ("--choice",): ("choice", "int"),
    ("--strict",): ("strict", "flag"),
    ("--finish",): ("finish", "flag"),
    ("--reasoning",): ("reasoning", "str"),
    ("--reasoning-field",): ("reasoning_field", "str"),
    ("--request",): ("request", "path"),
    ("--quiet", "-q"): ("quiet", "flag"),
}
_QUICK = {spelling: what for names, what in _QUICK_OPTIONS.items() for spelling in names}


def quick(args: list[str]) -> Callable[[], int] | None:
    """``convert ARGS`` read as click reads them, ready to run; None when click is to read
    them (above)."""
    files: list[str] = []
    params: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            files.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        what = _QUICK.get(name)
        if what is None:
            return None
        key, kind = what
        if kind == "flag":
            if equals:
                return None
            params[key] = True
            continue
        if not equals:
            following = next(rest, None)
            if following is None or following.startswith("-") and following != "-":
                return None
            value = following
        read = _quick_value(kind, value)
        if read is None:
            return None
        if kind == "formats":
            params.setdefault(key, []).append(read)
        else:
            params[key] = read
    return partial(run, files or None, **params)


def _quick_value(kind: str, value: str) -> Any:
    """``value`` as click gives it to the command, or None when click is to read it."""
    if kind == "str":
        return value
    if kind == "path":
        # typer's paths are click's, readable=True: an existing path one may not read is
        # refused there, in click's words
        from pathlib import Path

        try:
            os.stat(value)
        except OSError:
            return Path(value)
        except ValueError:  # a NUL in it
            return None
        return Path(value) if os.access(value, os.R_OK) else None
    if kind == "int":
        return int(value) if value.isascii() and value.isdigit() else None
    from chatx import codecs

    if kind == "format":
        return _known(codecs, value)
    parts = [part.strip() for part in value.split(",")]
    known = all(part in ("", "all") or _known(codecs, part) for part in parts)
    return value if known else None


def _known(codecs: Any, name: str) -> str | None:
    """The codec name ``name`` stands for, or None (click then says what is wrong)."""
    try:
        return str(codecs.get(name).name)
    except UsageError:
        return None


def run(
    files: list[str] | None = None,
    to: list[str] | None = None,
    src: str | None = None,
    container: str | None = None,
    out_container: str | None = None,
    output: str = "-",
    out_dir: "Path | None" = None,
    check: bool = False,
    jobs: int = 1,
    choice: int | None = None,
    strict: bool = False,
    finish: bool = False,
    reasoning: str = "summary",
    reasoning_field: str | None = None,
    request: "Path | None" = None,
    quiet: bool = False,
) -> int:
    """The command: what typer passes, or :func:`quick` reads."""
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
        from chatx.cli.convert_many import plan, run_many, say

        passed: list[str] = []
        planned = plan(files, formats, out_dir, output, out_container, passed)
        if not quiet:
            for message in passed:
                say("warning", message)
        return run_many(*planned, settings, check=check, workers=jobs, quiet=quiet)
    if len(files) > 1 or len(formats) > 1 or _is_dir(files[0]):
        raise UsageError(
            "several inputs, several --to formats or a directory need --out-dir DIR "
            "(one output per input per format)"
        )
    return convert_one(files[0], formats[0], output, settings, quiet)


def _is_dir(name: str) -> bool:
    """``Path(name).is_dir()`` as Python 3.11 to 3.13 answer it, without pathlib: False
    for a path that is missing, loops or goes through a file, or holds a NUL; any other
    error (a directory one may not search) raised, to be said as before."""
    try:
        return stat.S_ISDIR(os.stat(name or ".").st_mode)  # Path("") is "."
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            raise
        return False
    except ValueError:
        return False


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
    try:
        transcoder = settings.recorded(picked.request, picked.format).transcoder(to, name, notes)
    except BaseException:  # a --choice the Transcoder refuses: the input is closed
        picked.source.close()
        raise
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


def _load_request(path: "Path | None") -> dict[str, Any] | None:
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
